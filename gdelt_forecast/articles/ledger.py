"""The fetch ledger, the journals of fetch runs, and the recovery of interrupted runs.

Under ``<data_root>/articles/``:

- ``fetch_journal/<run>.jsonl``: one JSON line per URL of a running (or crashed) run, written
  as soon as the URL is settled; ``<run>.lock`` is held by the running process (the OS
  releases it if the process dies).
- ``fetch_ledger.parquet``: one row per URL with its latest outcome (``LEDGER_SCHEMA``);
  ``attempts``, ``requests`` and ``waited_s`` add up those of every run (a ledger written
  before the last two existed reads them as null). One row per URL rather than per attempt
  because the ledger answers "what became of this URL" for re-runs and the processing
  stage; a retry's intermediate answers are logged at debug level.

Resume rule. A URL is settled once its journal line is written; a fetched page's WARC record
is written and flushed before that line. Every run starts (and ends) by folding the
journals of runs that are no longer running into the ledger (``settle_finished_runs``): an
unfinished WARC is cut after its last complete gzip member and given its final name; a
journal row whose record lies past the cut is dropped (its URL is fetched again); a response
record with no journal row (the process died between the two writes) is added to the ledger
as fetched, so it is not fetched again. A run fetches the URLs that are not in the ledger or
are ``retryable``; an interrupted run still records what its requests in flight return.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from filelock import FileLock, Timeout

from gdelt_forecast.articles.warc import pages_with_offsets, seal, unfinished_files
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.parquet_io import upsert
from gdelt_forecast.storage.working_copy import shared_file

log = logging.getLogger(__name__)

STATUSES = (
    "fetched",  # an HTML page, stored
    "not_found",  # HTTP 404 or 410
    "refused",  # not http(s), or a host that resolves to a non-public address
    "robots",  # robots.txt disallows it
    "too_large",  # body over articles.max_bytes once decompressed
    "not_html",  # a Content-Type other than text/html or application/xhtml+xml
    "failed",  # will not heal: other 4xx, too many redirects, bad TLS, corrupt encoding
    "retryable",  # retries spent on errors, 429 or 5xx; a re-run tries again
    "host_down",  # its host failed articles.host_down_after times in a row; a re-run tries again
)
RETRY_STATUSES = frozenset({"retryable", "host_down"})

LEDGER_SCHEMA = pa.schema(
    [
        ("url", pa.string()),
        ("final_url", pa.string()),
        ("status", pa.string()),
        ("http_status", pa.int32()),
        ("error", pa.string()),
        ("content_type", pa.string()),
        ("bytes", pa.int64()),
        ("sha256", pa.string()),
        ("fetched_at", pa.timestamp("us", tz="UTC")),
        ("attempts", pa.int32()),
        ("requests", pa.int32()),  # redirect hops included; robots.txt's are the host's
        ("waited_s", pa.float64()),  # the retries' waits: backoffs and Retry-After
        ("warc_file", pa.string()),  # relative to data_root
        ("warc_offset", pa.int64()),  # of the response record, for direct access
    ]
)


_ADDED_UP = ("attempts", "requests", "waited_s")  # over every run of a URL


def read_ledger(data_root: Path, urls: Iterable[str] | None = None) -> dict[str, dict]:
    """The ledger's rows by URL: all, or those of ``urls`` (a day's, without turning a
    year's rows into dicts)."""
    path = DataRoot(data_root).fetch_ledger
    if not path.exists():
        return {}
    table = pq.read_table(path, schema=LEDGER_SCHEMA)
    if urls is not None:
        table = table.filter(pc.is_in(table["url"], pa.array(list(urls), pa.string())))
    return {row["url"]: row for row in table.to_pylist()}


def settled_urls(data_root: Path) -> set[str]:
    """URLs the ledger holds in a final state (a re-run leaves them alone)."""
    path = DataRoot(data_root).fetch_ledger
    if not path.exists():
        return set()
    table = pq.read_table(path, columns=["url", "status"])
    final = pc.invert(pc.is_in(table["status"], pa.array(sorted(RETRY_STATUSES))))
    return set(table.filter(final)["url"].to_pylist())


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


