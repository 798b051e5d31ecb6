"""The value types of MIRAI's API (``APIs/api_implementation.py`` in yecchen/MIRAI): the
same names, fields, equality and printed forms, so an agent's code and its transcripts read
the same on either.

They check only their own form (a date is ``YYYY-MM-DD``, an ISO code three letters, a CAMEO
code two or three digits). MIRAI's also check against module globals (the country list,
the codebook, ``DEFAULT_END_DATE``); here those checks belong to the environment a value is
used in, which knows its release and its cutoff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date as _date
from typing import ClassVar

# Python 3.11's date.fromisoformat also reads ISO weeks ("2025-W31-1") and other digits than
# ASCII's, which DuckDB does not: a date is this form, then a day of the calendar.
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _need(value: object, kind: type, what: str) -> None:
    if not isinstance(value, kind):
        raise ValueError(f"{what} must be a {kind.__name__}, but received type {type(value)}")


@dataclass(frozen=True)
class Date:
    """A day, ``YYYY-MM-DD``."""

    date: str

    def __post_init__(self) -> None:
        _need(self.date, str, "Attribute 'date' of class Date")
        try:
            ok = bool(_DAY.fullmatch(self.date)) and bool(_date.fromisoformat(self.date))
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"Date must be in the format 'YYYY-MM-DD', but received: {self.date}")

    def __str__(self) -> str:
        return f"Date('{self.date}')"


@dataclass(frozen=True)
class DateRange:
    """Days from ``start_date`` to ``end_date``, both included; None is open on that side."""

    start_date: Date | None = None
    end_date: Date | None = None

    def __post_init__(self) -> None:
        for name in ("start_date", "end_date"):
            value = getattr(self, name)
            if value is not None:
                _need(value, Date, f"Attribute '{name}' of class DateRange")
        if self.start_date and self.end_date and self.start_date.date > self.end_date.date:
            raise ValueError(
                "Start date must be before or equal to end date, but received: "
                f"start_date={self.start_date.date}, end_date={self.end_date.date}"
            )

    def __str__(self) -> str:
        return f"DateRange(start_date={self.start_date}, end_date={self.end_date})"


@dataclass(frozen=True)
class _Code:
    code: str
    _form: ClassVar[str]

    def __post_init__(self) -> None:
        if not isinstance(self.code, str):  # the message only when it is needed
            _need(self.code, str, f"Attribute 'code' of class {type(self).__name__}")
        if not self._valid(self.code):
            raise ValueError(f"{self._form}, but received: {self.code}")

    @staticmethod
    def _valid(code: str) -> bool:  # string tests, not a regular expression: agents make many
        raise NotImplementedError

    def __str__(self) -> str:
        return f"{type(self).__name__}('{self.code}')"


class ISOCode(_Code):
    """An ISO 3166 alpha-3 country code, e.g. ``ISOCode("AUS")``."""

    _form = "ISO code must be a 3-letter string"

    @staticmethod
    def _valid(code: str) -> bool:
        return len(code) == 3 and code.isascii() and code.isalpha() and code.isupper()


class CAMEOCode(_Code):
    """A CAMEO event code: two digits (first level) or three (second level)."""

    _form = "CAMEO code must be a 2 or 3-digit string"

    @staticmethod
    def _valid(code: str) -> bool:
        return 2 <= len(code) <= 3 and code.isascii() and code.isdigit()


@dataclass(frozen=True)
class Country:
    iso_code: ISOCode
    name: str

    def __str__(self) -> str:
        return f"Country(iso_code={self.iso_code}, name='{self.name}')"


@dataclass(frozen=True)
class Relation:
    cameo_code: CAMEOCode
    name: str
    description: str

    def __str__(self) -> str:
        return (
            f"Relation(cameo_code={self.cameo_code}, name='{self.name}', "
            f"description='{self.description}')"
        )


@dataclass(frozen=True)
class Event:
    """A quadruple: on ``date``, ``head_entity`` did ``relation`` to ``tail_entity``."""

    date: Date
    head_entity: ISOCode
    relation: CAMEOCode
    tail_entity: ISOCode

    def __str__(self) -> str:
        return (
            f"Event(date={self.date}, head_entity={self.head_entity}, "
            f"relation={self.relation}, tail_entity={self.tail_entity})"
        )


@dataclass(frozen=True)
class NewsArticle:
    date: Date
    title: str
    content: str
    events: list[Event] = field(default_factory=list, compare=False, hash=False)

    def __str__(self) -> str:
        return f"{self.date}:\n{self.title}\n{self.content}"
