"""Every stage, declared once: its command and parameters, what it reads and writes, its
partition and lock, what its record holds (:mod:`gdelt_forecast.pipeline.stage_record`),
whether it asks the model server, and the stages it runs after.

Everything else that names a stage is made from :data:`STAGES`: the command line's table
(:mod:`gdelt_forecast.cli`), the DAGs' tasks, pools and params
(:mod:`gdelt_forecast.orchestration.dags`), what a by-hand DAG builds again (:func:`rebuilt`),
the working copy's pulls and the runner (:mod:`gdelt_forecast.pipeline.runner`), the release's
check of the records, and the stage table of docs/architecture.md (``make docs``). A stage's
function is named as ``module:function`` and imported when it runs, so declaring the stages
imports none of them, and the DAG files, which import this module while Airflow parses them,
stay light: it imports the standard library and the data root's names only (the rest inside
the functions).

- ``partition``: ``day`` stages take ``(first, last)`` and hold each day's lock, ``month``
  stages take ``month`` and hold its lock, ``round`` steps take the round's id and hold the
  round's one lock (``locks/round-<id>.lock``: a round's steps take turns); ``None``: no lock
  of the runner's (the one recorded such stage, ``database``, keeps its record at
  ``record``, relative to the root).
- ``after``: the stages whose output it reads. A month stage reads each one's output (the
  warehouse for ``database``, ``<stage>/<month>`` for a month stage), its record's inputs
  are their fingerprints, and its Airflow task runs after theirs.
- ``reads``: what an s3:// data root's working copy pulls first besides that (folders, files
  or globs relative to the root, :mod:`gdelt_forecast.ground.data_root`); ``WAREHOUSE`` among them
  means that the machine's warehouse must be current, which the runner sees to first.
- ``model_server``: the stage asks the model server (with some config): it reads the answer
  cache, so that a bucket's answers are not asked again, and its task runs in the pool
  ``llm_server``, one month's model work at a time.
- ``config``: what of the config a recorded stage's output depends on (its record's hash);
  the stages with one write a record per partition.
- ``writes``: what it writes, a day stage's folders of one day (a recorded month stage writes
  its month's folder).
- ``params``: a month stage's parameters, resolved from the caller's options (the release
  asks the same function what it expects a stage to have been run with).
- ``parameters``: its command's options and its DAG params
  (:mod:`gdelt_forecast.pipeline.parameters`); those that set no config key are passed to the
  stage by name.
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
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from gdelt_forecast.contract.names import BASELINES, LLM, REASONING, ROUND_ID_PATTERN, TASKS
from gdelt_forecast.ground import dates
from gdelt_forecast.ground.data_root import (
    AGENTS,
    ARTICLES,
    BRONZE,
    FETCH_JOURNAL,
    FETCH_LEDGER,
    LATEST,
    LEDGER,
    LLM_CACHE,
    PART,
    RAW_GDELT,
    RELEASES,
    ROUNDS,
    WAREHOUSE,
    WAREHOUSE_PARTS,
    WAREHOUSE_RECORD,
    WAREHOUSE_SOURCES,
    article,
    bronze,
    month_output,
    round_folder,
    silver,
)
from gdelt_forecast.ground.data_root import BASELINES as BASELINES_FOLDER
from gdelt_forecast.pipeline.parameters import (
    DAY,
    DAYS,
    FILE,
    HISTORY_START,
    MONTH,
    MONTH_PATTERN,
    RELEASE,
    SPLIT,
    STORY_METHOD,
    Parameter,
    moment,
    moment_end,
)

if TYPE_CHECKING:
    from gdelt_forecast.ground.config import Config
    from gdelt_forecast.ground.data_root import DataRoot

MODEL_POOL = "llm_server"
# A round step's partition: the round's id (rounds/<id>/).
ROUND = Parameter(
    "round",
    "the round's id: 1-64 letters, digits, '.', '_' or '-', the first a letter or digit",
    {"type": "string", "pattern": ROUND_ID_PATTERN},
    required=True,
)
# A model forecaster's round: its relation queries, instead of a release's test set.
FOR_ROUND = Parameter(
    "round",
    "answer this round's relation queries instead (over the release's history before the "
    "round's open date) and submit the answers to the round",
    {"type": "string", "pattern": ROUND_ID_PATTERN},
)
# Who forecasts in a round, and with what.
FORECASTER = Parameter(
    "forecaster",
    "the forecaster's name: 1-64 letters, digits, '.', '_' or '-', the first a letter or digit",
    {"type": "string"},
    required=True,
)
MODEL_NAME = Parameter("model", "the model behind the forecasts, as its maker names it", FILE)
FORECASTS = Parameter(
    "file", "the forecasts, JSON Lines", FILE, required=True, convert=Path, positional=True,
    metavar="FILE",
)  # fmt: skip


def _imported(target: str) -> Callable:
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


def _nothing(cfg: Config, *args) -> list[str]:
    return []


@dataclass(frozen=True)
class Stage:
    name: str  # the lock's, the record's and the Airflow task's name
    target: str  # "module:function"
    command: str | None = None  # its words on the command line ("articles fetch")
    help: str = ""  # the command's one line
    description: str | None = None  # the command's --help text (default: help)
    parameters: tuple[Parameter, ...] = ()
    section: str | None = None  # the config section it reads (docs/configuration.md)
    partition: Literal["day", "month", "round"] | None = None
    after: tuple[str, ...] = ()
    reads: Callable[..., list[str]] = _nothing
    model_server: bool = False
    pool: str | None = None  # its Airflow pool; the model server's brings its own
    config: Callable[[Config], dict] | None = None  # the stages with a record
    inputs: Callable[[Config, DataRoot, Any], dict] | None = None  # a day stage's
    # A month stage's parameters as it runs and records them, from the caller's options
    params: Callable[..., dict] = field(default=lambda cfg, month, **options: {})
    writes: Callable[[date], list[str]] = field(default=lambda day: [])
    publish: str | None = None  # "module:function"
    release_step: str | None = None  # "module:function"
    scaffolding: str | None = None  # "module:function"
    record: str | None = None  # an unpartitioned stage's record
    # "module:function" (cfg, month) -> why its output up to ``month`` is not current, or None
    month_check: str | None = None

    def __post_init__(self):
        if self.model_server and self.pool not in (None, MODEL_POOL):
            raise ValueError(f"{self.name}: a model-server stage runs in {MODEL_POOL}")
        if self.model_server:  # frozen: the pool follows from the declaration
            object.__setattr__(self, "pool", MODEL_POOL)

    @property
    def function(self) -> Callable:
        return _imported(self.target)

    @property
    def publisher(self) -> Callable | None:
        return _imported(self.publish) if self.publish else None

    @property
    def on_release(self) -> Callable:
        return _imported(self.release_step)

    def stale_up_to(self, cfg: Config, month: str) -> str | None:
        """Why an unpartitioned stage's output, as far as ``month`` reads it, is not what it
        would build now (None when it is)."""
        return _imported(self.month_check)(cfg, month)

    def prompt_words(self, version: str) -> frozenset[str]:
        return _imported(self.scaffolding)(version)

    @property
    def recorded(self) -> bool:
        return self.config is not None

    @property
    def options(self) -> tuple[Parameter, ...]:
        """The parameters passed to the stage by name: those that set no config key, but
        the partition's own (``month``, the days, the round)."""
        partition = {"month": (MONTH,), "day": DAYS, "round": (ROUND,)}.get(self.partition, ())
        own = {p.name for p in partition}
        return tuple(p for p in self.parameters if not p.sets and p.name not in own)

    def pulls(self, cfg: Config, *args) -> list[str]:
        """What a bucket's working copy pulls before the stage runs on ``args``."""
        found = list(self.reads(cfg, *args))
        if self.partition == "month":  # what the recorded stages it runs after made
            found += [_output(a, args[0]) for a in self.after if STAGES[a].recorded]
        if self.model_server:
            found.append(LLM_CACHE)
        return list(dict.fromkeys(found))

    def fingerprint(self, cfg: Config, root: DataRoot, part: Any) -> dict:
        """The record's inputs of a partition: a day stage's own; a month stage's, what it
        runs after (the warehouse's sources, a month stage's record)."""
        if self.inputs is not None:
            return self.inputs(cfg, root, part)
        return {_input_key(a): _upstream_fingerprint(a, root, part) for a in self.after}

    def stale(self, cfg: Config, root: DataRoot, part=None) -> str | None:
        """Why an unpartitioned stage's output is not what it would build now (None when it
        is): no record, or other inputs or config (:func:`.stage_record.stale`)."""
        from gdelt_forecast.pipeline import stage_record

        return stage_record.stale(
            stage_record.read(root.path(self.record)),
            params={},
            config=self.config(cfg),
            inputs=self.fingerprint(cfg, root, part),
        )


