"""The stage table of docs/architecture.md, written from the stages' declarations
(:data:`gdelt_forecast.pipeline.stages.STAGES`): a row per stage with its command, its partition,
the stages it runs after, its config section, what a bucket's working copy pulls for it, what it
writes, and its Airflow task and pool. :mod:`gdelt_forecast.pipeline.docs_pages` puts it in the
page.
"""

from __future__ import annotations

from datetime import date

from gdelt_forecast.ground.config import Config
from gdelt_forecast.pipeline.stages import STAGES, Stage

_DAY = date(2000, 1, 1)  # a day that no place names otherwise, shown as <day>
_MONTH = "<month>"
_ROUND = "<round>"
# The DAG tasks each stage runs as (the DAGs make them from the declarations; the ingest
# DAG's are its own).
_TASKS = {"ingest": "`gdelt_ingest`: download", "bronze": "`gdelt_ingest`: to_bronze",
          "day_status": "`gdelt_ingest`: mark_day"}  # fmt: skip


def _sample(stage: Stage) -> tuple:
    return {"day": (_DAY, _DAY), "month": (_MONTH,), "round": (_ROUND,)}.get(stage.partition, ())


def _places(places: list[str]) -> str:
    shown = dict.fromkeys(p.replace(_DAY.isoformat(), "<day>") for p in places)
    return ", ".join(f"`{p}`" for p in shown) or "—"


def _reads(stage: Stage, cfg: Config) -> str:
    """What the working copy pulls; a reads function that says what it reads in its
    docstring (its places depend on the run: the look-back, the fetched files) says so."""
    said = (stage.reads.__doc__ or "").strip().split("\n\n")[0]
    if said:
        extra = stage.pulls(cfg, *_sample(stage)) if stage.partition == "month" else []
        model = ["llm_cache"] if stage.model_server and not extra else []
        return " ".join(said.split()) + "".join(f", `{p}`" for p in (*extra, *model))
    return _places(stage.pulls(cfg, *_sample(stage)))


def _writes(stage: Stage) -> str:
    if stage.partition == "month" and stage.recorded:
        return f"`{stage.name}/<month>/`"
    sample = _sample(stage)
    written = _places(stage.writes(sample[0] if sample else _DAY))
    return written + (f", its record `{stage.record}`" if stage.record else "")


def _task(stage: Stage) -> str:
    if stage.name in _TASKS:
        return _TASKS[stage.name]
    if stage.partition == "day":
        name = f"{stage.name}_day"
    elif stage.partition == "month" or stage.name == "database":
        name = stage.name
    else:
        return "—"
    return f"{name} (pool `{stage.pool}`)" if stage.pool else name


def render() -> str:
    """The table, one row per declared stage in their order."""
    cfg = Config()
    rows = [
        "| stage | command | partition | after | config | reads | writes | Airflow task |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for stage in STAGES.values():
        cells = (
            f"`{stage.name}`"
            + (" (model server)" if stage.model_server else "")
            + (", recorded" if stage.recorded else ""),
            f"`gdelt-forecast {stage.command}`" if stage.command else "—",
            stage.partition or ("whole" if stage.recorded else "—"),
            ", ".join(f"`{a}`" for a in stage.after) or "—",
            f"`{stage.section}`" if stage.section else "—",
            _reads(stage, cfg),
            _writes(stage),
            _task(stage),
        )
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"
