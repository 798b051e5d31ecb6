"""Cutting a timeline at a day T_k: background (known by then) and targets (after it).

An atomic event's date is ``yyyy``, ``yyyy-MM`` or ``yyyy-MM-dd``: a period. It belongs to
the background when its whole period ends on or before the cut and its source document was
available by then (rule 1, provenance: ``source_date``, the day GDELT first saw the
document, on or before the cut); to the targets when its whole period starts after the cut
and its source was available only after it. An event whose period spans the cut (``2025-08``
cut on 2025-08-05) or that has no date belongs to neither, since either side would guess;
nor does one dated on or before the cut from a document seen only later (``withheld``):
showing it would show a page published after the cut. Cut days are the days of day-precise
events that leave ``tasks.min_background`` events before and ``tasks.min_targets`` after
(OpenForecast: "one timestamp T_k specified in a day"); ``lost`` counts the days that only
rule 1 keeps from being one.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta

from gdelt_forecast.contract.text import period
from gdelt_forecast.ground.config import TasksConfig


def dated_before(atom: dict, cut: date) -> bool:
    span = period(atom["date"])
    return span is not None and span[1] <= cut


def before(atom: dict, cut: date) -> bool:
    """Known at the cut: dated on or before it, from a document available by then."""
    return dated_before(atom, cut) and atom["source_date"] <= cut


def after(atom: dict, cut: date) -> bool:
    span = period(atom["date"])
    return span is not None and span[0] > cut and atom["source_date"] > cut


@dataclass(frozen=True)
class Cut:
    complex_event_id: str
    cut_date: date
    background: list[dict]  # atomic events, in timeline order
    targets: list[dict]
    left_out: int  # undated, or dated across the cut
    withheld: int  # dated on or before the cut, from a document seen only after it (rule 1)


def cuts(complex_event_id: str, atoms: list[dict], cfg: TasksConfig) -> tuple[list[Cut], int]:
    """Up to ``cfg.cuts_per_timeline`` cuts of the timeline ``atoms`` (with their
    ``source_date``), drawn with the seed and the complex event's id (the same on every
    run), in date order; and the days rule 1 alone kept from being cut days."""
    days = sorted({span[0] for a in atoms if (span := period(a["date"])) and span[0] == span[1]})

    def usable(day: date, known) -> bool:
        return (
            sum(known(a, day) for a in atoms) >= cfg.min_background
            and sum(after(a, day) for a in atoms) >= cfg.min_targets
        )

    sound = [day for day in days if usable(day, before)]
    lost = sum(usable(day, dated_before) for day in days) - len(sound)
    rng = random.Random(f"{cfg.seed}:cut:{complex_event_id}")
    chosen = sorted(rng.sample(sound, min(cfg.cuts_per_timeline, len(sound))))
    out = []
    for day in chosen:
        background = [a for a in atoms if before(a, day)]
        targets = [a for a in atoms if after(a, day)]
        withheld = sum(dated_before(a, day) for a in atoms) - len(background)
        left = len(atoms) - len(background) - len(targets) - withheld
        out.append(Cut(complex_event_id, day, background, targets, left, withheld))
    return out, lost


def split_of(cut_date: date, month_start: date, cfg: TasksConfig) -> str:
    test_from = cfg.test_from or month_start
    if cut_date >= test_from:
        return "test"
    return "dev" if cut_date >= test_from - timedelta(days=cfg.dev_days) else "train"
