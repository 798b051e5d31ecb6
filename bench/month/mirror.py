"""A GDELT month at its real volume, for bench/month/run.py (issue 25): a mirror of
``days`` x ``per_day`` slots whose rows are drawn from the real slot in tests/fixtures/gdelt.

GDELT 2.0 averages about 1,350 export rows and 3,360 mentions per 15-minute slot (4 million
and 10 million over a month's 2,976 slots). Each simulated slot draws that many rows, with
replacement and a seed, from the real slot's 909 export and 3,366 mention rows, so actors,
countries, CAMEO codes and sources keep the real distributions, and moves them into the slot:

- export: a new GLOBALEVENTID (unique across the month), SQLDATE and DATEADDED of the slot
  (so MIRAI's same-day rule keeps them as real rows of that day would be kept), and a
  SOURCEURL of its own on one of ``hosts`` simulated news hosts (``news-<n>.sim.test``, on
  ``port``), so that the news web of the bench (bench/month/news_web.py) serves a page per URL
  and every host sees its share; one URL in eight sits under ``/private/``, which some
  hosts' robots.txt disallow. With ``pages``, a day has at most that many URLs and its events
  share them (GDELT codes several events from one article), for a bench that fetches less;
- mentions: each row mentions one of the slot's new events, at the slot's time, by its real
  source name (the daily-mentions measure counts those).

As GDELT's own list has, ``missing`` files are listed but absent (ingest records a 404) and
``corrupt`` files do not match their listed md5. Nothing here invents a field value that the
real slot does not hold, but IDs, dates and URLs.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

from bench.harness import REPO
from gdelt_forecast.gdelt.mirror import add_file, write_masterfile

REAL = {t: REPO / f"tests/fixtures/gdelt/20250807220000.{t}.CSV" for t in ("export", "mentions")}
PER_SLOT = {"export": 1_350, "mentions": 3_360}
EXPORT_ID, SQLDATE, MONTHYEAR, YEAR, FRACTION, DATEADDED, SOURCEURL = 0, 1, 2, 3, 4, 59, 60
MENTION_EVENT, EVENT_TIME, MENTION_TIME, MENTION_URL = 0, 1, 2, 5
FIRST_ID = 2_000_000_000  # above any real GLOBALEVENTID of 2025


@dataclass
class MonthMirror:
    slots: list[str]
    rows: dict[str, int] = field(default_factory=dict)  # table -> rows written, all files
    missing: list[str] = field(default_factory=list)  # file names listed but absent
    corrupt: list[str] = field(default_factory=list)  # file names whose md5 does not match
    urls: dict[str, str] = field(default_factory=dict)  # SOURCEURL -> its real page's URL


def slot_times(days: list[date], per_day: int) -> list[datetime]:
    """``per_day`` slots on each of ``days``, spread evenly over its 96 quarter hours."""
    if not 1 <= per_day <= 96:
        raise ValueError(f"slots per day: 1 to 96, not {per_day}")
    step = 96 // per_day
    return [datetime(d.year, d.month, d.day) + timedelta(minutes=15 * step * k)
            for d in days for k in range(per_day)]  # fmt: skip


def span(start: date, days: int) -> list[date]:
    """``days`` days from ``start``."""
    return [start + timedelta(days=n) for n in range(days)]


def _stamp(t: datetime) -> bytes:
    return t.strftime("%Y%m%d%H%M%S").encode()


def _url(event_id: int, original: str, t: datetime, hosts: int, port: int,
         pages: int | None) -> str:  # fmt: skip
    if pages is None:
        host = int(hashlib.sha256(urlsplit(original).netloc.encode()).hexdigest(), 16) % hosts
        page = str(event_id)
    else:
        page_number = event_id % pages
        host, page = page_number % hosts, f"p{page_number}"
        event_id = page_number
    private = "private/" if event_id % 8 == 0 else ""
    return f"http://news-{host}.sim.test:{port}/{private}{t:%Y/%m/%d}/{page}"


def _slot(rng: random.Random, real: dict[str, list[list[bytes]]], t: datetime, first_id: int,
          hosts: int, port: int, pages: int | None,
          urls: dict[str, str]) -> dict[str, bytes]:  # fmt: skip
    stamp, day = _stamp(t), t.strftime("%Y%m%d").encode()
    export = []
    for n, row in enumerate(rng.choices(real["export"], k=PER_SLOT["export"])):
        row = list(row)
        event_id = first_id + n
        original = row[SOURCEURL].decode("utf-8", "replace")
        url = _url(event_id, original, t, hosts, port, pages)
        urls.setdefault(url, original)
        row[EXPORT_ID], row[SQLDATE], row[DATEADDED] = b"%d" % event_id, day, stamp
        row[MONTHYEAR], row[YEAR] = day[:6], day[:4]
        row[FRACTION] = b"%.4f" % (t.year + (t.timetuple().tm_yday - 1) / 365)
        row[SOURCEURL] = url.encode()
        export.append(row)
    mentions = []
    for row in rng.choices(real["mentions"], k=PER_SLOT["mentions"]):
        event = rng.choice(export)
        row = list(row)
        row[MENTION_EVENT], row[EVENT_TIME], row[MENTION_TIME] = event[EXPORT_ID], stamp, stamp
        row[MENTION_URL] = event[SOURCEURL]
        mentions.append(row)
    return {t: b"".join(b"\t".join(r) + b"\n" for r in rows)
            for t, rows in (("export", export), ("mentions", mentions))}  # fmt: skip


def build(
    mirror: Path,
    days: list[date],
    per_day: int = 96,
    *,
    hosts: int = 200,
    port: int = 80,
    pages: int | None = None,
    missing: int = 2,
    corrupt: int = 1,
    seed: int = 0,
) -> MonthMirror:
    """Write the mirror (zips, masterfilelist.txt) into ``mirror``; what it serves. ``pages``:
    at most this many source URLs a day (None: one per event)."""
    real = {t: [line.split(b"\t") for line in p.read_bytes().splitlines()] for t, p in REAL.items()}
    rng = random.Random(seed)
    times = slot_times(days, per_day)
    made = MonthMirror(slots=[_stamp(t).decode() for t in times], rows={"export": 0, "mentions": 0})
    entries = []
    for k, t in enumerate(times):
        first_id = FIRST_ID + k * PER_SLOT["export"]
        data = _slot(rng, real, t, first_id, hosts, port, pages, made.urls)
        for table, blob in data.items():
            entries.append(add_file(mirror, f"{_stamp(t).decode()}.{table}.CSV", blob))
            made.rows[table] += blob.count(b"\n")
    write_masterfile(mirror, entries)
    names = sorted(name for _, _, name in entries)
    # Middle of the month, not its edges: a day's last slot is what closes the day.
    for name in rng.sample(names[2:-2], missing + corrupt):
        if len(made.missing) < missing:
            (mirror / name).unlink()
            made.missing.append(name)
        else:
            (mirror / name).write_bytes(b"PK\x03\x04 not the listed zip")
            made.corrupt.append(name)
    return made
