"""Every parameter of a stage, declared once: its name, help, JSON schema and default, and the
config key it sets. The command line's options (:mod:`gdelt_forecast.cli`) and the DAGs'
params (:mod:`gdelt_forecast.dag_shared`) are both made from :data:`PARAMETERS`, so a new
parameter is one line here that ``gdelt-forecast <stage> --help``, the DAG's trigger form
and its docs all show.

A value is checked against the same JSON schema on both sides, with jsonschema, which Airflow
validates a DAG's params with: a bad value gets the same one-line message from
``gdelt-forecast`` as from a DAG's trigger. Where a DAG runs without a value (its default is
None), its param's schema also admits null; the command line may still require it.

The DAG files import this module while Airflow parses them, so it imports nothing beyond the
standard library and the release's names (jsonschema only when a value is checked).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from gdelt_forecast.contract.names import BASELINES, LLM, REASONING, TASKS


@dataclass(frozen=True)
class Parameter:
    name: str  # the DAG param's name; the option is --name-with-dashes
    help: str
    schema: dict  # a given value's JSON schema
    default: Any = None
    required: bool = False  # on the command line (a DAG run has its month from its date)
    sets: str | None = None  # the config key a given value overrides
    convert: Callable[[Any], Any] | None = None  # a valid value as the stage takes it
    positional: bool = False  # on the command line, a word rather than an option
    repeat: bool = False  # an array given one option at a time (--set a=1 --set b=2)
    metavar: str | None = None

    @property
    def option(self) -> str:
        return self.name if self.positional else "--" + self.name.replace("_", "-")

    @property
    def described(self) -> str:
        """The help, with the default where it says something."""
        shown = self.default not in (None, False, [])
        return f"{self.help} (default: {self.default})" if shown else self.help

    @property
    def kind(self) -> str:
        return self.schema.get("type", "string")

    @property
    def json_schema(self) -> dict:
        """The schema a value is checked with: null admitted where the default is None."""
        if self.default is not None:
            return dict(self.schema)
        schema = {**self.schema, "type": ["null", self.kind]}
        if "enum" in schema:
            schema["enum"] = [None, *schema["enum"]]
        return schema

    def check(self, value: Any) -> Any:
        """``value`` (as JSON) as the stage takes it; ValueError with jsonschema's message."""
        from jsonschema import FormatChecker, ValidationError, validate

        try:
            validate(value, self.json_schema, format_checker=FormatChecker())
        except ValidationError as exc:
            raise ValueError(exc.message) from None
        if value is None or self.convert is None:
            return value
        return [self.convert(v) for v in value] if self.kind == "array" else self.convert(value)

    def word(self, text: str) -> Any:
        """One word of the command line as the JSON value it stands for (an integer's digits
        as an integer; left as text where it is not one, for :meth:`check` to refuse). A word
        of an array of numbers or choices is a list: its items may be comma-separated
        (``--tables export,mentions``, as before the options were declared here)."""
        if self.kind != "array":
            return self._item(self.kind, text)
        items = self.schema["items"]
        if items.get("type") == "string":  # a path may hold a comma
            return [text]
        return [self._item(items.get("type"), part) for part in text.split(",")]

    @staticmethod
    def _item(kind: str | None, text: str) -> Any:
        try:
            return {"integer": int, "number": float}.get(kind, str)(text)
        except ValueError:
            return text


def overrides(parameters: Iterable[Parameter], values: Mapping[str, Any]) -> list[str]:
    """``section.key=value`` for each parameter that sets a config key and has a value (as
    JSON, which the config reads as YAML)."""
    return [
        f"{p.sets}={json.dumps(values[p.name])}"
        for p in parameters
        if p.sets and values.get(p.name) is not None
    ]


