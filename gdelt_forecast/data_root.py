"""Where everything lies under a data root: one typed description instead of strings.

Each place is a path relative to the root (POSIX, as a bucket's keys are), so the same
description names a local file (:meth:`DataRoot.path`) and what a bucket's working copy
pulls (:mod:`gdelt_forecast.stages`). ``../shared/DESIGN.md`` has the layout's contract.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

LEDGER = "bronze/slots.parquet"
WAREHOUSE = "warehouse.duckdb"
LLM_CACHE = "llm_cache"
RELEASES = "releases"
LATEST = "releases/LATEST"
FETCH_LEDGER = "articles/fetch_ledger.parquet"
FETCH_JOURNAL = "articles/fetch_journal"
ARTICLES = "articles"
WAREHOUSE_SOURCES = ("silver/events", "silver/funnel", "articles/docs")  # what it is built from


def bronze(table: str, day: date) -> str:
    """A day's bronze partition of ``events`` or ``mentions``."""
    return f"bronze/{table}/date={day.isoformat()}"


def silver(table: str, day: date) -> str:
    """A day's silver partition of ``events`` or ``funnel``: ``part-0.parquet`` inside."""
    return f"silver/{table}/date={day.isoformat()}"


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
    def warehouse(self) -> Path:
        return self.root / WAREHOUSE

    @property
    def releases(self) -> Path:
        return self.root / RELEASES

    def month(self, stage: str, month: str) -> Path:
        return self.root / month_output(stage, month)
