"""Days and months as every stage counts them: one place, below all the stages."""

from __future__ import annotations

from datetime import date, timedelta

from gdelt_forecast.ground.errors import StageError


def spoken(day: date) -> str:
    """``day`` as MIRAI writes dates in its prompts: "November 03, 2023"."""
    return day.strftime("%B %d, %Y")


class MonthError(StageError):
    """A month that is not ``YYYY-MM``."""


def month_range(month: str) -> tuple[date, date]:
    """The first and last day of ``month`` (``YYYY-MM``)."""
    try:
        first = date.fromisoformat(f"{month}-01")
    except ValueError:
        raise MonthError(f"month {month!r} is not YYYY-MM") from None
    following = (first.replace(day=28) + timedelta(days=4)).replace(day=1)
    return first, following - timedelta(days=1)


def days(first: date, last: date) -> list[date]:
    """Every day from ``first`` through ``last`` (none when ``last`` is before ``first``)."""
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def history(month: str, start: date | None = None) -> tuple[date, date]:
    """A month's history window: from ``start`` (default: the 1st of January of the month's
    year) through the month's last day. A release holds it, and the month's timelines read
    no document before it."""
    first, last = month_range(month)
    start = start or first.replace(month=1)
    if start > first:
        raise MonthError(f"history start {start} is after the month's first day {first}")
    return start, last
