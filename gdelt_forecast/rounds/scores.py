"""A resolved round's scores: each forecaster's forecasts in force against the answers.

- A relation query scores by MIRAI's precision, recall and F1 at the first and the second
  level (an empty answer as :func:`gdelt_forecast.scoring.rounds.score_relation` defines it).
- A binary question scores by the Brier score and the log score.
- A void question is not scored, and counted.
- A question a forecaster left out is imputed (the empty answer, 0.5) and counted; a
  forecaster with more than ``IMPUTED_MARK`` of its questions imputed is ``marked``.
- A commit never revealed has no forecasts to score: it is counted in the summary, not scored.

``scores.parquet``: one row per forecaster, question kind, metric and question set (``all``,
or ``robust``: the fragile questions left out), with the mean, its seeded bootstrap 95%
interval, and the questions counted, voided and imputed. ``question_scores.parquet``: each
forecaster's score on each question it was scored on, and whether it was imputed, which the
leaderboard across rounds reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from gdelt_forecast.contract.names import BINARY, RELATION
from gdelt_forecast.ground.data_root import ROUND_JSON, ROUND_QUESTIONS
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.rounds.clock import Clock
from gdelt_forecast.rounds.ledger import COMMIT, in_force, ledger_rows
from gdelt_forecast.rounds.submissions import check_submission
from gdelt_forecast.scoring.rounds import brier, interval, log_score, score_relation

SCORES_FILE = "scores.parquet"
QUESTION_SCORES_FILE = "question_scores.parquet"
IMPUTED_MARK = 0.05
IMPUTED = {RELATION: {}, BINARY: 0.5}
METRICS = {
    RELATION: [f"{level}_{m}" for level in ("first_level", "second_level")
               for m in ("precision", "recall", "f1")],
    BINARY: ["brier", "log_score"],
}  # fmt: skip
SETS = ("all", "robust")  # robust: without the fragile questions
SCORES = pa.schema(
    [
        ("forecaster", pa.string()),
        ("model", pa.string()),
        ("kind", pa.string()),
        ("metric", pa.string()),
        ("questions_set", pa.string()),
        ("mean", pa.float64()),
        ("low", pa.float64()),  # the bootstrap 95% interval; null with fewer than two values
        ("high", pa.float64()),
        ("questions", pa.int64()),  # scored, imputed ones included
        ("voided", pa.int64()),
        ("imputed", pa.int64()),
        ("marked", pa.bool_()),  # more than IMPUTED_MARK of its questions imputed
    ]
)
QUESTION_SCORES = pa.schema(
    [
        ("forecaster", pa.string()),
        ("model", pa.string()),
        ("question_id", pa.string()),
        ("kind", pa.string()),
        ("fragile", pa.bool_()),
        ("imputed", pa.bool_()),
        ("metric", pa.string()),
        ("value", pa.float64()),
    ]
)


def score_round(folder: Path, resolution: list[dict], seed: int = 0) -> dict[str, int]:
    """Write ``folder``'s scores.parquet and question_scores.parquet from ``resolution``
    (resolution.parquet's rows); return how many forecasters were scored and how many commits
    were never revealed."""
    scores, each, counts = scored(folder, resolution, seed)
    write_parquet(scores, folder / SCORES_FILE)
    write_parquet(each, folder / QUESTION_SCORES_FILE)
    return counts


def scored(folder: Path, resolution: list[dict], seed: int = 0) -> tuple[pa.Table, pa.Table, dict]:
    """The tables :func:`score_round` writes, and its counts."""
    pinned = json.loads((folder / ROUND_JSON).read_text(encoding="utf-8"))
    questions = pq.read_table(folder / ROUND_QUESTIONS, columns=["question_id", "kind"])
    kinds = dict(zip(*(questions[c].to_pylist() for c in ("question_id", "kind")), strict=True))
    held = in_force(ledger_rows(folder), Clock.pinned(pinned).deadline)
    rows, each, unrevealed = [], [], 0
    for forecaster, entry in sorted(held.items()):
        if entry["action"] == COMMIT and "revealed" not in entry:
            unrevealed += 1
            continue
        file = entry["revealed"]["file"] if entry["action"] == COMMIT else entry["file"]
        forecasts = check_submission(folder / file, kinds)
        values = _values(forecasts, resolution)
        rows += _forecaster_rows(forecaster, entry["model"], forecasts, values, resolution, seed)
        each += [
            {"forecaster": forecaster, "model": entry["model"], "question_id": r["question_id"],
             "kind": r["kind"], "fragile": r["fragile"],
             "imputed": r["question_id"] not in forecasts, "metric": metric, "value": value}
            for r in resolution if r["void"] is None
            for metric, value in values[r["question_id"]].items()
        ]  # fmt: skip
    return (
        pa.Table.from_pylist(rows, schema=SCORES),
        pa.Table.from_pylist(each, schema=QUESTION_SCORES),
        {"forecasters": len(held) - unrevealed, "unrevealed": unrevealed},
    )


def _values(forecasts: dict, resolution: list[dict]) -> dict[str, dict[str, float]]:
    """Each answered question's metrics, a forecast left out imputed."""
    return {
        r["question_id"]: _metrics(
            r["kind"], r, forecasts.get(r["question_id"], IMPUTED[r["kind"]])
        )
        for r in resolution
        if r["void"] is None
    }


def _forecaster_rows(forecaster, model, forecasts, values, resolution, seed) -> list[dict]:
    rows = []
    for kind in (RELATION, BINARY):
        asked = [r for r in resolution if r["kind"] == kind]
        scored = [r for r in asked if r["void"] is None]
        imputed = sum(r["question_id"] not in forecasts for r in scored)
        for which in SETS:
            chosen = [r for r in scored if which == "all" or not r["fragile"]]
            for metric in METRICS[kind]:
                series = [values[r["question_id"]][metric] for r in chosen]
                low_high = interval(series, seed) if series else None
                rows.append({
                    "forecaster": forecaster, "model": model, "kind": kind, "metric": metric,
                    "questions_set": which,
                    "mean": sum(series) / len(series) if series else None,
                    "low": low_high[0] if low_high else None,
                    "high": low_high[1] if low_high else None,
                    "questions": len(chosen), "voided": len(asked) - len(scored),
                    "imputed": sum(r["question_id"] not in forecasts for r in chosen),
                    "marked": bool(scored) and imputed / len(scored) > IMPUTED_MARK,
                })  # fmt: skip
    return rows


def _metrics(kind: str, resolved: dict, forecast) -> dict[str, float]:
    if kind == BINARY:
        outcome = resolved["outcome"]
        return {"brier": brier(forecast, outcome), "log_score": log_score(forecast, outcome)}
    scored = score_relation(json.loads(resolved["answer"]), forecast)
    return {
        f"{level}_{m}": scored[level][m]
        for level in ("first_level", "second_level")
        for m in ("precision", "recall", "f1")
    }
