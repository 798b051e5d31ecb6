"""Every stage, declared once: what it reads, its partition, its lock and, for the month
stages, the folder it writes with its record (:mod:`gdelt_forecast.stage_record`).

:mod:`gdelt_forecast.runner` runs a stage from this declaration, from the command line and
from Airflow alike. A stage's function is named as ``module:function`` and imported when it
runs, so declaring the stages imports none of them.

- ``reads``: what an s3:// data root's working copy pulls first (folders, files or globs
  relative to the root, :mod:`gdelt_forecast.data_root`); ``WAREHOUSE`` among them means
  that the machine's warehouse must be current, which the runner sees to before the stage.
- ``partition``: ``day`` stages take ``(first, last)`` and hold each day's lock, ``month``
  stages take ``month`` and hold its lock; ``None``: no lock of the runner's.
- ``config``: what of the config a month stage's output depends on (its record's hash).
- ``inputs``: the fingerprint of what a month stage read, for its record.
- ``params``: a month stage's parameters, resolved from the caller's options (the release
  asks the same function what it expects a stage to have been run with).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Literal

from gdelt_forecast import dates, stage_record
from gdelt_forecast.config import Config
from gdelt_forecast.data_root import (
    ARTICLES,
    FETCH_JOURNAL,
    FETCH_LEDGER,
    LATEST,
    LEDGER,
    LLM_CACHE,
    WAREHOUSE,
    DataRoot,
    bronze,
    silver,
)
from gdelt_forecast.objectstore import raw_files


def _nothing(cfg: Config, *args) -> list[str]:
    return []


def _ledger(cfg: Config, *args) -> list[str]:
    return [LEDGER]


@dataclass(frozen=True)
class Stage:
    name: str  # the CLI's and the lock's name
    target: str  # "module:function"
    partition: Literal["day", "month"] | None = None
    reads: Callable[..., list[str]] = _nothing
    config: Callable[[Config], dict] | None = None  # month stages with a record
    inputs: Callable[[DataRoot, str], dict] = field(default=lambda root, month: {})
    # A month stage's parameters as it runs and records them, from the caller's options
    params: Callable[..., dict] = field(default=lambda cfg, month, **options: {})

    @property
    def function(self) -> Callable:
        module, name = self.target.split(":")
        return getattr(importlib.import_module(module), name)

    @property
    def recorded(self) -> bool:
        return self.config is not None


def _normalize_reads(cfg: Config, first: date, last: date) -> list[str]:
    """The days' bronze, and the events of the URL look-back window before them."""
    earliest = first - timedelta(days=cfg.events.url_lookback_days)
    return [
        *(bronze("events", d) for d in dates.days(earliest, last)),
        *(bronze("mentions", d) for d in dates.days(first, last)),
    ]


def _silver_events(cfg: Config, first: date, last: date, *_) -> list[str]:
    return [silver("events", d) for d in dates.days(first, last)]


def _write_bronze_reads(cfg: Config, fetched, summary) -> list[str]:
    """The ledger and the raw files the download task put in the bucket."""
    return [LEDGER, *raw_files(cfg, fetched)]


def _warehouse_inputs(root: DataRoot, month: str) -> dict:
    from gdelt_forecast.warehouse.build import built_from  # a stage's module: when one runs

    return {"warehouse": built_from(root)}


def _timelines_inputs(root: DataRoot, month: str) -> dict:
    record = stage_record.read(root.month("timelines", month))
    return {"timelines": stage_record.fingerprint(record) if record else None}


def _timelines_params(
    cfg: Config, month: str, history_start: date | None = None, **options
) -> dict:
    """The release's history start (``release.history_start``, else January 1st)."""
    return {"history_start": dates.history(month, history_start or cfg.release.history_start)[0]}


def _timelines_config(cfg: Config) -> dict:
    return {
        "timelines": cfg.timelines.model_dump(mode="json"),
        "model": cfg.llm.model if cfg.timelines.method == "llm" else None,
    }


STAGES: dict[str, Stage] = {
    s.name: s
    for s in (
        Stage("ingest", "gdelt_forecast.gdelt.ingest:ingest", reads=_ledger),
        Stage("bronze", "gdelt_forecast.gdelt.ingest:write_bronze", reads=_write_bronze_reads),
        Stage("day_status", "gdelt_forecast.gdelt.days:day_status", reads=_ledger),
        Stage("normalize", "gdelt_forecast.events.normalize:normalize", "day", _normalize_reads),
        # Settling finished runs reads their journals; pages come from the web.
        Stage(
            "fetch",
            "gdelt_forecast.articles.sources:fetch_days",
            "day",
            lambda cfg, *a: [*_silver_events(cfg, *a), FETCH_LEDGER, FETCH_JOURNAL],
        ),
        Stage(
            "process",
            "gdelt_forecast.articles.process:process",
            "day",
            lambda cfg, *a: [*_silver_events(cfg, *a), ARTICLES],
        ),
        # DuckDB reads the bucket's silver and documents itself.
        Stage("database", "gdelt_forecast.warehouse.build:build_database"),
        Stage("stats", "gdelt_forecast.warehouse.stats:stats", reads=lambda *_: [WAREHOUSE]),
        Stage(
            "testset",
            "gdelt_forecast.testset.build:build_testset",
            "month",
            lambda *_: [WAREHOUSE],
            lambda cfg: cfg.testset.model_dump(mode="json"),
            _warehouse_inputs,
        ),
        Stage(
            "timelines",
            "gdelt_forecast.timelines.build:build_timelines",
            "month",
            lambda *_: [WAREHOUSE, LLM_CACHE],
            _timelines_config,
            _warehouse_inputs,
            _timelines_params,
        ),
        Stage(
            "tasks",
            "gdelt_forecast.tasks.build:build_tasks",
            "month",
            lambda cfg, month: [f"timelines/{month}", LLM_CACHE],
            lambda cfg: {**_timelines_config(cfg), "tasks": cfg.tasks.model_dump(mode="json")},
            _timelines_inputs,
        ),
        Stage(
            "evaluate_tasks",
            "gdelt_forecast.tasks.evaluate:evaluate_tasks",
            reads=lambda *_: [LLM_CACHE],
        ),
        Stage("baseline", "gdelt_forecast.baselines:run_baseline", reads=lambda *_: [LLM_CACHE]),
        # The month's stages and their records, the ledger, and the names of the releases
        # there are (a new version takes the next free one).
        Stage(
            "release",
            "gdelt_forecast.release.build:build_release",
            "month",
            lambda cfg, month, *_: [
                WAREHOUSE,
                LEDGER,
                LLM_CACHE,
                LATEST,
                "releases/*/manifest.json",
                *(f"{s}/{month}" for s in ("testset", "timelines", "tasks")),
            ],
        ),
    )
}
