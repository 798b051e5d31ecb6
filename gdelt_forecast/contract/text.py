"""Text as the soundness rules read it: an atomic event's date as written (``DATE``) and
the days it can mean (``period``), a text compared case and punctuation blind (``text_key``),
and the dates a sentence names (``dates``, ``sentence_date``).

A sentence's date is kept only when it names a day, month or year unambiguously and does
not qualify a noun: a determiner or a possessive before it ("the 2020 election", "a 2010
allegation", "the March 2019 agreement") makes it part of a noun phrase, which says which
election, not when the sentence's event happened. dateparser finds the dates; relative ones
("on Wednesday") are resolved against the publish day.
"""

import calendar
import re
from collections.abc import Iterator
from datetime import date, datetime

from dateparser.search import search_dates

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


_MONTH = (r"jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|"
          r"sep(t(ember)?)?|oct(ober)?|nov(ember)?|dec(ember)?")  # fmt: skip
_DAY_WORDS = re.compile(
    r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|today)\b", re.I
)
_MONTH_DAY = re.compile(rf"\b(\d{{1,2}}\s+({_MONTH})\b|({_MONTH})\.?\s+\d{{1,2}}\b)", re.I)
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+\d{{4}}\b", re.I)
_YEAR = re.compile(r"\b(1[89]|20)\d{2}\b")
_DIGIT = re.compile(r"\d")
_FORMATS = {"day": "%Y-%m-%d", "month": "%Y-%m", "year": "%Y"}
# Where a date phrase's date begins: its first number, month or weekday word.
_DATE_WORD = re.compile(rf"\d|\b({_MONTH})\b|{_DAY_WORDS.pattern}", re.I)
_WORD = re.compile(r"[\w'’]+")
# No tagger with a model can be installed offline, and the noun-phrase case needs only the
# word before the date: a determiner or a possessive ("Trump's 2016 campaign").
_DETERMINERS = frozenset(
    {
        "the",
        "a",
        "an",
        "this",
        "that",
        "these",
        "those",
        "its",
        "his",
        "her",
        "their",
        "our",
        "your",
        "my",
        "whose",
        "every",
        "each",
    }
)


def precision(phrase: str) -> str | None:
    """How precisely a date phrase names its date: "day", "month", "year" or None."""
    if _DAY_WORDS.search(phrase) or _MONTH_DAY.search(phrase):
        return "day"
    if _MONTH_YEAR.search(phrase):
        return "month"
    return "year" if _YEAR.search(phrase) else None


def qualifies_noun(sentence: str, phrase: str) -> bool:
    """Whether the date of ``phrase`` (a match in ``sentence``) stands after a determiner or
    a possessive, as in "the 2020 election": a noun's qualifier, not the sentence's date."""
    start = _DATE_WORD.search(phrase)
    if start is None:
        return False
    at = sentence.find(phrase)
    before = _WORD.findall((sentence[:at] if at >= 0 else "") + phrase[: start.start()])
    if not before:
        return False
    word = before[-1].lower()
    return word in _DETERMINERS or word.endswith(("'s", "’s"))


def dates(text: str, published: datetime) -> Iterator[tuple[str, str]]:
    """Each date phrase of ``text`` that names a day, month or year, with that date as
    yyyy-MM-dd, yyyy-MM or yyyy (relative ones, "on Wednesday", resolved against
    ``published``), in order."""
    if not (_DIGIT.search(text) or _DAY_WORDS.search(text)):
        return  # no phrase precision() accepts: spare dateparser (ms a sentence)
    settings = {"RELATIVE_BASE": published, "PREFER_DATES_FROM": "past"}
    for phrase, when in search_dates(text, languages=["en"], settings=settings) or []:
        if kind := precision(phrase):
            yield phrase, when.strftime(_FORMATS[kind])


def sentence_date(sentence: str, published: datetime) -> str | None:
    """The first date of ``sentence`` it can be placed on, as yyyy, yyyy-MM or yyyy-MM-dd."""
    return next(
        (when for phrase, when in dates(sentence, published)
         if not qualifies_noun(sentence, phrase)),
        None,
    )  # fmt: skip
