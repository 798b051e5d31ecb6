"""The ``extractive`` timeline of a complex event: no model, the documents' own words.

Each document gives its title, dated by its publish day, and every sentence of its lead
that names a date the sentence's event can be placed on: an explicit day ("On 7 September
2023", "on Wednesday", resolved against the publish day), month ("in March 2024") or year
("in 1998"). The lead is split into lines first (the title is its own line, never glued
onto the first sentence, and a line that repeats the title is dropped), then into sentences
by sentencex (Wikimedia's rule-based segmenter: "Nov. 6" or "U.S." ends no sentence).
dateparser finds the dates; a match is kept only when it names a day, month or year
unambiguously and does not qualify a noun: a determiner or a possessive before it ("the
2020 election", "a 2010 allegation", "the March 2019 agreement") makes it part of a noun
phrase, which says which election, not when the sentence's event happened. A date after
the publish day stays on the event: the timelines' rule 2 (:mod:`gdelt_forecast.timelines.sound`)
drops such a plan and counts it, for every method alike, as rule 3 merges repeats. The
atomic events' subject, event type, object and location are GDELT's coding of the
document's main quad (its countries, its CAMEO relation, its most frequent action place),
not read from the sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime

from dateparser.search import search_dates
from sentencex import segment

from gdelt_forecast.timelines import text_key
from gdelt_forecast.timelines.complex_events import ComplexEvent

METHOD = "extractive"
PROMPT_VERSION = "extractive-v2"  # the rules above; bump it when they change

_MONTH = (r"jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|"
          r"sep(t(ember)?)?|oct(ober)?|nov(ember)?|dec(ember)?")  # fmt: skip
_DAY_WORDS = re.compile(
    r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|today)\b", re.I
)
_MONTH_DAY = re.compile(rf"\b(\d{{1,2}}\s+({_MONTH})\b|({_MONTH})\.?\s+\d{{1,2}}\b)", re.I)
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+\d{{4}}\b", re.I)
_YEAR = re.compile(r"\b(1[89]|20)\d{2}\b")
_DIGIT = re.compile(r"\d")
_FORMATS = {"day": "%Y-%m-%d", "month": "%Y-%m", "year": "%Y"}
# Where a date phrase's date begins: its first number, month or weekday word.
_DATE_WORD = re.compile(rf"\d|\b({_MONTH})\b|{_DAY_WORDS.pattern}", re.I)
_WORD = re.compile(r"[\w'’]+")
# No tagger with a model can be installed offline, and the noun-phrase case needs only the
# word before the date: a determiner or a possessive ("Trump's 2016 campaign").
_DETERMINERS = frozenset(
    {
        "the",
        "a",
        "an",
        "this",
        "that",
        "these",
        "those",
        "its",
        "his",
        "her",
        "their",
        "our",
        "your",
        "my",
        "whose",
        "every",
        "each",
    }
)


def precision(phrase: str) -> str | None:
    """How precisely a date phrase names its date: "day", "month", "year" or None."""
    if _DAY_WORDS.search(phrase) or _MONTH_DAY.search(phrase):
        return "day"
    if _MONTH_YEAR.search(phrase):
        return "month"
    return "year" if _YEAR.search(phrase) else None


def qualifies_noun(sentence: str, phrase: str) -> bool:
    """Whether the date of ``phrase`` (a match in ``sentence``) stands after a determiner or
    a possessive, as in "the 2020 election": a noun's qualifier, not the sentence's date."""
    start = _DATE_WORD.search(phrase)
    if start is None:
        return False
    at = sentence.find(phrase)
    before = _WORD.findall((sentence[:at] if at >= 0 else "") + phrase[: start.start()])
    if not before:
        return False
    word = before[-1].lower()
    return word in _DETERMINERS or word.endswith(("'s", "’s"))


def dates(text: str, published: datetime) -> Iterator[tuple[str, str]]:
    """Each date phrase of ``text`` that names a day, month or year, with that date as
    yyyy-MM-dd, yyyy-MM or yyyy (relative ones, "on Wednesday", resolved against
    ``published``), in order."""
    if not (_DIGIT.search(text) or _DAY_WORDS.search(text)):
        return  # no phrase precision() accepts: spare dateparser (ms a sentence)
    settings = {"RELATIVE_BASE": published, "PREFER_DATES_FROM": "past"}
    for phrase, when in search_dates(text, languages=["en"], settings=settings) or []:
        if kind := precision(phrase):
            yield phrase, when.strftime(_FORMATS[kind])


def sentence_date(sentence: str, published: datetime) -> str | None:
    """The first date of ``sentence`` it can be placed on, as yyyy, yyyy-MM or yyyy-MM-dd."""
    return next(
        (when for phrase, when in dates(sentence, published)
         if not qualifies_noun(sentence, phrase)),
        None,
    )  # fmt: skip


def sentences(title: str | None, lead: str | None) -> list[str]:
    """The lead's sentences, line by line, without a line that repeats the title."""
    out = []
    for line in (lead or "").splitlines():
        line = " ".join(line.split())
        if line and text_key(line) != text_key(title):
            out += [s for s in (" ".join(s.split()) for s in segment("en", line)) if s]
    return out


def timeline(event: ComplexEvent) -> list[dict]:
    """The atomic events, in chronological order (coarser dates first within a period)."""
    rows: list[tuple[tuple, dict]] = []
    for order, doc in enumerate(event.documents):
        published = datetime.combine(doc["date"], datetime.min.time())
        found = [(doc["date"].isoformat(), " ".join((doc["title"] or "").split()))]
        for sentence in sentences(doc["title"], doc["lead"]):
            when = sentence_date(sentence, published)
            if when:
                found.append((when, sentence))
        for when, text in found:
            if not text_key(text):
                continue
            # A coarse date sorts before the finer dates of its period: "2023" < "2023-05-01".
            place = (when[:4], when[5:7] or "00", when[8:10] or "00", order, len(rows))
            rows.append(
                (
                    place,
                    {
                        "date": when,
                        "text": text,
                        "subject": doc["subject"],
                        "event_type": doc["event_type"],
                        "object": doc["object"],
                        "location": doc["location"],
                        "source_doc_id": doc["doc_id"],
                    },
                )
            )
    return [row for _, row in sorted(rows, key=lambda item: item[0])]
