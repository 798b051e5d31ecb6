"""The ``extractive`` timeline of a complex event: no model, the documents' own words.

Each document gives its title, dated by its publish day, and every sentence of its lead
that names a date the sentence's event can be placed on: an explicit day ("On 7 September
2023", "on Wednesday", resolved against the publish day), month ("in March 2024") or year
("in 1998"). The lead is split into lines first (the title is its own line, never glued
onto the first sentence, and a line that repeats the title is dropped), then into sentences
by sentencex (Wikimedia's rule-based segmenter: "Nov. 6" or "U.S." ends no sentence).
Its date is the first one it names that places its event, not a noun
(:func:`gdelt_forecast.contract.text.sentence_date`: "on 7 September 2023", but not "the 2020
election"). A date after the publish day stays on the event: the timelines' rule 2
(:mod:`gdelt_forecast.contract.sound`) drops such a plan and counts it, for every method
alike, as rule 3 merges repeats. The atomic events' subject, event type, object and location
are GDELT's coding of the document's main quad (its countries, its CAMEO relation, its most
frequent action place), not read from the sentence.
"""

from __future__ import annotations

from datetime import datetime

from sentencex import segment

from gdelt_forecast.contract.text import sentence_date, text_key
from gdelt_forecast.timelines.complex_events import ComplexEvent

PROMPT_VERSION = "extractive-v2"  # the rules above; bump it when they change


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