def _output(stage: str, month: str) -> str:
    return WAREHOUSE if stage == "database" else month_output(stage, month)


def _input_key(stage: str) -> str:
    return "warehouse" if stage == "database" else stage


def _upstream_fingerprint(stage: str, root: DataRoot, month: str):
    """The warehouse's key of ``month`` (its sources and every earlier month's: what a month
    stage reads of the warehouse, so that months side by side never make each other's
    stages stale); a month stage's record's own."""
    from gdelt_forecast.contract.months import read_index
    from gdelt_forecast.pipeline import stage_record

    if stage == "database":
        return read_index(root.warehouse_parts)["months"].get(month, {}).get("key")
    record = stage_record.read(root.month_record(stage, month))
    return stage_record.fingerprint(record) if record else None


def _ledger(cfg: Config, *args) -> list[str]:
    return [LEDGER]


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
        from gdelt_forecast.pipeline import stage_record
        from gdelt_forecast.storage.working_copy import versions

        found = versions(root.root, tuple(f"{folder}/*" for folder in reads(cfg, day, day)))
        return {"files": stage_record.digest(found)}

    return inputs


def _bronze_writes(day: date) -> list[str]:
    return [RAW_GDELT, bronze("events", day), bronze("mentions", day), f"{BRONZE}/rejects", LEDGER]


