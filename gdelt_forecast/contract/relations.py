"""EV2's inter-event relations and the temporal ones read off two events' dates.

An event's date names a period (a day, a month or a year: :func:`gdelt_forecast.contract.text.
period`). One event is Before another when its period ends before the other's starts,
After in the mirror case, and Vague when the periods overlap (a day within the month the
other names, two events of the same day): the dates alone do not order them.
"""

from __future__ import annotations

from gdelt_forecast.contract.text import period

BEFORE, AFTER, VAGUE = "Before", "After", "Vague"
CAUSES, IS_RESULT, IS_SUBEVENT, HAS_SUBEVENT, NONE = (
    "Causes", "IsResult", "IsSubevent", "HasSubevent", "None")  # fmt: skip
# CRR's three choices per relation type, in EV2's order.
CHOICES = {
    "temporal": (BEFORE, AFTER, VAGUE),
    "causal": (CAUSES, IS_RESULT, NONE),
    "hierarchical": (IS_SUBEVENT, HAS_SUBEVENT, NONE),
}
INVERSE = {BEFORE: AFTER, AFTER: BEFORE, VAGUE: VAGUE, CAUSES: IS_RESULT, IS_RESULT: CAUSES,
           IS_SUBEVENT: HAS_SUBEVENT, HAS_SUBEVENT: IS_SUBEVENT, NONE: NONE}  # fmt: skip


def temporal(a: str | None, b: str | None) -> str | None:
    """How the event dated ``a`` stands to the one dated ``b``; None when either date
    names no period."""
    first, second = period(a), period(b)
    if first is None or second is None:
        return None
    if first[1] < second[0]:
        return BEFORE
    if second[1] < first[0]:
        return AFTER
    return VAGUE