def moment(text: str, end: bool = False) -> datetime:
    """UTC ``YYYY-MM-DDTHH:MM[:SS]``; a bare date means the whole day (its last second as end)."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not YYYY-MM-DD or YYYY-MM-DDTHH:MM") from None
    if when.tzinfo is not None:
        when = when.astimezone(UTC).replace(tzinfo=None)
    if end and len(text) == 10:
        when += timedelta(days=1, seconds=-1)
    return when


def _end(text: str) -> datetime:
    return moment(text, end=True)


MONTH_PATTERN = r"^[0-9]{4}-(0[1-9]|1[0-2])$"
DAY = {"type": "string", "format": "date"}
FILE = {"type": "string"}


RELEASE = Parameter("release", "a release folder or version name", FILE, required=True)


# --- shared by every stage: the run's config ----------------------------------------------------
RUN = (
    Parameter("config", "YAML config (default: configs/default.yaml)", FILE),
    Parameter("data_root", "data root (overrides the config's data_root)", FILE),
    Parameter(
        "set",
        "override one config value (section.key=value); repeatable",
        {"type": "array", "items": {"type": "string"}},
        default=[],
        repeat=True,
        metavar="SECTION.KEY=VALUE",
    ),
)
JSON = Parameter("json", "print the summary as JSON", {"type": "boolean"}, default=False)

MONTH = Parameter(
    "month", "the month, YYYY-MM", {"type": "string", "pattern": MONTH_PATTERN}, required=True
)
DAYS = (
    Parameter("start_date", "first day (UTC), YYYY-MM-DD", DAY, required=True,
              convert=date.fromisoformat),
    Parameter("end_date", "last day (UTC), YYYY-MM-DD", DAY, required=True,
              convert=date.fromisoformat),
)  # fmt: skip
HISTORY_START = Parameter(
    "history_start",
    "no document before this day (default: release.history_start, else January 1st of the "
    "month's year; the timelines and the release of a month must use the same)",
    DAY,
    convert=date.fromisoformat,
)
STORY_METHOD = Parameter(
    "method",
    "sets timelines.method: extractive (no model) or llm (the llm server)",
    {"type": "string", "enum": ["extractive", "llm"]},
    sets="timelines.method",
)
SPLIT = {"type": "string", "enum": ["train", "dev", "test"]}

PARAMETERS: dict[str, tuple[Parameter, ...]] = {
    "ingest": (
        Parameter("start", "first slot (UTC)", FILE, required=True, convert=moment),
        Parameter("end", "last slot (UTC)", FILE, required=True, convert=_end),
        Parameter(
            "tables",
            "the tables (default: gdelt.tables)",
            {"type": "array", "items": {"enum": ["export", "mentions"]}, "minItems": 1},
        ),
    ),
    "normalize": DAYS,
    "fetch": DAYS,
    "process": (
        *DAYS,
        Parameter(
            "warc",
            "read pages from these WARC files instead",
            {"type": "array", "items": {"type": "string"}},
            convert=Path,
            metavar="FILE",
        ),
    ),
    "explain": (
        Parameter(
            "files",
            "HTML, gzipped HTML or plain text",
            {"type": "array", "items": {"type": "string"}, "minItems": 1},
            required=True,
            convert=Path,
            positional=True,
            metavar="FILE",
        ),
        Parameter(
            "preset", "default: the config's", {"type": "string", "enum": ["obelics", "mirai"]}
        ),
    ),
    "database": (),
    "stats": (
        *DAYS,
        Parameter("top", "rows per top list", {"type": "integer", "minimum": 1}, default=10),
    ),
    "testset": (
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
    "timelines": (MONTH, STORY_METHOD, HISTORY_START),
    "tasks": (MONTH, STORY_METHOD),
    "reasoning": (
        MONTH,
        Parameter(
            "method",
            "sets reasoning.method: llm also asks the llm server for causal and hierarchical "
            "relations",
            {"type": "string", "enum": ["extractive", "llm"]},
            sets="reasoning.method",
        ),
    ),
    "evaluate_tasks": (
        Parameter("task", "the task", {"type": "string", "enum": list(TASKS)}, required=True),
        Parameter("tasks", "task file, or a folder of them", FILE, required=True, convert=Path),
        Parameter("predictions", "JSONL predictions", FILE, required=True, convert=Path),
        Parameter("split", "only this split", SPLIT),
        Parameter("news", "LRAE evidence: news Parquet file or folder", FILE, convert=Path),
    ),
    "evaluate_reasoning": (
        Parameter("task", "the task", {"type": "string", "enum": list(REASONING)}, required=True),
        Parameter("reasoning", "task file, or a folder", FILE, required=True, convert=Path),
        Parameter("predictions", "JSONL predictions", FILE, required=True, convert=Path),
        Parameter("split", "the one split, test", {"type": "string", "enum": ["test"]}),
    ),  # fmt: skip
    "evaluate": (
        Parameter("queries", "queries.parquet or subset", FILE, required=True, convert=Path),
        Parameter("predictions", "JSONL predictions", FILE, required=True, convert=Path),
    ),
    "release": (
        Parameter("month", "test month, YYYY-MM", {"type": "string", "pattern": MONTH_PATTERN}),
        Parameter(
            "version",
            "release name (default: YYYY.MM.n, the first free n)",
            {"type": "string", "pattern": r"^[0-9A-Za-z][0-9A-Za-z._-]*$"},
        ),
        HISTORY_START,
    ),
    "verify": (
        Parameter(
            "release_dir",
            "a release folder, or s3://bucket/...",
            FILE,
            required=True,
            positional=True,
            metavar="DIR",
        ),
    ),  # fmt: skip
    "mirai": (
        Parameter(
            "release_dir",
            "a release folder or version name",
            FILE,
            required=True,
            positional=True,
            metavar="DIR",
        ),
        Parameter("out", "build under this folder instead of DIR", FILE, convert=Path),
    ),  # fmt: skip
    "baseline": (
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
            "with --method llm: answer one of OpenForecast's tasks (its --split's records, "
            "with the paper's prompts) or EV2's reasoning tasks instead of the queries",
            {"type": "string", "enum": [*TASKS, *REASONING]},
        ),
    ),  # fmt: skip
    "agent": (
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
    ),  # fmt: skip
    "leaderboard": (RELEASE,),
    "site": (
        Parameter("out", "the site's folder (default: <data_root>/site)", FILE, convert=Path),
    ),
    "airflow_init": (),
    "airflow_wait": (
        Parameter("dag_id", "the DAG", FILE, required=True, positional=True, metavar="DAG"),
        Parameter(
            "timeout",
            "seconds to wait at most",
            {"type": "number", "exclusiveMinimum": 0},
            default=1800,
        ),
    ),  # fmt: skip
}

# A monthly_refresh run's own: what it does with days of the month that have no bronze.
PARTIAL = Parameter("partial", "leave out days without bronze", {"type": "boolean"}, default=False)
