"""``gdelt-forecast evaluate-reasoning --task T --reasoning PATH --predictions FILE``: score
predictions for one of EV2's four tasks, as EV2 reports them (Table 4, Figure 2): accuracy,
and by level and relation type, and by relation.

Predictions are JSON Lines, ``{"id": ..., "prediction": ...}``, as for ``evaluate-tasks``
(the last line of an id wins; a line without an id is counted). A prediction is read
leniently, as the other multiple-choice tasks read theirs: the option letter ("(B)", a bare
"B", "The answer is B.", or "B. ..." continuing the prompt's "The answer is"), or the
option itself (an event id such as ``event7``, a type, or
a relation label such as ``Before``) when it names exactly one option. A record without a
prediction, or with one that names no option, scores as wrong and is counted.

``--reasoning`` is a task file or a folder holding them: ``reasoning/<month>/`` of a data
root, or a release's ``reasoning/<TASK>/``.
"""

from __future__ import annotations

import re
import string
import time
from collections import defaultdict
from pathlib import Path

import pyarrow.dataset as ds

from gdelt_forecast.contract.names import REASONING as TASKS
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.scoring.answers import option_letter
from gdelt_forecast.scoring.predictions import bad_lines_note, coverage, predictions_by_id

_ANSWER_IS = re.compile(r"answer is\W*\(?([A-D])\b", re.IGNORECASE)
# A reply that continues the prompt's "The answer is": the letter first, then anything.
_LEADING = re.compile(r"^\W*\(?([A-D])(?:\)|[.:,]|\s|$)")


class ReasoningEvaluateError(StageError):
    """The records or the predictions cannot be read."""


def chosen(row: dict, raw: object) -> str | None:
    """The letter of the option ``raw`` names; None if it names none or several."""
    text = str(raw or "").strip()
    letters = string.ascii_uppercase[: len(row["candidates"])]
    letter = option_letter(text)
    if letter is None and (found := _ANSWER_IS.findall(text)):
        letter = found[-1].upper()
    if letter is None and (leading := _LEADING.match(text)):
        letter = leading[1]
    if letter is not None:
        return letter if letter in letters else None
    named = [
        i for i, option in enumerate(row["candidates"])
        if re.search(rf"(?<!\w){re.escape(option)}(?!\w)", text, re.IGNORECASE)
    ]  # fmt: skip
    return letters[named[0]] if len(named) == 1 else None


def evaluate_reasoning(
    task: str, path: Path, predictions_path: Path, split: str | None = None
) -> dict:
    t0 = time.monotonic()
    if task not in TASKS:
        raise ReasoningEvaluateError(f"task {task!r}: one of {', '.join(TASKS)}")
    rows = _records(path, task, split)
    predictions, counts = predictions_by_id(predictions_path, ReasoningEvaluateError)
    picks = {r["id"]: chosen(r, predictions[r["id"]]) for r in rows if r["id"] in predictions}
    right = {r["id"]: picks.get(r["id"]) == r["answer"] for r in rows}
    groups: dict[str, dict[str, list[bool]]] = {"relation_type": defaultdict(list),
                                                "relation": defaultdict(list)}  # fmt: skip
    for r in rows:
        groups["relation_type"][r["relation_type"]].append(right[r["id"]])
        groups["relation"][r["relation"]].append(right[r["id"]])
    return {
        "task": task,
        "reasoning": str(path),
        "split": split,
        **coverage({r["id"] for r in rows}, predictions, counts),
        "unparseable": sum(p is None for p in picks.values()),
        "accuracy": _accuracy(list(right.values())),
        **{by: {k: _accuracy(v) for k, v in sorted(g.items())} for by, g in groups.items()},
        "seconds": round(time.monotonic() - t0, 3),
    }


def _accuracy(right: list[bool]) -> float:
    return round(100 * sum(right) / len(right), 2) if right else 0.0


def render(result: dict) -> str:
    lines = [
        f"{result['task']}: {result['records']} records ({result['predicted']} predicted, "
        f"{result['missing']} missing, {result['unknown_ids']} unknown ids, "
        f"{result['bad_lines']} bad lines, {result['unparseable']} unparseable); accuracy "
        f"{result['accuracy']:.2f}%"
    ]
    for by in ("relation_type", "relation"):
        lines.append(f"by {by.replace('_', ' ')}: " + ", ".join(
            f"{k} {v:.2f}%" for k, v in result[by].items()))  # fmt: skip
    return "\n".join([*lines, *bad_lines_note(result)])


def _records(path: Path, task: str, split: str | None) -> list[dict]:
    if not path.exists():
        raise ReasoningEvaluateError(f"no reasoning records at {path}")
    files = [path] if path.is_file() else sorted(path.rglob("*.parquet"))
    rows = ds.dataset(files, format="parquet").to_table().to_pylist() if files else []
    rows = [r for r in rows if r["task"] == task]
    if split not in (None, "test"):
        rows = []  # the reasoning tasks have one split, test
    if not rows:
        raise ReasoningEvaluateError(f"no {task} records in {path}")
    return rows
