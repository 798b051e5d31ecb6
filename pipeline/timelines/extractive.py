"""The ``extractive`` timeline of a complex event: no model, the documents' own words.

Each document gives its title, dated by its publish day, and every sentence of its lead
that names a date the sentence's event can be placed on: an explicit day ("On 7 September
2023", "on Wednesday", resolved against the publish day), month ("in March 2024") or year
("in 1998"). dateparser finds the dates; its matches are kept only when they name a day,
month or year unambiguously and lie on or before the publish day (a news story's future is
not an event). Texts repeated across documents are kept once. The atomic events' subject,
event type, object and location are GDELT's coding of the document's main quad (its
countries, its CAMEO relation, its most frequent action place), not read from the sentence.
"""

from __future__ import annotations

import re
from datetime import datetime

from dateparser.search import search_dates

from pipeline.timelines import text_key
from pipeline.timelines.complex_events import ComplexEvent

METHOD = "extractive"
PROMPT_VERSION = "extractive-v1"  # the rules above; bump it when they change

_MONTH = (r"jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|"
          r"sep(t(ember)?)?|oct(ober)?|nov(ember)?|dec(ember)?")  # fmt: skip
_DAY_WORDS = re.compile(
    r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|today)\b", re.I
)
_MONTH_DAY = re.compile(rf"\b(\d{{1,2}}\s+({_MONTH})\b|({_MONTH})\.?\s+\d{{1,2}}\b)", re.I)
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+\d{{4}}\b", re.I)
_YEAR = re.compile(r"\b(1[89]|20)\d{2}\b")
_DIGIT = re.compile(r"\d")
# No sentence splitter ships with our dependencies, and a lead is a few sentences of news
# prose: a stop, question or exclamation mark followed by a capital or a quote ends one.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"“A-Z])")


def precision(phrase: str) -> str | None:
    """How precisely a date phrase names its date: "day", "month", "year" or None."""
    if _DAY_WORDS.search(phrase) or _MONTH_DAY.search(phrase):
        return "day"
    if _MONTH_YEAR.search(phrase):
        return "month"
    return "year" if _YEAR.search(phrase) else None


def sentence_date(sentence: str, published: datetime) -> str | None:
    """The first date of ``sentence`` it can be placed on, as yyyy, yyyy-MM or yyyy-MM-dd."""
    if not (_DIGIT.search(sentence) or _DAY_WORDS.search(sentence)):
        return None  # no phrase precision() accepts: spare dateparser (ms a sentence)
    settings = {"RELATIVE_BASE": published, "PREFER_DATES_FROM": "past"}
    for phrase, when in search_dates(sentence, languages=["en"], settings=settings) or []:
        kind = precision(phrase)
        if kind and when.date() <= published.date():
            return when.strftime({"day": "%Y-%m-%d", "month": "%Y-%m", "year": "%Y"}[kind])
    return None


def timeline(event: ComplexEvent) -> list[dict]:
    """The atomic events, in chronological order (coarser dates first within a period)."""
    seen: set[str] = set()
    rows: list[tuple[tuple, dict]] = []
    for order, doc in enumerate(event.documents):
        published = datetime.combine(doc["date"], datetime.min.time())
        found = [(doc["date"].isoformat(), doc["title"])]
        for sentence in _SENTENCE_END.split((doc["lead"] or "").strip()):
            when = sentence_date(sentence, published)
            if when:
                found.append((when, " ".join(sentence.split())))
        for when, text in found:
            key = text_key(text)
            if not key or key in seen:
                continue
            seen.add(key)
            # A coarse date sorts before the finer dates of its period: "2023" < "2023-05-01".
            place = (when[:4], when[5:7] or "00", when[8:10] or "00", order, len(rows))
            rows.append((place, {
                "date": when, "text": text, "subject": doc["subject"],
                "event_type": doc["event_type"], "object": doc["object"],
                "location": doc["location"], "source_doc_id": doc["doc_id"],
            }))  # fmt: skip
    return [row for _, row in sorted(rows, key=lambda item: item[0])]
