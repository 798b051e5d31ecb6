"""``gdelt-forecast database``: build ``<data_root>/warehouse.duckdb`` from silver Parquet.

The warehouse is derived data: it is rebuilt whole into a temporary file and renamed over
the old one, so it can always be deleted and rebuilt, and a reader never opens half of it.
Only this command writes it (a file lock keeps a second writer out); readers open it
read-only with :func:`open_read_only`.

On an s3:// data root the warehouse is a file of the machine's working copy, never of the
bucket: DuckDB reads the silver Parquet straight from the bucket through s3fs, registered as
an fsspec filesystem (DuckDB's own httpfs extension is downloaded at first use, which a
machine without the internet cannot do, and its PyPI packages lag DuckDB's releases). The
warehouse keeps the fingerprint of its sources (:func:`sources`, table ``build_sources``):
the stages that read it record it, and the runner rebuilds a machine's warehouse that
predates the bucket's silver before a stage reads it.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
from filelock import FileLock

from gdelt_forecast import duck
from gdelt_forecast.config import Config
from gdelt_forecast.contract.documents import DOCS
from gdelt_forecast.data_root import PART, WAREHOUSE_SOURCES, DataRoot
from gdelt_forecast.errors import StageError
from gdelt_forecast.objectstore import filesystem, readable, versions, where
from gdelt_forecast.reference import tables
from gdelt_forecast.stage_record import digest
from gdelt_forecast.summary import StageSummary

log = logging.getLogger(__name__)


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
    return DataRoot(cfg.data_root).warehouse


def _parts(cfg: Config, folder: str) -> list[str]:
    """Where the ``date=*/part-0.parquet`` files under ``folder`` are read from."""
    return readable(cfg.data_root, f"{folder}/date=*/{PART}")


def sources(cfg: Config) -> str:
    """The fingerprint of what the warehouse is built from: each silver and document file's
    path with its sha256, or in a bucket its ETag (the same on every machine, unlike the
    bytes of two builds of ``warehouse.duckdb``)."""
    return digest(versions(cfg.data_root, tuple(f"{f}/date=*/{PART}" for f in WAREHOUSE_SOURCES)))


def built_from(root: DataRoot) -> str | None:
    """The fingerprint of the sources the warehouse was built from; None when there is no
    warehouse, or one that does not say (built by an older version, or by hand)."""
    if not root.warehouse.exists():
        return None
    with duckdb.connect(str(root.warehouse), read_only=True) as con:
        try:
            return con.execute("SELECT fingerprint FROM build_sources").fetchone()[0]
        except duckdb.CatalogException:
            return None


def bring_up_to_date(cfg: Config) -> None:
    """Rebuild the warehouse when its sources changed since it was built: for a bucket's
    working copy, whose warehouse is this machine's own (:mod:`gdelt_forecast.runner`)."""
    if built_from(DataRoot(cfg.data_root)) != sources(cfg):
        log.info("the warehouse's sources changed since it was built: rebuilding it")
        build_database(cfg)


def build_database(cfg: Config) -> Summary:
    t0 = time.monotonic()
    fingerprint = sources(cfg)
    events, funnel = _parts(cfg, "silver/events"), _parts(cfg, "silver/funnel")
    if not events:
        raise WarehouseError(f"no silver events under {where(cfg.data_root)}/silver: run normalize")
    dest = warehouse_path(cfg)
    tmp = dest.with_name(f".{dest.name}.tmp")
    with FileLock(f"{dest}.lock"):
        tmp.unlink(missing_ok=True)
        with duck.connect(cfg, tmp) as con:
            if fs := filesystem(cfg.data_root):
                con.register_filesystem(fs)
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
            con.execute("CREATE TABLE build_sources AS SELECT ? AS fingerprint", [fingerprint])
        os.replace(tmp, dest)
    return Summary(len(events), *counts, seconds=time.monotonic() - t0)


def open_read_only(cfg: Config):
    path = warehouse_path(cfg)
    if not path.exists():
        raise WarehouseError(f"no warehouse at {path}: run `gdelt-forecast database`")
    return duck.connect(cfg, path, read_only=True)
