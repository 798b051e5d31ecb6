"""``gdelt-forecast database``: the warehouse, a month at a time, from silver Parquet.

Each table is kept as a Parquet file (or a few) per month under ``<data_root>/warehouse/``
(:mod:`gdelt_forecast.contract.months`), in the release's form, so a release links a past
month's files instead of writing them again. A month is written only when its key changes:
its sources (each silver and document file's sha256, or in a bucket its ETag), the key of the
month before it (a document first seen in an earlier month stays that month's, and a URL's
document may lie on an earlier day) and the SQL that makes it. A refresh therefore writes the
new month and reads, of the history, only the earlier documents' ``url``, ``doc_id`` and
news ids.

``warehouse.duckdb`` holds a view per table over the months' files and the reference tables;
it is written into a temporary file and renamed over the old one, so a reader never opens
half of it. Only this command writes the warehouse (a file lock keeps a second writer out);
readers open it read-only with :func:`gdelt_forecast.ground.duck.open_warehouse`.

On an s3:// data root the warehouse is of the machine's working copy, never of the bucket:
DuckDB reads the silver Parquet straight from the bucket through s3fs, registered as an fsspec
filesystem (DuckDB's own httpfs extension is downloaded at first use, which a machine without
the internet cannot do, and its PyPI packages lag DuckDB's releases). The stage's record
(``warehouse.json`` beside it, written by :mod:`gdelt_forecast.pipeline.runner`, never
pushed) holds the fingerprint of its sources: the stages that read the warehouse record it,
and the runner brings a machine's warehouse up to the bucket's silver before a stage reads it.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import duckdb
from filelock import FileLock

from gdelt_forecast.contract import months as parts
from gdelt_forecast.contract.documents import DOCS
from gdelt_forecast.ground import dates, duck
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import BRONZE, PART, WAREHOUSE_SOURCES, DataRoot
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.files import parquet_rows, sha256, temporary_folder, write_json
from gdelt_forecast.ground.parquet_io import write_query
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.pipeline.stage_record import digest
from gdelt_forecast.reference import tables
from gdelt_forecast.storage.working_copy import (
    filesystem,
    listed,
    location,
    readable,
    versions,
    where,
)
from gdelt_forecast.warehouse.news_terms import write_news_terms

log = logging.getLogger(__name__)
EVENTS, FUNNEL, DOC_FILES = WAREHOUSE_SOURCES
DATE = re.compile(r"/date=(\d{4}-\d{2}-\d{2})/")
# A change to how a month's files are written that no SQL file shows: raise it, and every
# month is written again.
FORMAT = 1
REFERENCE = {
    "countries": tables.countries,
    "cameo_countries": tables.cameo_countries,
    "relations": tables.relations,
}


class WarehouseError(StageError):
    """The warehouse cannot be built."""


@dataclass
class Summary(StageSummary):
    days: int
    events: int
    quads: int
    quad_urls: int
    news: int
    months: int = 0
    written: list[str] = field(default_factory=list)  # the months whose files were written
    seconds: float = 0.0

    def line(self) -> str:
        wrote = ", ".join(self.written) or "none"
        return (
            f"database: {self.days} days in {self.months} months (written: {wrote}), "
            f"{self.events:,} events, {self.quads:,} quads, {self.quad_urls:,} quad URLs, "
            f"{self.news:,} news documents ({self.seconds:.1f} s)"
        )


def build_database(cfg: Config) -> Summary:
    found = _sources(cfg)
    sources = _by_month(found)
    if not sources:
        raise WarehouseError(f"no silver events under {where(cfg.data_root)}/silver: run normalize")
    root = DataRoot(cfg.data_root)
    folder = root.warehouse_parts
    with FileLock(f"{root.warehouse}.lock"):
        index = parts.read_index(folder)
        old = index["months"]
        keys = _keys(sources, found)
        written = [m for m in sorted(keys) if not _current(folder, old.get(m), keys[m])]
        months = {m: old[m] for m in keys if m not in written}
        with duck.connect(cfg) as con:
            if fs := filesystem(cfg.data_root):
                con.register_filesystem(fs)
            con.register("no_docs", DOCS.empty_table())  # a month without documents reads it
            for month in written:
                log.info("database: %s (%d days)", month, len(sources[month][EVENTS]))
                _month_tables(con, cfg, month, sources, months, folder)
                months[month] = {
                    "key": keys[month],
                    "days": len(sources[month][EVENTS]),
                    "files": write_month(con, month, folder),
                }
        for month in sorted(set(old) - set(keys)):  # its sources are gone
            _remove_month(folder, old[month])
        index = {"format": FORMAT, "months": dict(sorted(months.items()))}
        write_json(folder / parts.INDEX, index)
        write_views(cfg, root, index)
    rows = {t: sum(f["rows"] for m in months.values() for f in m["files"][t]) for t in parts.TABLES}
    return Summary(
        days=sum(m["days"] for m in months.values()),
        events=rows["events"],
        quads=rows["quads"],
        quad_urls=rows["quad_urls"],
        news=rows["news"],
        months=len(months),
        written=written,
    )


def stale_month(cfg: Config, month: str) -> str | None:
    """Why the warehouse's ``month`` and the months before it are not what they would be
    once every day up to the month's end is built (None when they are): what a release of
    the month reads. A later month's days, built side by side, do not count."""
    last = dates.month_range(month)[1]
    if waiting := unbuilt_days(cfg, last):
        more = f" and {len(waiting) - 1} more" if len(waiting) > 1 else ""
        return (f"{waiting[0]}{more} have bronze events but not yet their silver events and "
                "documents (normalize, fetch and process them)")  # fmt: skip
    found = _sources(cfg, last)
    folder = DataRoot(cfg.data_root).warehouse_parts
    listed_months = parts.read_index(folder)["months"]
    keys = _keys(_by_month(found), found)
    if month not in keys:
        return f"the silver holds no day of {month}"
    changed = [m for m, key in keys.items() if not _current(folder, listed_months.get(m), key)]
    if changed:
        return f"silver changed since the warehouse wrote {', '.join(changed)}"
    return None


