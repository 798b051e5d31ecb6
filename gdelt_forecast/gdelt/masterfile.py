"""The GDELT master file list: stream ``size md5 url`` lines and pick the slots in a range.

The list is the only source of slot names: a slot GDELT never published is simply not
listed, and URLs are never built from clock arithmetic.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

import requests

from gdelt_forecast.ground.errors import StageError

log = logging.getLogger(__name__)

MASTERFILES = {"english": "masterfilelist.txt", "translation": "masterfilelist-translation.txt"}
_NAME = re.compile(
    r"^(?P<slot>\d{14})\.(?P<translation>translation\.)?(?P<table>export|mentions|gkg)\.csv\.zip$",
    re.IGNORECASE,
)
_MD5 = re.compile(r"^[0-9a-f]{32}$")


class MasterfileError(StageError):
    """The master file list could not be read at all."""


@dataclass(frozen=True)
class SlotFile:
    """One listed file: a (slot, table) of one stream, with what GDELT says it holds."""

    slot: str  # YYYYMMDDHHMMSS, as in the file name
    stream: str  # "english" or "translation"
    table: str  # "export" or "mentions"
    size: int
    md5: str
    name: str  # upstream file name, e.g. 20250807220000.export.CSV.zip
    url: str  # where this run fetches it: the configured base URL plus the name

    @property
    def key(self) -> str:
        """Stem of the bronze file names; the translingual stream gets its own."""
        return self.slot if self.stream == "english" else f"{self.slot}.translation"

    @property
    def time(self) -> datetime:
        return datetime.strptime(self.slot, "%Y%m%d%H%M%S")


@dataclass
class Listing:
    files: list[SlotFile]
    lines: int = 0
    malformed: int = 0


def parse_lines(
    lines: Iterable[str],
    base_url: str,
    stream: str,
    start: datetime,
    end: datetime,
    tables: Iterable[str],
) -> Listing:
    """Keep the listed files of ``tables`` whose slot lies in [start, end]."""
    wanted = set(tables)
    lo, hi = start.strftime("%Y%m%d%H%M%S"), end.strftime("%Y%m%d%H%M%S")
    listing = Listing(files=[])
    for line in lines:
        if not line.strip():
            continue
        listing.lines += 1
        parts = line.split()
        name = parts[-1].rsplit("/", 1)[-1] if parts else ""
        match = _NAME.match(name)
        if (
            len(parts) != 3
            or not parts[0].isdigit()
            or not _MD5.match(parts[1])
            or not match
            or not _a_moment(match["slot"])  # 14 digits that name no time (a 32nd of July)
        ):
            listing.malformed += 1
            if listing.malformed <= 5:
                log.warning("masterfile line %d is malformed: %r", listing.lines, line[:200])
            continue
        slot, table = match["slot"], match["table"].lower()
        if table not in wanted or not lo <= slot <= hi:
            continue
        if bool(match["translation"]) != (stream == "translation"):
            continue
        listing.files.append(
            SlotFile(slot, stream, table, int(parts[0]), parts[1], name, f"{base_url}/{name}")
        )
    # GDELT's list repeats a few files; one row per (slot, table) is the ledger's key.
    unique = {(f.key, f.table): f for f in listing.files}
    listing.files = sorted(unique.values(), key=lambda f: (f.slot, f.stream, f.table))
    return listing


def _a_moment(slot: str) -> bool:
    """Whether 14 digits name a time. GDELT's list has a million lines, a few thousand days:
    the calendar is asked once a day (strptime a line cost 15 s a listing), the clock by
    comparing digits."""
    return _a_day(slot[:8]) and slot[8:10] < "24" and slot[10:12] < "60" and slot[12:14] < "60"


@functools.lru_cache(maxsize=8192)
def _a_day(yyyymmdd: str) -> bool:
    try:
        datetime.strptime(yyyymmdd, "%Y%m%d")
    except ValueError:
        return False
    return True


def _stream_lines(
    session: requests.Session, url: str, timeout: tuple[float, float]
) -> Iterator[str]:
    try:
        with session.get(url, stream=True, timeout=timeout) as resp:
            if resp.status_code != 200:
                raise MasterfileError(f"cannot read {url}: HTTP {resp.status_code}")
            for raw in resp.iter_lines():
                yield raw.decode("utf-8", errors="replace")
    except requests.RequestException as exc:
        raise MasterfileError(f"cannot read {url}: {exc.__class__.__name__}: {exc}") from None


def list_files(
    session: requests.Session,
    base_url: str,
    streams: Iterable[str],
    start: datetime,
    end: datetime,
    tables: Iterable[str],
    timeout: tuple[float, float],
) -> Listing:
    """Read each stream's master file list once, streamed, and merge the selections."""
    base = base_url.rstrip("/")
    merged = Listing(files=[])
    for stream in streams:
        url = f"{base}/{MASTERFILES[stream]}"
        part = parse_lines(_stream_lines(session, url, timeout), base, stream, start, end, tables)
        merged.files += part.files
        merged.lines += part.lines
        merged.malformed += part.malformed
    merged.files.sort(key=lambda f: (f.slot, f.stream, f.table))
    return merged
