"""The ingest stage: list the slots in a range, fetch them verified, write typed bronze.

``fetch_files`` and ``write_bronze`` are separate so an Airflow DAG can retry downloads on
their own; ``ingest`` does both in one pass, parsing each file as soon as it has arrived.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime

import requests

from gdelt_forecast.gdelt import bronze, ledger
from gdelt_forecast.gdelt.download import STATUSES, Fetched, fetch, make_session
from gdelt_forecast.gdelt.masterfile import Listing, SlotFile, list_files
from gdelt_forecast.gdelt.parse import ParseError, parse_zip
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.progress import progress
from gdelt_forecast.ground.summary import StageSummary

log = logging.getLogger(__name__)


@dataclass
class Summary(StageSummary):
    start: str
    end: str
    slots: int = 0
    files: int = 0
    downloaded: int = 0
    cached: int = 0
    missing: int = 0
    corrupt: int = 0
    failed: int = 0
    lines_read: int = 0
    rows_written: int = 0
    rows_rejected: int = 0
    masterfile_malformed: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"ingest {self.start}..{self.end}: {self.slots} slots ({self.files} files) listed, "
            f"{self.downloaded} downloaded, {self.cached} cached, {self.missing} missing, "
            f"{self.corrupt} corrupt, {self.failed} failed; {self.rows_written:,} rows written, "
            f"{self.rows_rejected:,} rejected ({self.seconds:.1f} s)"
        )


def list_slot_files(
    cfg: Config, start: datetime, end: datetime, tables: Sequence[str], session=None
) -> Listing:
    streams = ["english", "translation"] if cfg.gdelt.translation else ["english"]
    session = session or make_session(cfg.download)
    return list_files(
        session, cfg.gdelt.base_url, streams, start, end, tables, cfg.download.timeout
    )


def fetch_files(
    cfg: Config, listing: Listing, session: requests.Session | None = None
) -> list[Fetched]:
    """Fetch every listed file into the raw cache with bounded parallelism."""
    session = session or make_session(cfg.download)
    raw = DataRoot(cfg.data_root).raw_gdelt
    with ThreadPoolExecutor(cfg.download.parallelism, thread_name_prefix="fetch") as pool:
        futures = [pool.submit(fetch, session, f, raw, cfg.download) for f in listing.files]
        return [f.result() for f in progress(as_completed(futures), len(futures), "download")]


def _to_bronze(cfg: Config, item: Fetched, previous: dict | None) -> dict:
    file = item.file
    row = {
        "slot": file.slot,
        "stream": file.stream,
        "table": file.table,
        "url": file.url,
        "size": file.size,
        "md5": file.md5,
        "status": item.status,
        "rows": None,
        "rejected": None,
        "partitions": [],
        "detail": item.detail,
        "lines": 0,
    }
    old_days = previous["partitions"] if previous else []
    root = DataRoot(cfg.data_root).bronze_root
    if item.path is None:
        # The ledger says what bronze holds, so a file that did not arrive has no rows.
        bronze.remove_slot(root, file, old_days, rejects=True)
        return row
    try:
        parsed = parse_zip(item.path, file.table)
    except ParseError as exc:
        bronze.remove_slot(root, file, old_days, rejects=True)
        return {**row, "status": "corrupt", "detail": str(exc)}
    days = bronze.write_slot(root, file, parsed, cfg.ingest.compression, old_days)
    return {
        **row,
        "rows": parsed.rows.num_rows,
        "rejected": parsed.rejects.num_rows,
        "partitions": days,
        "lines": parsed.lines,
    }


def _previous(cfg: Config, files: Iterable[SlotFile]) -> Callable[[SlotFile], dict | None]:
    """The ledger's row of each of ``files``, by file."""
    rows = ledger.read(DataRoot(cfg.data_root).ledger, {f.slot for f in files})
    return lambda file: rows.get((file.slot, file.stream, file.table))


def _record(cfg: Config, summary: Summary, outcomes: Iterable[Future[dict]]) -> Summary:
    """Wait for every file's outcome, count them, and record them in the ledger."""
    rows = [f.result() for f in progress(outcomes, summary.files, "ingest")]
    counts = Counter(row["status"] for row in rows)
    for status in STATUSES:
        setattr(summary, status, counts[status])
    summary.lines_read = sum(row.pop("lines") for row in rows)
    summary.rows_written = sum(row["rows"] or 0 for row in rows)
    summary.rows_rejected = sum(row["rejected"] or 0 for row in rows)
    summary.problems = sorted(
        f"{row['slot']} {row['table']}: {row['status']} ({row['detail']})"
        for row in rows
        if row["status"] not in ("downloaded", "cached")
    )
    for problem in summary.problems:
        log.warning(problem)
    ledger.update(DataRoot(cfg.data_root).ledger, rows)
    return summary


def write_bronze(cfg: Config, fetched: Sequence[Fetched], summary: Summary) -> Summary:
    """Parse and write files fetched earlier (the DAG's second task)."""
    previous = _previous(cfg, [item.file for item in fetched])
    with ThreadPoolExecutor(cfg.ingest.workers, thread_name_prefix="bronze") as pool:
        outcomes = [pool.submit(_to_bronze, cfg, item, previous(item.file)) for item in fetched]
        summary = _record(cfg, summary, outcomes)
    return summary


def ingest(cfg: Config, start: datetime, end: datetime, tables: Sequence[str]) -> Summary:
    """List, fetch and write every slot file in [start, end]; parse each once it arrives."""
    session = make_session(cfg.download)
    listing = list_slot_files(cfg, start, end, tables, session)
    summary = new_summary(start, end, listing)
    previous = _previous(cfg, listing.files)
    # Downloads wait on the network, parsing on the CPU: each gets a pool of its own size.
    with (
        ThreadPoolExecutor(cfg.ingest.workers, thread_name_prefix="bronze") as parse_pool,
        ThreadPoolExecutor(cfg.download.parallelism, thread_name_prefix="fetch") as fetch_pool,
    ):

        def fetch_then_queue(file: SlotFile) -> Future[dict]:
            item = fetch(session, file, DataRoot(cfg.data_root).raw_gdelt, cfg.download)
            return parse_pool.submit(_to_bronze, cfg, item, previous(file))

        queued = [fetch_pool.submit(fetch_then_queue, f) for f in listing.files]
        summary = _record(cfg, summary, (q.result() for q in queued))
    return summary


def new_summary(start: datetime, end: datetime, listing: Listing) -> Summary:
    return Summary(
        start=start.strftime("%Y-%m-%dT%H:%M"),
        end=end.strftime("%Y-%m-%dT%H:%M"),
        slots=len({f.key for f in listing.files}),
        files=len(listing.files),
        masterfile_malformed=listing.malformed,
    )
