"""A parameter of a stage or command: its name, help, JSON schema and default, and the config
key it sets; and the parameters many share (the run's config, the month, the days). A stage
lists its own in its declaration (:data:`gdelt_forecast.pipeline.stages.STAGES`): the command line's
options (:mod:`gdelt_forecast.cli`) and the DAGs' params (:mod:`gdelt_forecast.orchestration.dags`)
are both made from there, so a new parameter is one line that ``gdelt-forecast <stage> --help``,
the DAG's trigger form and its docs all show.

A value is checked against the same JSON schema on both sides, with jsonschema, which Airflow
validates a DAG's params with: a bad value gets the same one-line message from
``gdelt-forecast`` as from a DAG's trigger. Where a DAG runs without a value (its default is
None), its param's schema also admits null; the command line may still require it.

The DAG files import this module while Airflow parses them, so it imports nothing beyond the
standard library (jsonschema only when a value is checked).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any


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


def moment_end(text: str) -> datetime:
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

# A monthly_refresh run's own: what it does with days of the month that have no bronze.
PARTIAL = Parameter("partial", "leave out days without bronze", {"type": "boolean"}, default=False)