class Journal:
    """The journal of a running fetch run, which holds its lock while open (``with``)."""

    def __init__(self, data_root: Path, run: str):
        self._path = DataRoot(data_root).fetch_journal / f"{run}.jsonl"
        self._lock = FileLock(self._path.with_suffix(".lock"))
        self._fh: IO[str] | None = None

    def __enter__(self) -> Journal:
        self._lock.acquire()
        try:
            self._fh = self._path.open("a", encoding="utf-8")
        except BaseException:
            self._lock.release()
            raise
        return self

    def add(self, row: dict) -> None:
        """Write one settled URL's ledger row (``fetched_at`` a datetime) and flush it."""
        assert self._fh is not None
        self._fh.write(json.dumps({**row, "fetched_at": _iso(row["fetched_at"])}) + "\n")
        self._fh.flush()

    def __exit__(self, *exc) -> None:
        try:
            if self._fh is not None:
                self._fh.close()
        finally:
            self._lock.release()


def _read_journal(path: Path) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # the last line, cut short by a crash
    return rows


def _recovered_rows(data_root: Path, warc_file: str, skip: set[str]) -> list[dict]:
    """Ledger rows for the pages of our WARC file ``warc_file`` whose URL is not in ``skip``."""
    rows = []
    for offset, page in pages_with_offsets(Path(data_root) / warc_file):
        if page.url in skip:
            continue
        rows.append(
            {
                "url": page.url,
                "final_url": page.final_url,
                "status": "fetched",
                "http_status": page.http_status,
                "error": None,
                "content_type": page.content_type or None,
                "bytes": len(page.body),
                "sha256": hashlib.sha256(page.body).hexdigest(),
                "fetched_at": _iso(page.fetched_at),
                "attempts": 1,  # at least; the journal line with the count was lost
                "requests": 1,
                "waited_s": 0.0,
                "warc_file": warc_file,
                "warc_offset": offset,
            }
        )
    return rows


def _salvage(data_root: Path, run: str, rows: list[dict]) -> tuple[list[dict], int]:
    """Finish the WARC files a dead run left open. Returns its journal rows less those whose
    record was cut off, plus rows for records it wrote but never journaled, and how many of
    the latter there were."""
    journaled = {row["url"] for row in rows}
    lost: set[str] = set()
    recovered: list[dict] = []
    for path in unfinished_files(data_root, run):
        warc_file, end = seal(path)
        lost |= {
            row["url"]
            for row in rows
            if row["warc_file"] == warc_file and row["warc_offset"] >= end
        }
        if end:
            recovered += _recovered_rows(data_root, warc_file, journaled)
    if lost:
        log.warning(
            "run %s: %d journaled pages lost with the WARC tail; refetching", run, len(lost)
        )
    return [row for row in rows if row["url"] not in lost] + recovered, len(recovered)


def _merge_ledger(data_root: Path, rows: list[dict]) -> None:
    """Replace the rows of these URLs, adding up attempts; the caller holds the ledger lock."""
    if not rows:
        return
    merged = read_ledger(data_root, {row["url"] for row in rows})
    for row in rows:
        prior = merged.get(row["url"])
        merged[row["url"]] = {
            **row,
            "fetched_at": datetime.fromisoformat(row["fetched_at"]),
            **{k: (row.get(k) or 0) + ((prior[k] or 0) if prior else 0) for k in _ADDED_UP},
        }
    table = pa.Table.from_pylist(list(merged.values()), schema=LEDGER_SCHEMA)
    upsert(DataRoot(data_root).fetch_ledger, table, ("url",))


def settle_finished_runs(data_root: Path) -> int:
    """Fold the journals of runs that are no longer running (ended or died) into the ledger;
    return the number of pages recovered from WARC records that had no journal line."""
    recovered = 0
    with shared_file(DataRoot(data_root).fetch_ledger):
        for journal in sorted(DataRoot(data_root).fetch_journal.glob("*.jsonl")):
            lock = FileLock(journal.with_suffix(".lock"))
            try:
                lock.acquire(timeout=0)
            except Timeout:
                continue  # its run is still going
            try:
                rows, found = _salvage(data_root, journal.stem, _read_journal(journal))
                _merge_ledger(data_root, rows)
                journal.unlink()
                recovered += found
            finally:
                lock.release()
                Path(lock.lock_file).unlink(missing_ok=True)
    return recovered