def unbuilt_days(cfg: Config, last: date) -> list[str]:
    """The days up to ``last`` with bronze events but not yet their silver events and
    documents: the warehouse's months up to ``last`` are not whole until they are built."""
    built = _days_with(cfg, EVENTS) & _days_with(cfg, DOC_FILES)
    return sorted(d for d in _days_with(cfg, f"{BRONZE}/events") - built if d <= last.isoformat())


def _days_with(cfg: Config, folder: str) -> set[str]:
    """The days of ``folder``'s partitions that hold a file: in the bucket of an s3:// data
    root or of a working copy (where only what a stage pulled lies), else on the disk."""
    rels = listed(cfg, folder) if cfg.remote else readable(cfg.data_root, f"{folder}/date=*/*")
    return {found.group(1) for r in rels if (found := DATE.search(r))}


def _sources(cfg: Config, last: date | None = None) -> dict[str, str]:
    """The warehouse's sources (of the days up to ``last``), with their versions."""
    found = versions(cfg.data_root, tuple(f"{f}/date=*/{PART}" for f in WAREHOUSE_SOURCES))
    return {rel: v for rel, v in found.items() if last is None or _day(rel) <= last.isoformat()}


def _day(rel: str) -> str:
    return DATE.search(rel).group(1)


def _by_month(found: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    """The sources' paths by month and folder; a month with documents or a funnel but no
    silver events is refused (its documents come from the events' URLs)."""
    months: dict[str, dict[str, list[str]]] = defaultdict(
        lambda: {f: [] for f in WAREHOUSE_SOURCES}
    )
    for rel in sorted(found):
        folder = next(f for f in WAREHOUSE_SOURCES if rel.startswith(f"{f}/"))
        months[_day(rel)[:7]][folder].append(rel)
    for month, files in sorted(months.items()):
        if not files[EVENTS]:
            raise WarehouseError(
                f"{month} has {', '.join(f for f in WAREHOUSE_SOURCES if files[f])} but no silver "
                "events: run normalize for its days"
            )
    return dict(months)


def _keys(sources: dict[str, dict[str, list[str]]], found: dict[str, str]) -> dict[str, str]:
    """Each month's key: its sources' versions, the month before's key, the SQL and format."""
    sql = {p.relative_to(duck.SQL_DIR).as_posix(): sha256(p)
           for p in sorted((duck.SQL_DIR / "warehouse").rglob("*.sql"))}  # fmt: skip
    keys, before = {}, None
    for month in sorted(sources):
        files = {r: found[r] for folder in sources[month].values() for r in folder}
        before = keys[month] = digest(
            {"format": FORMAT, "sql": sql, "sources": files, "before": before}
        )
    return keys


def _current(folder: Path, listed: dict | None, key: str) -> bool:
    """Whether a month's files, as the index lists them, are those ``key`` asks for and as
    they were written (one deleted or edited by hand is written again)."""
    if listed is None or listed["key"] != key:
        return False
    return all(parts.as_listed(folder, f) for fs in listed["files"].values() for f in fs)


def _month_tables(
    con: duckdb.DuckDBPyConnection,
    cfg: Config,
    month: str,
    sources: dict[str, dict[str, list[str]]],
    done: dict[str, dict],
    folder: Path,
) -> None:
    """The month's tables in ``con``, from its sources; ``done`` holds the earlier months'
    entries (their news ids are read)."""
    first, last = dates.month_range(month)
    mine = sources[month]
    docs = [r for m in sorted(sources) if m <= month for r in sources[m][DOC_FILES]]
    earlier = [folder / f["path"]
               for m in sorted(done) if m < month for f in done[m]["files"]["news"]]  # fmt: skip
    views = {
        "events": _parquet(cfg, mine[EVENTS]),
        "funnel": _parquet(cfg, mine[FUNNEL]),
        "article_docs": _parquet(cfg, docs) if docs else "SELECT * FROM no_docs",
        "earlier_news": f"SELECT doc_id FROM read_parquet({duck.quoted_list(earlier)})"
        if earlier
        else "SELECT doc_id FROM no_docs",
    }
    for name, query in views.items():
        con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {query}")
    for name in ("quad_urls", "news", "quad_docs", "quads"):
        duck.run(con, f"warehouse/{name}.sql", f"CREATE OR REPLACE TEMP TABLE {name} AS",
                 first_date=first, last_date=last)  # fmt: skip


def write_month(con: duckdb.DuckDBPyConnection, month: str, folder: Path) -> dict[str, list[dict]]:
    """The month's files of every table from the tables (or views) of that name in ``con``
    (the month's rows, or more), put in place of its old ones; what the index lists of them."""
    first, last = dates.month_range(month)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = temporary_folder(folder, prefix=f".{month}.")
    try:
        written = {}
        for table in parts.TABLES:
            out, row_group = tmp / table, parts.ROW_GROUPS.get(table, parts.ROW_GROUP)
            if table == "news_terms":
                files = write_news_terms(
                    con, (first, last), out, parts.ROWS_PER_FILE, parts.stem(month)
                )
            else:
                files = write_query(con, f"warehouse/window/{table}.sql", out, parts.ROWS_PER_FILE,
                                    row_group, parts.stem(month), first_date=first,
                                    last_date=last)  # fmt: skip
            written[table] = files
        return _replace_month(folder, month, written)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _parquet(cfg: Config, rels: list[str]) -> str:
    """A query of the data root's Parquet files ``rels`` (in the bucket, for a working copy)."""
    files = duck.quoted_list(location(cfg.data_root, r) for r in rels)
    return f"SELECT * FROM read_parquet({files}, hive_partitioning = false)"


def _replace_month(folder: Path, month: str, written: dict[str, list[Path]]) -> dict:
    """Move the month's new files in place of its old ones (a month may have fewer files than
    before); each one's entry for the index."""
    entries = {}
    for table, files in written.items():
        dest = folder / table
        dest.mkdir(parents=True, exist_ok=True)
        for old in dest.glob(f"{parts.stem(month)}part-*.parquet"):
            if old.name not in {f.name for f in files}:
                old.unlink()
        entries[table] = []
        for f in files:
            entry = {"path": f"{table}/{f.name}", "rows": parquet_rows(f), "sha256": sha256(f)}
            os.replace(f, dest / f.name)
            stat = (dest / f.name).stat()
            entries[table].append(entry | {"bytes": stat.st_size, "mtime_ns": stat.st_mtime_ns})
    return entries


def _remove_month(folder: Path, month: dict) -> None:
    for files in month["files"].values():
        for f in files:
            (folder / f["path"]).unlink(missing_ok=True)


def write_views(cfg: Config, root: DataRoot, index: dict) -> None:
    """``warehouse.duckdb``: a view per table over its months' files, and the reference
    tables; written beside and renamed over the old one."""
    dest = root.warehouse
    tmp = dest.with_name(f".{dest.name}.tmp")
    tmp.unlink(missing_ok=True)
    with duck.connect(cfg, tmp) as con:
        for table in parts.TABLES:
            files = [root.warehouse_parts / f["path"]
                     for m in index["months"].values() for f in m["files"][table]]  # fmt: skip
            con.execute(
                f"CREATE VIEW {table} AS SELECT * FROM read_parquet("
                f"{duck.quoted_list(files)}, union_by_name = true)"
            )
        for name, load in REFERENCE.items():
            con.register(f"{name}_arrow", load())
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM {name}_arrow")
            con.unregister(f"{name}_arrow")
    os.replace(tmp, dest)
