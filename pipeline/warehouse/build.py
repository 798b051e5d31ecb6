"""``gdelt-forecast database``: build ``<data_root>/warehouse.duckdb`` from silver Parquet.

The warehouse is derived data: it is rebuilt whole into a temporary file and renamed over
the old one, so it can always be deleted and rebuilt, and a reader never opens half of it.
Only this command writes it (a file lock keeps a second writer out); readers open it
read-only with :func:`open_read_only`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from pipeline import duck
from pipeline.articles.schema import DOCS
from pipeline.config import Config
from pipeline.errors import StageError
from pipeline.reference import tables
from pipeline.summary import StageSummary


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


def _silver(cfg: Config, table: str) -> list[Path]:
    return sorted((cfg.data_root / "silver" / table).glob("date=*/part-0.parquet"))


def build_database(cfg: Config) -> Summary:
    t0 = time.monotonic()
    events, funnel = _silver(cfg, "events"), _silver(cfg, "funnel")
    if not events:
        raise WarehouseError(f"no silver events under {cfg.data_root / 'silver'}: run normalize")
    dest = warehouse_path(cfg)
    tmp = dest.with_name(f".{dest.name}.tmp")
    with FileLock(f"{dest}.lock"):
        tmp.unlink(missing_ok=True)
        with duck.connect(cfg, tmp) as con:
            read = "SELECT * FROM read_parquet({}, hive_partitioning = false)"
            con.execute(f"CREATE TABLE events AS {read.format(duck.quoted_list(events))}")
            con.execute(f"CREATE TABLE funnel AS {read.format(duck.quoted_list(funnel))}")
            duck.run(con, "warehouse/quad_urls.sql", "CREATE TABLE quad_urls AS")
            docs = sorted((cfg.data_root / "articles" / "docs").glob("date=*/part-0.parquet"))
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
    return Summary(len(events), *counts, seconds=time.monotonic() - t0)


def open_read_only(cfg: Config):
    path = warehouse_path(cfg)
    if not path.exists():
        raise WarehouseError(f"no warehouse at {path}: run `gdelt-forecast database`")
    return duck.connect(cfg, path, read_only=True)
