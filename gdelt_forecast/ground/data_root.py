"""Where everything lies under a data root: one typed description instead of strings.

Each place is a path relative to the root (POSIX, as a bucket's keys are), so the same
description names a local file (:meth:`DataRoot.path`) and what a bucket's working copy
pulls (:mod:`gdelt_forecast.pipeline.stages`). docs/architecture.md ("The data root") draws
the layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

BRONZE = "bronze"
LEDGER = "bronze/slots.parquet"
RAW_GDELT = "raw/gdelt"
SILVER = "silver"
WAREHOUSE = "warehouse.duckdb"
WAREHOUSE_RECORD = "warehouse.json"  # the database stage's record, of this machine's warehouse
WAREHOUSE_PARTS = "warehouse"  # the warehouse's tables, a file (or a few) per table and month
LLM_CACHE = "llm_cache"
RELEASES = "releases"
LATEST = "releases/LATEST"
ARTICLES = "articles"
PAGES = "articles/pages"
FETCH_LEDGER = "articles/fetch_ledger.parquet"
FETCH_JOURNAL = "articles/fetch_journal"
BASELINES = "baselines"
AGENTS = "agents"  # agents/<release>/<run>/ and agents/<release>/leaderboard.parquet
ROUNDS = "rounds"  # rounds/<round id>/: a live round's questions, submissions, resolution
ROUND_JSON = "round.json"  # in a round's folder: what its opening pinned, then its resolution
ROUND_QUESTIONS = "questions.parquet"  # in a round's folder
LOCKS = "locks"
SCRATCH = "tmp"  # DuckDB's spill files and other scratch, never pushed to a bucket
WAREHOUSE_SOURCES = ("silver/events", "silver/funnel", "articles/docs")  # what it is built from
PART = "part-0.parquet"  # the one file of a day partition of silver and articles
RECORD = "_record.json"  # a month stage's record, in its folder
DAY_RECORDS = "records"  # the day stages' records: records/<stage>/date=<day>.json


def bronze(table: str, day: date) -> str:
    """A day's bronze partition of ``events`` or ``mentions``."""
    return f"{BRONZE}/{table}/date={day.isoformat()}"


def silver(table: str, day: date) -> str:
    """A day's silver partition of ``events`` or ``funnel``: ``part-0.parquet`` inside."""
    return f"{SILVER}/{table}/date={day.isoformat()}"


def article(table: str, day: date) -> str:
    """A day's partition of the article stage's ``docs`` or ``exclusions``."""
    return f"{ARTICLES}/{table}/date={day.isoformat()}"


def round_folder(round_id: str) -> str:
    """A round's folder: ``round.json`` and ``questions.parquet`` inside."""
    return f"{ROUNDS}/{round_id}"


def month_output(stage: str, month: str) -> str:
    """A month stage's folder (``testset``, ``timelines``, ``tasks``), its record inside."""
    return f"{stage}/{month}"


@dataclass(frozen=True)
class DataRoot:
    """A data root on this machine (a local folder, or a bucket's working copy)."""

    root: Path

    def path(self, rel: str) -> Path:
        return self.root / rel

    @property
    def bronze_root(self) -> Path:
        return self.root / BRONZE

    @property
    def ledger(self) -> Path:
        """GDELT's files as ingested: one row per slot file with its md5 and outcome."""
        return self.root / LEDGER

    @property
    def raw_gdelt(self) -> Path:
        return self.root / RAW_GDELT

    @property
    def silver_root(self) -> Path:
        return self.root / SILVER

    @property
    def articles(self) -> Path:
        return self.root / ARTICLES

    @property
    def pages(self) -> Path:
        """The fetched pages' web archives (WARC)."""
        return self.root / PAGES

    @property
    def fetch_ledger(self) -> Path:
        return self.root / FETCH_LEDGER

    @property
    def fetch_journal(self) -> Path:
        return self.root / FETCH_JOURNAL

    @property
    def warehouse(self) -> Path:
        return self.root / WAREHOUSE

    @property
    def warehouse_parts(self) -> Path:
        return self.root / WAREHOUSE_PARTS

    @property
    def warehouse_record(self) -> Path:
        return self.root / WAREHOUSE_RECORD

    @property
    def llm_cache(self) -> Path:
        return self.root / LLM_CACHE

    @property
    def releases(self) -> Path:
        return self.root / RELEASES

    def release(self, version: str) -> Path:
        return self.root / RELEASES / version

    @property
    def baselines(self) -> Path:
        return self.root / BASELINES

    @property
    def agents(self) -> Path:
        return self.root / AGENTS

    @property
    def locks(self) -> Path:
        return self.root / LOCKS

    @property
    def scratch(self) -> Path:
        return self.root / SCRATCH

    def month(self, stage: str, month: str) -> Path:
        return self.root / month_output(stage, month)

    def month_record(self, stage: str, month: str) -> Path:
        return self.month(stage, month) / RECORD

    def day_record(self, stage: str, day: date) -> Path:
        return self.root / DAY_RECORDS / stage / f"date={day.isoformat()}.json"
