"""Complex events (stories in the news corpus) and their timelines of atomic events."""

import calendar
import re
from datetime import date

# An atomic event's date as written: yyyy, yyyy-MM or yyyy-MM-dd.
DATE = re.compile(r"\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?")


def text_key(text: str | None) -> str:
    """An atomic event's text as compared with another's: case and punctuation blind."""
    return re.sub(r"\W+", " ", (text or "").lower()).strip()


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
