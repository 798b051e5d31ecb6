"""``gdelt-forecast database``: build ``<data_root>/warehouse.duckdb`` from silver Parquet.

The warehouse is derived data: it is rebuilt whole into a temporary file and renamed over
the old one, so it can always be deleted and rebuilt, and a reader never opens half of it.
Only this command writes it (a file lock keeps a second writer out); readers open it
read-only with :func:`open_read_only`.

On an s3:// data root the warehouse is a file of the machine's working copy, never of the
bucket: DuckDB reads the silver Parquet straight from the bucket through s3fs, registered as
an fsspec filesystem (DuckDB's own httpfs extension is downloaded at first use, which a
machine without the internet cannot do, and its PyPI packages lag DuckDB's releases). A
reader on a machine whose warehouse predates the bucket's silver rebuilds it first.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from gdelt_forecast import duck
from gdelt_forecast.articles.schema import DOCS
from gdelt_forecast.config import Config
from gdelt_forecast.errors import StageError
from gdelt_forecast.objectstore import where, working_copy_of
from gdelt_forecast.reference import tables
from gdelt_forecast.summary import StageSummary

log = logging.getLogger(__name__)
_SOURCES = ("silver/events", "silver/funnel", "articles/docs")


class WarehouseError(StageError):
    """The warehouse cannot be built or opened."""


@dataclass
class Summary(StageSummary):
    days: int
    events: int
    quads: int
    quad_urls: int
    news: int
    seconds: float

    def line(self) -> str:
        return (
            f"database: {self.days} days, {self.events:,} events, {self.quads:,} quads, "
            f"{self.quad_urls:,} quad URLs, {self.news:,} news documents ({self.seconds:.1f} s)"
        )


def warehouse_path(cfg: Config) -> Path:
    return cfg.data_root / "warehouse.duckdb"


def _parts(cfg: Config, folder: str) -> list[str]:
    """The ``date=*/part-0.parquet`` files under ``folder``: local paths, or s3:// URLs in
    the bucket of a working copy."""
    found = working_copy_of(cfg.data_root)
    if not found:
        return [str(p) for p in sorted((cfg.data_root / folder).glob("date=*/part-0.parquet"))]
    store = found[0].bucket
    keys = store.listing(folder)
    pattern = f"{folder}/date=*/part-0.parquet"
    return [f"s3://{store.key(r)}" for r in sorted(keys) if fnmatch.fnmatchcase(r, pattern)]


def _source_mark(cfg: Config) -> str:
    """What a working copy's warehouse was built from: the ETags of the bucket's sources."""
    store = working_copy_of(cfg.data_root)[0].bucket
    listed = {
        f"{folder}/{r}": info["ETag"]
        for folder in _SOURCES
        for r, info in store.listing(folder).items()
    }
    return hashlib.sha256(json.dumps(listed, sort_keys=True).encode()).hexdigest()


def _mark_path(cfg: Config) -> Path:
    return cfg.data_root / ".sync" / "warehouse-source"


def build_database(cfg: Config) -> Summary:
    t0 = time.monotonic()
    remote = working_copy_of(cfg.data_root)
    mark = _source_mark(cfg) if remote else None
    events, funnel = _parts(cfg, "silver/events"), _parts(cfg, "silver/funnel")
    if not events:
        raise WarehouseError(f"no silver events under {where(cfg.data_root)}/silver: run normalize")
    dest = warehouse_path(cfg)
    tmp = dest.with_name(f".{dest.name}.tmp")
    with FileLock(f"{dest}.lock"):
        tmp.unlink(missing_ok=True)
        with duck.connect(cfg, tmp) as con:
            if remote:
                con.register_filesystem(remote[0].bucket.fs)
            read = "SELECT * FROM read_parquet({}, hive_partitioning = false)"
            con.execute(f"CREATE TABLE events AS {read.format(duck.quoted_list(events))}")
            con.execute(f"CREATE TABLE funnel AS {read.format(duck.quoted_list(funnel))}")
            duck.run(con, "warehouse/quad_urls.sql", "CREATE TABLE quad_urls AS")
            docs = _parts(cfg, "articles/docs")
            if docs:
                con.execute(f"CREATE VIEW article_docs AS {read.format(duck.quoted_list(docs))}")
            else:
                con.register("article_docs", DOCS.empty_table())
            duck.run(con, "warehouse/news.sql", "CREATE TABLE news AS")
            duck.run(con, "warehouse/quad_docs.sql", "CREATE TABLE quad_docs AS")
            duck.run(con, "warehouse/quads.sql", "CREATE TABLE quads AS")
            for name, load in [
                ("countries", tables.countries),
                ("cameo_countries", tables.cameo_countries),
                ("relations", tables.relations),
            ]:
                con.register(f"{name}_arrow", load())
                con.execute(f"CREATE TABLE {name} AS SELECT * FROM {name}_arrow")
                con.unregister(f"{name}_arrow")
            counts = [
                con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("events", "quads", "quad_urls", "news")
            ]
            con.execute("DROP VIEW IF EXISTS article_docs")
        os.replace(tmp, dest)
        if mark:
            _mark_path(cfg).write_text(mark, encoding="utf-8")
    return Summary(len(events), *counts, seconds=time.monotonic() - t0)


def open_read_only(cfg: Config):
    path = warehouse_path(cfg)
    if working_copy_of(cfg.data_root):
        mark = _mark_path(cfg)
        current = mark.read_text(encoding="utf-8") if mark.exists() else None
        if not path.exists() or current != _source_mark(cfg):
            log.info(
                "the bucket's silver Parquet changed since this machine's warehouse was "
                "built: rebuilding %s",
                path,
            )
            build_database(cfg)
    if not path.exists():
        raise WarehouseError(f"no warehouse at {path}: run `gdelt-forecast database`")
    return duck.connect(cfg, path, read_only=True)
