"""The timelines' soundness rules, applied to every method's atomic events before they are
written (the tasks' rules, which build on these, are in :mod:`gdelt_forecast.contract.leakage`).

A document's availability date is the day GDELT first saw it (the warehouse's
``news.date``); every atomic event records its source document's as ``source_date``.

2. **No atomic event after its source.** An event whose date (read as the period it names)
   starts after its source's availability date is a plan or an expectation, not an event:
   it is dropped.
3. **One event once.** Events whose texts are near-duplicates
   (:mod:`gdelt_forecast.contract.similarity`) are one event: the one from the earliest
   available document is kept (within a document, the earliest in the timeline), with its
   date and source; the others are dropped.

6. **Grounded in its source** (:mod:`gdelt_forecast.contract.grounding`): a model-written
   event is kept only where its source document says its text and its date; applied after
   rule 2 and before rule 3, so a repeat that its own document does not say never stands in
   for one that it does.

Rule 1 (provenance) and rules 4 and 5 concern what a task record shows, so the tasks apply
them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from gdelt_forecast.contract import grounding
from gdelt_forecast.contract.similarity import near_duplicate
from gdelt_forecast.contract.text import period

AFTER_SOURCE = "2-not-after-source"
REPEATED = "3-one-event-once"
GROUNDED = grounding.RULE
RULES = (AFTER_SOURCE, REPEATED, GROUNDED)
EXAMPLES = 3  # dropped events kept per rule, to show what a rule removes


@dataclass
class Dropped:
    """What the rules dropped: atomic events by rule, grounding's by reason, and the first
    ``EXAMPLES`` of each rule with why."""

    rules: Counter = field(default_factory=lambda: Counter(dict.fromkeys(RULES, 0)))
    reasons: Counter = field(default_factory=lambda: Counter(dict.fromkeys(grounding.REASONS, 0)))
    examples: dict[str, list[dict]] = field(default_factory=dict)

    def add(self, rule: str, atom: dict, reason: str = "") -> None:
        self.rules[rule] += 1
        if reason:
            self.reasons[reason] += 1
        keys = ("complex_event_id", "date", "text", "source_doc_id")
        example(self.examples, rule, {**{k: atom.get(k) for k in keys}, "reason": reason or rule})


def example(examples: dict[str, list[dict]], rule: str, shown: dict) -> None:
    """``shown`` kept as an example of what ``rule`` dropped, up to ``EXAMPLES`` a rule."""
    mine = examples.setdefault(rule, [])
    if len(mine) < EXAMPLES:
        mine.append(shown)


def after_source(atom: dict) -> bool:
    """Whether ``atom`` (with its ``source_date``) is dated after its source was available."""
    span = period(atom["date"])
    return span is not None and span[0] > atom["source_date"]


def sound(
    atoms: list[dict],
    available: dict[str, date],
    dropped: Dropped,
    ungrounded: Callable[[dict], str | None] | None = None,
) -> list[dict]:
    """``atoms`` (in timeline order) with ``source_date`` set from ``available`` (doc_id ->
    availability date), less what rules 2, 6 (where ``ungrounded`` says why an event does not
    stand in its source) and 3 drop, counted in ``dropped``."""
    kept = []
    for atom in ({**a, "source_date": available[a["source_doc_id"]]} for a in atoms):
        if after_source(atom):
            dropped.add(AFTER_SOURCE, atom)
        elif ungrounded is not None and (reason := ungrounded(atom)):
            dropped.add(GROUNDED, atom, reason)
        else:
            kept.append(atom)
    first: list[int] = []  # positions in ``kept``, earliest available first
    for i in sorted(range(len(kept)), key=lambda i: (kept[i]["source_date"], i)):
        if any(near_duplicate(kept[i]["text"], kept[j]["text"]) for j in first):
            dropped.add(REPEATED, kept[i])
        else:
            first.append(i)
    return [kept[i] for i in sorted(first)]
