"""``gdelt-forecast database``: build ``<data_root>/warehouse.duckdb`` from silver Parquet.

The warehouse is derived data: it is rebuilt whole into a temporary file and renamed over
the old one, so it can always be deleted and rebuilt, and a reader never opens half of it.
Only this command writes it (a file lock keeps a second writer out); readers open it
read-only with :func:`gdelt_forecast.ground.duck.open_warehouse`.

On an s3:// data root the warehouse is a file of the machine's working copy, never of the
bucket: DuckDB reads the silver Parquet straight from the bucket through s3fs, registered as
an fsspec filesystem (DuckDB's own httpfs extension is downloaded at first use, which a
machine without the internet cannot do, and its PyPI packages lag DuckDB's releases). The
stage's record (``warehouse.json`` beside it, written by :mod:`gdelt_forecast.pipeline.runner`,
never pushed) holds the fingerprint of its sources: the stages that read the warehouse record it,
and the runner rebuilds a machine's warehouse that predates the bucket's silver before a
stage reads it.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from filelock import FileLock

from gdelt_forecast.contract.documents import DOCS
from gdelt_forecast.ground import duck
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import PART, DataRoot
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.reference import tables
from gdelt_forecast.storage.working_copy import filesystem, readable, where

log = logging.getLogger(__name__)


class WarehouseError(StageError):
    """The warehouse cannot be built."""


@dataclass
class Summary(StageSummary):
    days: int
    events: int
    quads: int
    quad_urls: int
    news: int
    seconds: float = 0.0

    def line(self) -> str:
        return (
            f"database: {self.days} days, {self.events:,} events, {self.quads:,} quads, "
            f"{self.quad_urls:,} quad URLs, {self.news:,} news documents ({self.seconds:.1f} s)"
        )


def _parts(cfg: Config, folder: str) -> list[str]:
    """Where the ``date=*/part-0.parquet`` files under ``folder`` are read from."""
    return readable(cfg.data_root, f"{folder}/date=*/{PART}")


def build_database(cfg: Config) -> Summary:
    events, funnel = _parts(cfg, "silver/events"), _parts(cfg, "silver/funnel")
    if not events:
        raise WarehouseError(f"no silver events under {where(cfg.data_root)}/silver: run normalize")
    dest = DataRoot(cfg.data_root).warehouse
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
        os.replace(tmp, dest)
    return Summary(len(events), *counts)
