"""Rule 6, grounding: an atomic event a model wrote is kept only where its source document
says it. Applied by the timelines stage to every ``llm`` event (after rule 2, before rule 3)
and re-checked by ``release verify`` from the release's ``news`` texts; the ``extractive``
method's events are its documents' own sentences and dates, so the rule asks nothing of
them.

An event is grounded when all three hold, in this order (the first that fails names the
drop):

- ``echoes-prompt``: it says something beyond the prompt's own scaffolding. Its content words
  (:func:`gdelt_forecast.contract.similarity.words`) less the words of the prompt
  templates that wrote it (header lines, field names, instructions, with the filled-in
  fields left out) and less bare numbers must not be empty: "The news release time:
  2025-08-02" is the prompt's header read back, not an event.
- ``text-not-in-document``: the document holds its words. Of its content words less the
  scaffolding's (a word the prompt showed is no evidence that the document says it), the
  share found among the words of the document's title and text reaches ``THRESHOLD``, the
  same token containment as the near-duplicate measure.
- ``date-not-in-document``: its date (if any) is the document's first-seen date or a date the
  document states, at the precision the event gives it: the day, month or year of a date
  phrase the extractive method recognises (:func:`gdelt_forecast.contract.text.dates`,
  relative ones such as "on Wednesday" resolved against the first-seen day), or a coarser
  form of one (a document that says "6 August 2025" states 2025-08 and 2025 too).

A model-written event's arguments (subject, event type, object, location), which AQA and
MCAC questions and answers show, must pass the same text checks (a date-shaped one, the
date check); one that does not is set to null, the event kept. The generated parts of the
tasks are held to the same checks by the tasks' rule 7 (:mod:`gdelt_forecast.contract.leakage`).

THRESHOLD was chosen from measurement: docs/benchmarks.md, "Rule 6's threshold"
(``bench/llm/grounding.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, datetime
from functools import cached_property
from pathlib import Path

from gdelt_forecast.contract.similarity import words
from gdelt_forecast.contract.text import DATE, dates

RULE = "6-grounded"
VERSION = "grounding-v1"  # bump it when a check or the threshold changes
ECHOES_PROMPT = "echoes-prompt"
TEXT_NOT_IN_DOCUMENT = "text-not-in-document"
DATE_NOT_IN_DOCUMENT = "date-not-in-document"
REASONS = (ECHOES_PROMPT, TEXT_NOT_IN_DOCUMENT, DATE_NOT_IN_DOCUMENT)
ARGUMENTS = ("subject", "event_type", "object", "location")
THRESHOLD = 0.6
_PLACEHOLDER = re.compile(r"\{\w+\}")


def scaffolding(prompts: Path, fields: Iterable[str]) -> frozenset[str]:
    """The content words of the prompt templates in the folder ``prompts`` (one prompt
    version; their ``{placeholders}`` left out) and of the answer's field names
    (``event_type`` as "event type"). ValueError for a folder that does not exist: a
    prompt version this code does not have."""
    if not prompts.is_dir():
        raise ValueError(f"prompt version {prompts.name!r} is not one of this code's")
    templates = [p.read_text(encoding="utf-8") for p in sorted(prompts.glob("*.txt"))]
    text = " ".join(_PLACEHOLDER.sub(" ", t) for t in templates)
    return words(text + " " + " ".join(f.replace("_", " ") for f in fields))


class Document:
    """A source document as grounding reads it: its words and the dates it states, each
    worked out once, when first asked for."""

    def __init__(
        self, title: str | None, text: str | None, seen: date, stated: tuple[str, ...] = ()
    ):
        """``stated``: dates (yyyy, yyyy-MM, yyyy-MM-dd) known to be the document's beyond
        those its words state, e.g. an atomic event's own date."""
        self.title, self.text, self.seen, self.stated = title or "", text or "", seen, stated

    @cached_property
    def words(self) -> frozenset[str]:
        return words(self.title + "\n" + self.text)

    @cached_property
    def dates(self) -> frozenset[str]:
        """Every date the document states or was first seen on, with its coarser forms."""
        published = datetime.combine(self.seen, datetime.min.time())
        found = {self.seen.isoformat(), *self.stated}
        # Line by line: a date phrase never spans paragraphs, and dateparser reads a line
        # with no digit or weekday not at all.
        for line in (self.title + "\n" + self.text).splitlines():
            found.update(when for _, when in dates(line, published))
        return frozenset(form for when in found for form in (when, when[:7], when[:4]))


def support(text: str, document: Document, scaffold: frozenset[str]) -> float | None:
    """The share of ``text``'s content words beyond ``scaffold`` that ``document`` holds;
    None when it has none but numbers (an echo of the prompt)."""
    own = words(text) - scaffold
    if not any(not word.isdigit() for word in own):
        return None
    return len(own & document.words) / len(own)


def ungrounded(atom: dict, document: Document, scaffold: frozenset[str]) -> str | None:
    """Why ``atom`` (its ``text`` and ``date``) does not stand in ``document``, or None."""
    share = support(atom["text"], document, scaffold)
    if share is None:
        return ECHOES_PROMPT
    if share < THRESHOLD:
        return TEXT_NOT_IN_DOCUMENT
    if atom["date"] and atom["date"] not in document.dates:
        return DATE_NOT_IN_DOCUMENT
    return None


def unsaid(text: str, document: Document, scaffold: frozenset[str]) -> str | None:
    """Why a short text a model wrote (an event's argument, a question, an answer) does not
    stand in ``document``, or None: a date (yyyy, yyyy-MM, yyyy-MM-dd) must be one the
    document states, any other text must pass the event text's checks."""
    if DATE.fullmatch(text):
        return None if text in document.dates else DATE_NOT_IN_DOCUMENT
    return ungrounded({"text": text, "date": None}, document, scaffold)


def unsaid_arguments(atom: dict, document: Document, scaffold: frozenset[str]) -> list[str]:
    """The arguments of ``atom`` (subject, event type, object, location) that are set and do
    not stand in ``document``: the build sets them to null, ``release verify`` names them."""
    return [a for a in ARGUMENTS if atom.get(a) and unsaid(atom[a], document, scaffold)]
