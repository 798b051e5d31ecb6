"""Every stage, declared once: what it reads, its partition, its lock, what it writes and
what its record holds (:mod:`gdelt_forecast.stage_record`).

:mod:`gdelt_forecast.runner` runs a stage from this declaration, from the command line and
from Airflow alike. A stage's function is named as ``module:function`` and imported when it
runs, so declaring the stages imports none of them.

- ``reads``: what an s3:// data root's working copy pulls first (folders, files or globs
  relative to the root, :mod:`gdelt_forecast.data_root`); ``WAREHOUSE`` among them means
  that the machine's warehouse must be current, which the runner sees to before the stage.
- ``partition``: ``day`` stages take ``(first, last)`` and hold each day's lock, ``month``
  stages take ``month`` and hold its lock; ``None``: no lock of the runner's (the one
  recorded such stage, ``database``, keeps its record at ``record``, relative to the root).
- ``config``: what of the config a recorded stage's output depends on (its record's hash);
  the stages with one write a record per partition.
- ``inputs``: the fingerprint of what a partition read, for its record.
- ``writes``: a day stage's folders of one day (a month stage writes its month's folder).
- ``params``: a month stage's parameters, resolved from the caller's options (the release
  asks the same function what it expects a stage to have been run with).
- ``publish``: for an s3:// data root, what puts the stage's result in the bucket when a
  plain push of the working copy would not do (a release appears whole or not at all).
- ``release_step``: what the release runs of the stage on the release it packages, before
  sealing it (the reference baselines' scores), so the release imports no stage.
- ``scaffolding``: for a stage whose rows a model may write, the words of a prompt version
  that the grounding rules never count as a document's support; ``release verify`` re-checks
  the rows with the same words (ValueError for a version this code does not have).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, Literal

from gdelt_forecast import dates, stage_record
from gdelt_forecast.config import Config
from gdelt_forecast.data_root import (
    ARTICLES,
    FETCH_JOURNAL,
    FETCH_LEDGER,
    LATEST,
    LEDGER,
    LLM_CACHE,
    PART,
    WAREHOUSE,
    WAREHOUSE_RECORD,
    WAREHOUSE_SOURCES,
    DataRoot,
    article,
    bronze,
    silver,
)
from gdelt_forecast.objectstore import raw_files, versions


def _imported(target: str) -> Callable:
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


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
    config: Callable[[Config], dict] | None = None  # the stages with a record
    inputs: Callable[[Config, DataRoot, Any], dict] = field(default=lambda cfg, root, part: {})
    # A month stage's parameters as it runs and records them, from the caller's options
    params: Callable[..., dict] = field(default=lambda cfg, month, **options: {})
    writes: Callable[[date], list[str]] = field(default=lambda day: [])
    publish: str | None = None  # "module:function"
    release_step: str | None = None  # "module:function"
    scaffolding: str | None = None  # "module:function"
    record: str | None = None  # an unpartitioned stage's record

    @property
    def function(self) -> Callable:
        return _imported(self.target)

    @property
    def publisher(self) -> Callable | None:
        return _imported(self.publish) if self.publish else None

    @property
    def on_release(self) -> Callable:
        return _imported(self.release_step)

    def prompt_words(self, version: str) -> frozenset[str]:
        return _imported(self.scaffolding)(version)

    @property
    def recorded(self) -> bool:
        return self.config is not None

    def stale(self, cfg: Config, root: DataRoot, part=None) -> str | None:
        """Why an unpartitioned stage's output is not what it would build now (None when it
        is): no record, or other inputs or config (:func:`gdelt_forecast.stage_record.stale`)."""
        return stage_record.stale(
            stage_record.read(root.path(self.record)),
            params={},
            config=self.config(cfg),
            inputs=self.inputs(cfg, root, part),
        )


def _normalize_reads(cfg: Config, first: date, last: date) -> list[str]:
    """The days' bronze, and the events of the URL look-back window before them."""
    earliest = first - timedelta(days=cfg.events.url_lookback_days)
    return [
        *(bronze("events", d) for d in dates.days(earliest, last)),
        *(bronze("mentions", d) for d in dates.days(first, last)),
    ]


def _silver_events(cfg: Config, first: date, last: date, *_) -> list[str]:
    return [silver("events", d) for d in dates.days(first, last)]


def _day_contents(reads: Callable[..., list[str]]) -> Callable[[Config, DataRoot, date], dict]:
    """A day stage's inputs: the fingerprint of the files it reads for that one day (each a
    folder of a day's partition)."""

    def inputs(cfg: Config, root: DataRoot, day: date) -> dict:
        found = versions(root.root, tuple(f"{folder}/*" for folder in reads(cfg, day, day)))
        return {"files": stage_record.digest(found)}

    return inputs


def _write_bronze_reads(cfg: Config, fetched, summary) -> list[str]:
    """The ledger and the raw files the download task put in the bucket."""
    return [LEDGER, *raw_files(cfg, fetched)]


