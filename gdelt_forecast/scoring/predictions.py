"""Predictions files, as ``evaluate``, ``evaluate-tasks`` and ``evaluate-reasoning`` read them:
JSON Lines of ``{"<key>": ..., "prediction": ...}``, with their bad and repeated lines counted,
and how the predictions cover the records scored (the counts every report starts with)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gdelt_forecast.ground.wellformed import wellformed, wellformed_value

BAD_LINES_SHOWN = 10


class LineCounts(Counter):
    """Counts of a predictions file's bad and repeated lines, and the first bad lines, each
    as "line N is ..." (the file's bytes are read, so an undecodable line is one of them)."""

    def __init__(self):
        super().__init__()
        self.bad: list[str] = []

    def add_bad(self, why: str) -> None:
        self["bad_lines"] += 1
        if len(self.bad) < BAD_LINES_SHOWN:
            self.bad.append(why)


def load_predictions(path: Path, key: str = "query_id") -> tuple[dict[str, object], LineCounts]:
    """``key`` value -> raw prediction (the last line of an id wins: a file appended to by a
    re-run ends with its newest answers), and counts of bad and repeated lines.

    A line that is not a JSON object with a ``key`` (or not UTF-8, or nested past the JSON
    parser's limit) only counts as a bad line (its record scores as missing), but a file
    whose every line is one (a JSON array, plain text, a CSV) is not a predictions file:
    ValueError naming its first line. An empty file is no error. Ids and predictions are
    well-formed text (:mod:`gdelt_forecast.ground.wellformed`): a lone surrogate or a NUL escaped in
    a JSON string is replaced, as it could be written nowhere else (a report, a cache).
    """
    predictions: dict[str, object] = {}
    counts = LineCounts()
    for number, record in json_lines(path):
        if not isinstance(record, dict) or record.get(key) is None:
            # no id to blame: that record counts as missing
            counts.add_bad(f"line {number} is {describe(record, key)}")
            continue
        try:
            record_id = wellformed(str(record[key]), "predictions")
            prediction = wellformed_value(record.get("prediction"), "predictions")
        except RecursionError:  # parsed, but too deep to walk (or print) once more
            counts.add_bad(f"line {number} is {describe(TOO_DEEP, key)}")
            continue
        counts["duplicate_ids"] += record_id in predictions
        predictions[record_id] = prediction
    if counts.bad and not predictions:
        raise ValueError(
            f"{path}: no line is a JSON object with a {key} ({counts.bad[0]}): predictions are "
            f'JSON Lines, one {{"{key}": ..., "prediction": ...}} object per line'
        )
    return predictions, counts


def predictions_by_id(path: Path, error: type[Exception]) -> tuple[dict[str, object], LineCounts]:
    """:func:`load_predictions` keyed by ``id`` (the task records' key), its failures as
    ``error`` in one line naming the file."""
    try:
        return load_predictions(path, key="id")
    except OSError as exc:
        raise error(f"cannot read {exc.filename}: {exc.strerror}") from None
    except ValueError as exc:
        raise error(str(exc).splitlines()[0]) from None


def bad_lines_note(result: dict) -> list[str]:
    """The report's line naming the first bad lines of the predictions file, if any."""
    bad = result.get("bad_lines_first") or []
    return (
        [f"bad lines: {'; '.join(bad)}" + ("; ..." if len(bad) == BAD_LINES_SHOWN else "")]
        if bad
        else []
    )


def coverage(ids: set[str], predictions: dict, counts: LineCounts) -> dict:
    """How the predictions cover the records ``ids``: the counts every report starts with."""
    return {
        "records": len(ids),
        "predicted": len(ids & set(predictions)),
        "missing": len(ids - set(predictions)),
        "unknown_ids": len(set(predictions) - ids),
        "bad_lines": counts["bad_lines"],
        "duplicate_ids": counts["duplicate_ids"],
        "bad_lines_first": counts.bad,
    }


@dataclass(frozen=True)
class BadLine:
    """A line with no JSON value, and why, in words that never quote it (it may be hostile)."""

    why: str


NOT_JSON = BadLine("not JSON")
TOO_DEEP = BadLine("JSON nested too deeply")
_JSON_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


def json_lines(path: Path) -> Iterator[tuple[int, object]]:
    """Each line of the file at ``path`` that is not blank, numbered from 1: its JSON value,
    or a :class:`BadLine` where it is not UTF-8, not JSON, or nested past the JSON parser's
    limit. A byte-order mark some editors write first is skipped."""
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield number, BadLine(f"not UTF-8 ({exc.reason} at byte {exc.start})")
                continue
            if number == 1:
                line = line.removeprefix("\ufeff")
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except ValueError:
                yield number, NOT_JSON
            except RecursionError:
                yield number, TOO_DEEP


def describe(record: object, key: str) -> str:
    """What a line's `record` is, when it is no JSON object with a `key`, for the message that
    names the line (never its content, which may be hostile)."""
    if isinstance(record, BadLine):
        return record.why
    if isinstance(record, dict):
        return f"an object without a {key}"
    return f"a JSON {_JSON_TYPES.get(type(record), 'null')}"