def _write_bronze_reads(cfg: Config, fetched, summary) -> list[str]:
    """The ledger and the raw files the download task put in the bucket."""
    from gdelt_forecast.storage.working_copy import raw_files

    return [LEDGER, *raw_files(cfg, fetched)]


def _warehouse_sources(cfg: Config, root: DataRoot, part=None) -> dict:
    """What the warehouse is built from: each silver and document file's path with its
    sha256, or in a bucket its ETag (the same on every machine, unlike the bytes of two builds
    of ``warehouse.duckdb``)."""
    from gdelt_forecast.pipeline import stage_record
    from gdelt_forecast.storage.working_copy import versions

    patterns = tuple(f"{folder}/date=*/{PART}" for folder in WAREHOUSE_SOURCES)
    return {"sources": stage_record.digest(versions(cfg.data_root, patterns))}


def _round(cfg: Config, round_id: str, *_) -> list[str]:
    return [round_folder(round_id)]


def _round_resolution(cfg: Config, round_id: str, *_) -> list[str]:
    """`rounds/<round>`, `bronze/slots.parquet`; the bronze of the days its questions read."""
    return [round_folder(round_id), LEDGER, BRONZE]


def _round_history(cfg: Config, round_id: str, *_) -> list[str]:
    """`rounds/<round>`; the silver days before the open date where they lie (a bucket's in
    place)."""
    return _round(cfg, round_id)