def _warehouse_sources(cfg: Config, root: DataRoot, part=None) -> dict:
    """What the warehouse is built from: each silver and document file's path with its
    sha256, or in a bucket its ETag (the same on every machine, unlike the bytes of two builds
    of ``warehouse.duckdb``)."""
    patterns = tuple(f"{folder}/date=*/{PART}" for folder in WAREHOUSE_SOURCES)
    return {"sources": stage_record.digest(versions(cfg.data_root, patterns))}


def _warehouse_inputs(cfg: Config, root: DataRoot, month: str) -> dict:
    """A month stage that reads the warehouse: the sources the warehouse was built from."""
    record = stage_record.read(root.warehouse_record)
    return {"warehouse": record["inputs"]["sources"] if record else None}


def _timelines_inputs(cfg: Config, root: DataRoot, month: str) -> dict:
    record = stage_record.read(root.month_record("timelines", month))
    return {"timelines": stage_record.fingerprint(record) if record else None}


def _timelines_params(
    cfg: Config, month: str, history_start: date | None = None, **options
) -> dict:
    """The release's history start (``release.history_start``, else January 1st)."""
    return {"history_start": dates.history(month, history_start or cfg.release.history_start)[0]}


def _articles_config(cfg: Config) -> dict:
    return cfg.articles.model_dump(mode="json")


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
        Stage(
            "normalize",
            "gdelt_forecast.events.normalize:normalize",
            "day",
            _normalize_reads,
            lambda cfg: cfg.events.model_dump(mode="json"),
            _day_contents(_normalize_reads),
            writes=lambda day: [silver("events", day), silver("funnel", day)],
        ),
        # Settling finished runs reads their journals; pages come from the web. Its pages
        # and ledger rows are shared by the days (WARC files per run, one ledger), so a
        # day's record lists no files of its own.
        Stage(
            "fetch",
            "gdelt_forecast.articles.sources:fetch_days",
            "day",
            lambda cfg, *a: [*_silver_events(cfg, *a), FETCH_LEDGER, FETCH_JOURNAL],
            _articles_config,
            _day_contents(_silver_events),
        ),
        Stage(
            "process",
            "gdelt_forecast.articles.process:process",
            "day",
            lambda cfg, *a: [*_silver_events(cfg, *a), ARTICLES],
            _articles_config,
            _day_contents(_silver_events),
            writes=lambda day: [article("docs", day), article("exclusions", day)],
        ),
        # DuckDB reads the bucket's silver and documents itself.
        Stage(
            "database",
            "gdelt_forecast.warehouse.build:build_database",
            config=lambda cfg: {},  # the warehouse is its sources' tables, whatever the config
            inputs=_warehouse_sources,
            record=WAREHOUSE_RECORD,
        ),
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
            scaffolding="gdelt_forecast.timelines.written:scaffolding",
        ),
        Stage(
            "tasks",
            "gdelt_forecast.tasks.build:build_tasks",
            "month",
            lambda cfg, month: [f"timelines/{month}", LLM_CACHE],
            lambda cfg: {**_timelines_config(cfg), "tasks": cfg.tasks.model_dump(mode="json")},
            _timelines_inputs,
            scaffolding="gdelt_forecast.tasks.generated:scaffolding",
        ),
        Stage(
            "reasoning",
            "gdelt_forecast.reasoning.build:build_reasoning",
            "month",
            lambda cfg, month: [f"timelines/{month}"],
            lambda cfg: {
                **_timelines_config(cfg),
                "reasoning": cfg.reasoning.model_dump(),
                "judge": cfg.llm.model if cfg.reasoning.method == "llm" else None,
            },
            _timelines_inputs,
        ),
        Stage(
            "evaluate_tasks",
            "gdelt_forecast.tasks.evaluate:evaluate_tasks",
            reads=lambda *_: [LLM_CACHE],
        ),
        Stage(
            "baseline",
            "gdelt_forecast.baselines:run_baseline",
            reads=lambda *_: [LLM_CACHE],
            release_step="gdelt_forecast.baselines:run_baselines",
        ),
        Stage(
            "tasks_baseline",
            "gdelt_forecast.tasks.baseline:answer_tasks",
            reads=lambda *_: [LLM_CACHE],
        ),
        Stage(
            "reasoning_baseline",
            "gdelt_forecast.reasoning.baseline:answer_reasoning",
            reads=lambda *_: [LLM_CACHE],
        ),
        Stage("agent", "gdelt_forecast.agents.run:run_agents", reads=lambda *_: [LLM_CACHE]),
        # The month's stages and their records, the ledger, and the names of the releases
        # there are (a new version takes the next free one).
        Stage(
            "release",
            "gdelt_forecast.release.build:build_release",
            "month",
            publish="gdelt_forecast.release.publish:publish",
            reads=lambda cfg, month, *_: [
                WAREHOUSE,
                LEDGER,
                LLM_CACHE,
                LATEST,
                "releases/*/manifest.json",
                *(f"{s}/{month}" for s in ("testset", "timelines", "tasks", "reasoning")),
            ],
        ),
    )
}
