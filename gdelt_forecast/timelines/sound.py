"""The timelines' soundness rules, applied to every method's atomic events before they are
written (the tasks' rules, which build on these, are in :mod:`gdelt_forecast.tasks.leakage`).

A document's availability date is the day GDELT first saw it (the warehouse's
``news.date``); every atomic event records its source document's as ``source_date``.

2. **No atomic event after its source.** An event whose date (read as the period it names)
   starts after its source's availability date is a plan or an expectation, not an event:
   it is dropped.
3. **One event once.** Events whose texts are near-duplicates
   (:mod:`gdelt_forecast.timelines.similarity`) are one event: the one from the earliest
   available document is kept (within a document, the earliest in the timeline), with its
   date and source; the others are dropped.

Rule 1 (provenance) and rules 4 and 5 concern what a task record shows, so the tasks apply
them.
"""

from __future__ import annotations

from collections import Counter
from datetime import date

from gdelt_forecast.timelines import period
from gdelt_forecast.timelines.similarity import near_duplicate

AFTER_SOURCE = "2-not-after-source"
REPEATED = "3-one-event-once"
RULES = (AFTER_SOURCE, REPEATED)


def after_source(atom: dict) -> bool:
    """Whether ``atom`` (with its ``source_date``) is dated after its source was available."""
    span = period(atom["date"])
    return span is not None and span[0] > atom["source_date"]


def sound(atoms: list[dict], available: dict[str, date], dropped: Counter) -> list[dict]:
    """``atoms`` (in timeline order) with ``source_date`` set from ``available`` (doc_id ->
    availability date), less what rules 2 and 3 drop; ``dropped`` counts them by rule."""
    dated = [{**a, "source_date": available[a["source_doc_id"]]} for a in atoms]
    kept = [a for a in dated if not after_source(a)]
    dropped[AFTER_SOURCE] += len(dated) - len(kept)
    first: list[int] = []  # positions in ``kept``, earliest available first
    for i in sorted(range(len(kept)), key=lambda i: (kept[i]["source_date"], i)):
        if any(near_duplicate(kept[i]["text"], kept[j]["text"]) for j in first):
            dropped[REPEATED] += 1
        else:
            first.append(i)
    return [kept[i] for i in sorted(first)]