# A round step's declaration but its words: what it reads and writes is the round's folder.
ROUND_STEP = {
    "section": "rounds",
    "partition": "round",
    "reads": _round,
    "writes": lambda round_id: [round_folder(round_id)],
}


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
        Stage(
            "ingest",
            "gdelt_forecast.gdelt.ingest:ingest",
            "ingest",
            "GDELT 15-minute dumps to verified, typed bronze Parquet",
            "Ingest every 15-minute slot in the inclusive UTC range [--start, --end].",
            parameters=(
                Parameter("start", "first slot (UTC)", FILE, required=True, convert=moment),
                Parameter("end", "last slot (UTC)", FILE, required=True, convert=moment_end),
                Parameter(
                    "tables",
                    "the tables (default: gdelt.tables)",
                    {"type": "array", "items": {"enum": ["export", "mentions"]}, "minItems": 1},
                ),
            ),
            section="ingest",
            reads=_ledger,
            writes=_bronze_writes,
        ),
        # gdelt_ingest's tasks: the slots' files to bronze, and whether a day is complete.
        Stage(
            "bronze",
            "gdelt_forecast.gdelt.ingest:write_bronze",
            reads=_write_bronze_reads,
            writes=_bronze_writes,
        ),
        Stage("day_status", "gdelt_forecast.gdelt.days:day_status", reads=_ledger),
        Stage(
            "normalize",
            "gdelt_forecast.events.normalize:normalize",
            "normalize",
            "bronze events to silver quads (MIRAI rules), with the funnel",
            parameters=DAYS,
            section="events",
            partition="day",
            after=("ingest",),
            reads=_normalize_reads,
            config=lambda cfg: cfg.events.model_dump(mode="json"),
            inputs=_day_contents(_normalize_reads),
            writes=lambda day: [silver("events", day), silver("funnel", day)],
        ),
        # Settling finished runs reads their journals; pages come from the web. Its pages
        # and ledger rows are shared by the days (WARC files per run, one ledger), so a
        # day's record lists no files of its own. Its pool bounds the days fetched at once,
        # every one under the same politeness per host.
        Stage(
            "fetch",
            "gdelt_forecast.articles.sources:fetch_days",
            "articles fetch",
            "fetch the source pages of the days' quads (polite, resumable)",
            parameters=DAYS,
            section="articles",
            partition="day",
            after=("normalize",),
            reads=lambda cfg, *a: [*_silver_events(cfg, *a), FETCH_LEDGER, FETCH_JOURNAL],
            pool="article_fetch",
            config=_articles_config,
            inputs=_day_contents(_silver_events),
        ),
        Stage(
            "process",
            "gdelt_forecast.articles.process:process",
            "articles process",
            "extract, identify the language and OBELICS-clean the fetched pages",
            parameters=(
                *DAYS,
                Parameter(
                    "warc",
                    "read pages from these WARC files instead",
                    {"type": "array", "items": {"type": "string"}},
                    convert=Path,
                    metavar="FILE",
                ),
            ),
            section="articles",
            partition="day",
            after=("fetch",),
            reads=lambda cfg, *a: [*_silver_events(cfg, *a), ARTICLES],
            config=_articles_config,
            inputs=_day_contents(_silver_events),
            writes=lambda day: [article("docs", day), article("exclusions", day)],
        ),
        # DuckDB reads the bucket's silver and documents itself. One writer at a time.
        Stage(
            "database",
            "gdelt_forecast.warehouse.build:build_database",
            "database",
            "bring the warehouse up to silver, writing only the months that changed",
            "Bring <data_root>/warehouse/ (the tables, a file per month) and warehouse.duckdb "
            "(views over them) up to silver Parquet, writing only the months whose sources "
            "changed and those after them.",
            section="duckdb",
            after=("normalize", "process"),
            pool="warehouse_writer",
            writes=lambda *_: [WAREHOUSE, WAREHOUSE_PARTS],
            config=lambda cfg: {},  # the warehouse is its sources' tables, whatever the config
            inputs=_warehouse_sources,
            record=WAREHOUSE_RECORD,
            month_check="gdelt_forecast.warehouse.build:stale_month",
        ),
        Stage(
            "stats",
            "gdelt_forecast.warehouse.stats:stats",
            "stats",
            "the funnel and the top relations and country pairs of a date range",
            parameters=(
                *DAYS,
                Parameter(
                    "top", "rows per top list", {"type": "integer", "minimum": 1}, default=10
                ),
            ),  # fmt: skip
            reads=lambda *_: [WAREHOUSE],
        ),
        Stage(
            "testset",
            "gdelt_forecast.testset.build:build_testset",
            "testset",
            "MIRAI relation queries of a month, the balanced subset",
            "Build testset/<month>/queries.parquet, subset.parquet and balance.json.",
            parameters=(
                MONTH,
                Parameter(
                    "horizons",
                    "sets testset.horizons: days from the cutoff to the forecast day",
                    {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1},
                    sets="testset.horizons",
                ),
                Parameter(
                    "subset_size",
                    "sets testset.subset_size: queries in the balanced subset",
                    {"type": "integer", "minimum": 1},
                    sets="testset.subset_size",
                ),
                Parameter("seed", "sets testset.seed", {"type": "integer"}, sets="testset.seed"),
            ),
            section="testset",
            partition="month",
            after=("database",),
            config=lambda cfg: cfg.testset.model_dump(mode="json"),
        ),
        Stage(
            "timelines",
            "gdelt_forecast.timelines.build:build_timelines",
            "timelines",
            "complex events of a month's news and their timelines of atomic events",
            "Write timelines/<month>/complex_events.parquet and timelines.parquet.",
            parameters=(MONTH, STORY_METHOD, HISTORY_START),
            section="timelines",
            partition="month",
            after=("database",),
            model_server=True,
            config=_timelines_config,
            params=_timelines_params,
            scaffolding="gdelt_forecast.timelines.written:scaffolding",
        ),
        Stage(
            "tasks",
            "gdelt_forecast.tasks.build:build_tasks",
            "tasks",
            "OpenForecast's six tasks (STF, LTF, AQA, MCNC, MCAC, VQA) from the timelines",
            "Write tasks/<month>/<TASK>/<split>.parquet from timelines/<month>/.",
            parameters=(MONTH, STORY_METHOD),
            section="tasks",
            partition="month",
            after=("timelines",),
            model_server=True,
            config=lambda cfg: {
                **_timelines_config(cfg),
                "tasks": cfg.tasks.model_dump(mode="json"),
            },
            scaffolding="gdelt_forecast.tasks.generated:scaffolding",
        ),
        Stage(
            "reasoning",
            "gdelt_forecast.reasoning.build:build_reasoning",
            "reasoning",
            "EV2's event-reasoning tasks (I-CEC, I-CRR, S-CEC, S-CRR) from the timelines",
            "Write reasoning/<month>/<TASK>.parquet from timelines/<month>/.",
            parameters=(
                MONTH,
                Parameter(
                    "method",
                    "sets reasoning.method: llm also asks the llm server for causal and "
                    "hierarchical relations",
                    {"type": "string", "enum": ["extractive", "llm"]},
                    sets="reasoning.method",
                ),
            ),
            section="reasoning",
            partition="month",
            after=("timelines",),
            model_server=True,
            config=lambda cfg: {
                **_timelines_config(cfg),
                "reasoning": cfg.reasoning.model_dump(),
                "judge": cfg.llm.model if cfg.reasoning.method == "llm" else None,
            },
        ),
        Stage(
            "evaluate_tasks",
            "gdelt_forecast.tasks.evaluate:evaluate_tasks",
            "evaluate-tasks",
            "score predictions for an OpenForecast task (accuracy, or LRAE with the llm judge)",
            "Score predictions (JSONL of id and prediction) for one task.",
            parameters=(
                Parameter(
                    "task", "the task", {"type": "string", "enum": list(TASKS)}, required=True
                ),
                Parameter(
                    "tasks", "task file, or a folder of them", FILE, required=True, convert=Path
                ),
                Parameter("predictions", "JSONL predictions", FILE, required=True, convert=Path),
                Parameter("split", "only this split", SPLIT),
                Parameter("news", "LRAE evidence: news Parquet file or folder", FILE, convert=Path),
            ),  # fmt: skip
            section="tasks",
            model_server=True,
        ),
        Stage(
            "baseline",
            "gdelt_forecast.baselines:run_baseline",
            "baseline",
            "score a release's test set with a reference forecaster (no future rows)",
            "Forecast every query of a release's test set (or subset) through the agent "
            "environment, which sees only rows before each query's cutoff, and score it with "
            "MIRAI's metrics.",
            parameters=(
                RELEASE,
                Parameter(
                    "method",
                    "the forecaster",
                    {"type": "string", "enum": [*BASELINES, LLM]},
                    default="history",
                ),
                Parameter(
                    "split",
                    "the query set",
                    {"type": "string", "enum": ["test", "subset"]},
                    default="test",
                ),
                Parameter(
                    "task",
                    "with --method llm: answer one of OpenForecast's tasks (its --split's "
                    "records, with the paper's prompts) or EV2's reasoning tasks instead of the "
                    "queries",
                    {"type": "string", "enum": [*TASKS, *REASONING]},
                ),
                FOR_ROUND,
            ),  # fmt: skip
            section="baseline",
            model_server=True,
            writes=lambda *_: [BASELINES_FOLDER],
            release_step="gdelt_forecast.baselines:run_baselines",
        ),
        # `baseline --method llm --task ...`: one of the papers' tasks answered by the model.
        Stage("tasks_baseline", "gdelt_forecast.tasks.baseline:answer_tasks", model_server=True),
        Stage(
            "reasoning_baseline",
            "gdelt_forecast.reasoning.baseline:answer_reasoning",
            model_server=True,
        ),
        Stage(
            "agent",
            "gdelt_forecast.agents.run:run_agents",
            "agent",
            "run MIRAI's ReAct agents on a release's test set over an OpenAI-compatible server",
            "Every query of the split answered by a ReAct agent whose actions are tool calls "
            "(the API's functions, or Python code in a sandbox) on the environment opened at "
            "the query's cutoff; steps, answers and scores under "
            "<data_root>/agents/<release>/<run>/. The same command resumes a killed run.",
            parameters=(
                RELEASE,
                Parameter(
                    "split",
                    "the query set",
                    {"type": "string", "enum": ["subset", "test"]},
                    default="subset",
                ),
                Parameter(
                    "action",
                    "the agent's actions: the API's functions, or Python code",
                    {"type": "string", "enum": ["function", "code"]},
                    default="function",
                ),
                Parameter(
                    "apis",
                    "MIRAI's All, Event-Only or News-Only API",
                    {"type": "string", "enum": ["all", "events", "news"]},
                    default="all",
                ),
                Parameter(
                    "max_steps",
                    "sets agents.max_steps (MIRAI: 20)",
                    {"type": "integer", "minimum": 1},
                    sets="agents.max_steps",
                ),
                Parameter(
                    "samples",
                    "seeded samples per query (K)",
                    {"type": "integer", "minimum": 1},
                    default=1,
                ),
                FOR_ROUND,
            ),  # fmt: skip
            section="agents",
            model_server=True,
            writes=lambda *_: [AGENTS],
        ),
        # A round's questions read the silver days before its open date in place (DuckDB
        # reads a bucket's own), and never a later one.
        Stage(
            "round_open",
            "gdelt_forecast.rounds.questions:open_round",
            "round open",
            "open a live round: questions about days to come, from the history before its "
            "open date",
            "Write rounds/<round>/questions.parquet (relation queries and binary questions "
            "about the target days, the horizons after the deadline) and round.json (the "
            "clock, the resolution rule, the days read, the questions' sha256), from the silver "
            "events of the days before --open-date only. A round already open is left as it "
            "is when this opening gives the same questions, and refused otherwise.",
            parameters=(
                ROUND,
                Parameter(
                    "open_date",
                    "the open date (UTC), YYYY-MM-DD: today's for a live round",
                    DAY,
                    required=True,
                    convert=date.fromisoformat,
                ),
                Parameter(
                    "deadline",
                    "YYYY-MM-DDTHH:MM[:SS], UTC: the last moment a forecast counts; a bare "
                    "date closes at its end (default: the open date's end)",
                    FILE,
                    convert=moment_end,
                ),
                Parameter(
                    "horizons",
                    "sets rounds.horizons: days from the deadline's day to each target day",
                    {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1},
                    sets="rounds.horizons",
                ),
                Parameter(
                    "replay",
                    "open on a past date, the clock simulated at the open date: never on the "
                    "live leaderboard",
                    {"type": "boolean"},
                    default=False,
                ),
            ),
            **{**ROUND_STEP, "reads": _round_history},
        ),
        Stage(
            "round_submit",
            "gdelt_forecast.rounds.ledger:submit_forecasts",
            "round submit",
            "send a forecaster's forecasts to an open round, before its deadline",
            'Check FILE whole (one {"question_id": ..., "forecast": ...} line per question '
            "answered) and keep it under rounds/<round>/submissions/ with a ledger row; a "
            "later submission before the deadline replaces it. A bad line or a late file is "
            "refused and nothing is kept.",
            parameters=(ROUND, FORECASTER, MODEL_NAME, FORECASTS),
            **ROUND_STEP,
        ),
        Stage(
            "round_commit",
            "gdelt_forecast.rounds.ledger:commit_forecasts",
            "round commit",
            "record only the sha256 of a forecaster's forecasts, before the deadline",
            "Record --sha256 as the forecaster's forecasts in the round's ledger before its "
            "deadline, without the file: `round reveal` gives the file after the deadline, "
            "accepted only with that sha256, and its forecasts count from the commit.",
            parameters=(
                ROUND,
                FORECASTER,
                Parameter(
                    "sha256",
                    "the forecasts file's sha256 (`sha256sum FILE`)",
                    {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                    required=True,
                ),
                MODEL_NAME,
            ),
            **ROUND_STEP,
        ),
        Stage(
            "round_reveal",
            "gdelt_forecast.rounds.ledger:reveal_forecasts",
            "round reveal",
            "give the file of a commit, after the deadline",
            "Accept FILE after the round's deadline when its sha256 is the one the forecaster "
            "committed before it; checked whole as a submission is.",
            parameters=(ROUND, FORECASTER, FORECASTS),
            **ROUND_STEP,
        ),
        # GDELT's master file list and the ingest ledger say whether the round's days are
        # all in; the answers come from their bronze.
        Stage(
            "round_resolve",
            "gdelt_forecast.rounds.resolve:resolve_round",
            "round resolve",
            "resolve a round from the GDELT files of its days, and score its forecasters",
            "Resolve the round once every GDELT file its days need is ingested (else name the "
            "files it lacks): resolution.parquet (each answer or void, fragile marks), "
            "vintage.json (the files read, with their md5) and scores.parquet. A resolved "
            "round is frozen: resolving it again refuses, naming the files, where one changed.",
            parameters=(
                ROUND,
                Parameter(
                    "allow_missing",
                    "void the questions that read a day whose GDELT files are not all in, "
                    "instead of refusing",
                    {"type": "boolean"},
                    default=False,
                ),
            ),
            **{**ROUND_STEP, "reads": _round_resolution},
        ),
        Stage(
            "round_verify",
            "gdelt_forecast.rounds.verify:verify_round",
            "round verify",
            "check a round from the data alone: its questions, forecasts, answers and scores",
            "Build the round's questions again from the history before its open date and its "
            "answers again from the GDELT files it names, and check them, every kept "
            "forecast file and every score against what the round pinned: exit 0 when it is "
            "sound, else 1 naming each problem.",
            parameters=(ROUND,),
            **{**ROUND_STEP, "reads": _round_resolution},
        ),
        # Every round's per-question scores; no lock: it writes only the live leaderboard.
        Stage(
            "round_leaderboard",
            "gdelt_forecast.rounds.leaderboard:round_leaderboard",
            "round leaderboard",
            "rank the forecasters on one round, or across the resolved live rounds",
            "Print the forecasters ranked by the difficulty-adjusted Brier score, with the "
            "Brier score's bootstrap 95% interval, the log score, the skill against the "
            "base-rate forecaster, MIRAI's F1 on the relation queries and the imputed "
            "forecasts: of one round with --round (a replay's too), else across every "
            "resolved live round, written to rounds/leaderboard.parquet.",
            parameters=(
                Parameter(
                    "round",
                    "one round's (a replay's too; default: across the resolved live rounds)",
                    {"type": "string", "pattern": ROUND_ID_PATTERN},
                ),
            ),
            section="rounds",
            reads=lambda *_: [ROUNDS],
            writes=lambda *_: [f"{ROUNDS}/leaderboard.parquet"],
        ),
        # The month's stages and their records, the ledger, and the names of the releases
        # there are (a new version takes the next free one).
        Stage(
            "release",
            "gdelt_forecast.release.build:build_release",
            "release",
            "a versioned, verifiable release of a month; `release verify DIR` checks one",
            "Write <data_root>/releases/<version>/ for the test month --month (the database "
            "from the history start through the month's end; the test set, timelines and tasks "
            "as their stages built them, refused when one is stale; MIRAI's data folder, "
            "baselines, card, Croissant, stats, manifest); or `release verify DIR`.",
            parameters=(
                Parameter(
                    "month", "test month, YYYY-MM", {"type": "string", "pattern": MONTH_PATTERN}
                ),
                Parameter(
                    "version",
                    "release name (default: YYYY.MM.n, the first free n)",
                    {"type": "string", "pattern": r"^[0-9A-Za-z][0-9A-Za-z._-]*$"},
                ),
                HISTORY_START,
            ),  # fmt: skip
            section="release",
            partition="month",
            after=("database", "testset", "timelines", "tasks", "reasoning"),
            reads=lambda cfg, month, *_: [LEDGER, LLM_CACHE, LATEST, "releases/*/manifest.json"],
            writes=lambda month: [f"{RELEASES}/<version>", LATEST],
            publish="gdelt_forecast.release.publish:publish",
        ),
        # After the release: the live rounds' turn of a monthly refresh.
        Stage(
            "rounds",
            "gdelt_forecast.rounds.schedule:refresh_rounds",
            "round refresh",
            "resolve the live rounds that are due, and open the one the month's release names",
            "The rounds' turn of the refresh of --month: resolve every open live round whose "
            "target and grace days are over and whose GDELT files are all in (one that lacks "
            "some waits for the next refresh), then open the live round the month's release "
            "names (live-<build date>, where the release was built in the month after its "
            "own). Safe to run again.",
            parameters=(MONTH,),
            section="rounds",
            partition="month",
            after=("release",),
            reads=lambda cfg, month, *_: [ROUNDS, LEDGER, BRONZE, "releases/*/manifest.json"],
        ),
    )
}


def rebuilt(name: str) -> tuple[str, ...]:
    """Stage ``name`` and every recorded stage that reads what it wrote, however far down, in
    declaration order: what building ``name`` again makes stale, and a by-hand DAG builds."""
    found = {name}
    for stage in STAGES.values():  # declared after what they read
        if stage.recorded and found & set(stage.after):
            found.add(stage.name)
    return tuple(s for s in STAGES if s in found)
