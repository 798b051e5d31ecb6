"""What each stage reads from the data root: the files an s3:// data root's working copy
pulls before the stage runs (:func:`gdelt_forecast.objectstore.run`). Paths are relative to
the root: a folder, a file, or a glob. ``warehouse.duckdb`` is never among them: a reader
rebuilds it from the bucket when it is stale
(:func:`gdelt_forecast.warehouse.build.open_read_only`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

from gdelt_forecast import dates
from gdelt_forecast.config import Config

LEDGER = "bronze/slots.parquet"
LLM_CACHE = "llm_cache"


def _normalize(cfg: Config, first: date, last: date) -> list[str]:
    """The days' bronze, and the events of the URL look-back window before them."""
    earliest = first - timedelta(days=cfg.events.url_lookback_days)
    return [
        *(f"bronze/events/date={d}" for d in dates.days(earliest, last)),
        *(f"bronze/mentions/date={d}" for d in dates.days(first, last)),
    ]


def _write_bronze(cfg: Config, fetched, summary) -> list[str]:
    """The ledger and the raw files the download task put in the bucket (the working copy's
    path is the same on every worker, so their paths name their keys)."""
    from gdelt_forecast.objectstore import StorageError, local_root

    root = local_root(cfg)
    raw = [Path(f.path) for f in fetched if f.path]
    if outside := [str(p) for p in raw if root not in p.parents]:
        raise StorageError(
            f"downloaded files outside {root} ({outside[0]}, ...): every "
            "worker needs the same storage.local_dir"
        )
    return [LEDGER, *(p.relative_to(root).as_posix() for p in raw)]


_READS: dict[str, Callable[..., list[str]]] = {
    "gdelt_forecast.gdelt.ingest.ingest": lambda cfg, *_: [LEDGER],
    "gdelt_forecast.gdelt.ingest.write_bronze": _write_bronze,
    "gdelt_forecast.gdelt.days.day_status": lambda cfg, *_: [LEDGER],
    "gdelt_forecast.events.normalize.normalize": _normalize,
    "gdelt_forecast.warehouse.build.build_database": lambda cfg: [],  # DuckDB reads the bucket
    "gdelt_forecast.warehouse.stats.stats": lambda cfg, *_: [],
    # Settling finished runs reads their journals; pages come from the web.
    "gdelt_forecast.articles.sources.fetch_days": lambda cfg, *_: [
        "articles/fetch_ledger.parquet",
        "articles/fetch_journal",
    ],
    "gdelt_forecast.articles.process.process": lambda cfg, *_: ["articles"],
    "gdelt_forecast.testset.build.build_testset": lambda cfg, *_: [],
    "gdelt_forecast.timelines.build.build_timelines": lambda cfg, *_: [LLM_CACHE],
    "gdelt_forecast.tasks.build.build_tasks": lambda cfg, month, *_: [
        f"timelines/{month}",
        LLM_CACHE,
    ],
    "gdelt_forecast.tasks.evaluate.evaluate_tasks": lambda cfg, *_: [LLM_CACHE],
    "gdelt_forecast.baselines.run_baseline": lambda cfg, *_: [LLM_CACHE],
    # The names of the releases there are (a new version takes the next free one) and LATEST.
    "gdelt_forecast.release.build.build_release": lambda cfg, *_: [
        LEDGER,
        LLM_CACHE,
        "releases/LATEST",
        "releases/*/manifest.json",
    ],
}


def reads(stage: Callable, cfg: Config, *args) -> list[str]:
    """What ``stage(cfg, *args)`` reads; a stage missing here is a programming error."""
    name = f"{stage.__module__}.{stage.__name__}"
    if name not in _READS:
        raise KeyError(f"{name} does not say what it reads (gdelt_forecast/stage_reads.py)")
    return _READS[name](cfg, *args)
