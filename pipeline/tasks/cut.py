"""Cutting a timeline at a day T_k: background (known by then) and targets (after it).

An atomic event's date is ``yyyy``, ``yyyy-MM`` or ``yyyy-MM-dd``: a period. It belongs to
the background when its whole period ends on or before the cut, to the targets when its
whole period starts after it; an event whose period spans the cut (``2025-08`` cut on
2025-08-05) or that has no date belongs to neither, since either side would guess. Cut days
are the days of day-precise events that leave ``tasks.min_background`` events before and
``tasks.min_targets`` after (OpenForecast: "one timestamp T_k specified in a day").
"""

from __future__ import annotations

import calendar
import random
from dataclasses import dataclass
from datetime import date, timedelta

from pipeline.config import TasksConfig

SPLITS = ("train", "dev", "test")  # in time order: the leakage rule reads it so


def period(value: str | None) -> tuple[date, date] | None:
    """The first and last day a yyyy / yyyy-MM / yyyy-MM-dd date can mean; None if none (an
    impossible day such as 2025-02-31, which a model may write, is no date)."""
    if not value:
        return None
    try:
        year, month, day = (int(part) for part in (value.split("-") + [0, 0])[:3])
        if day:
            return date(year, month, day), date(year, month, day)
        if month:
            return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
        return date(year, 1, 1), date(year, 12, 31)
    except ValueError:
        return None


def before(atom: dict, cut: date) -> bool:
    span = period(atom["date"])
    return span is not None and span[1] <= cut


def after(atom: dict, cut: date) -> bool:
    span = period(atom["date"])
    return span is not None and span[0] > cut


@dataclass(frozen=True)
class Cut:
    complex_event_id: str
    cut_date: date
    background: list[dict]  # atomic events, in timeline order
    targets: list[dict]
    left_out: int  # undated, or dated across the cut


def cuts(complex_event_id: str, atoms: list[dict], cfg: TasksConfig) -> list[Cut]:
    """Up to ``cfg.cuts_per_timeline`` cuts of the timeline ``atoms``, drawn with the
    seed and the complex event's id (the same on every run), in date order."""
    days = sorted({span[0] for a in atoms if (span := period(a["date"])) and span[0] == span[1]})
    usable = [
        day for day in days
        if sum(before(a, day) for a in atoms) >= cfg.min_background
        and sum(after(a, day) for a in atoms) >= cfg.min_targets
    ]  # fmt: skip
    rng = random.Random(f"{cfg.seed}:cut:{complex_event_id}")
    chosen = sorted(rng.sample(usable, min(cfg.cuts_per_timeline, len(usable))))
    out = []
    for day in chosen:
        background = [a for a in atoms if before(a, day)]
        targets = [a for a in atoms if after(a, day)]
        left = len(atoms) - len(background) - len(targets)
        out.append(Cut(complex_event_id, day, background, targets, left))
    return out


def split_of(cut_date: date, month_start: date, cfg: TasksConfig) -> str:
    test_from = cfg.test_from or month_start
    if cut_date >= test_from:
        return "test"
    return "dev" if cut_date >= test_from - timedelta(days=cfg.dev_days) else "train"
