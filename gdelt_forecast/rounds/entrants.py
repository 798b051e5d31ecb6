"""The model forecasters of a round: ``gdelt-forecast agent --round ID`` (MIRAI's ReAct
agents) and ``baseline --method llm --round ID`` (Direct IO) answer its relation queries as
they answer a release's test set, and submit what they answer under their own name.

- **The queries** are the round's relation questions in the test set's shape: the question's
  id, its target day as the query's date, and as its cutoff the day before the open date. The
  agents' environment opens at the cutoff's next day, the open date, so no tool call sees a
  row dated on or after it, whatever later days the release holds (a replay's does).
- **The binary questions** are left out: MIRAI's prompts ask for relations, never for a
  probability. Scoring imputes them (0.5) and counts them, so the forecaster's binary rows
  are marked (all imputed), and its relation rows stand beside the reference forecasters'
  (docs/rounds.md).
- **The submission** is one JSON line per answer, cleaned as the scorer reads it (invalid or
  mismatched codes dropped, which MIRAI's scorer ignores anyway), through ``round submit``'s
  own checks and clock: a live round refuses it after the deadline, and the run's own files
  stay where the run wrote them.
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import pyarrow.parquet as pq

from gdelt_forecast.contract.names import RELATION
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import ROUND_JSON, ROUND_QUESTIONS, DataRoot, round_folder
from gdelt_forecast.ground.dates import spoken
from gdelt_forecast.rounds.clock import RoundError
from gdelt_forecast.rounds.ledger import Summary, submit_forecasts
from gdelt_forecast.scoring.mirai import clean_prediction
from gdelt_forecast.storage.locks import partition_lock

_COLUMNS = ["question_id", "kind", "subject", "subject_name", "object", "object_name",
            "target_date"]  # fmt: skip


def relation_queries(cfg: Config, round_id: str) -> list[dict]:
    """The round's relation questions as test-set query rows (the columns of
    ``testset/queries.parquet`` that the agents and Direct IO read)."""
    folder = DataRoot(cfg.data_root).path(round_folder(round_id))
    if not (folder / ROUND_JSON).exists():
        raise RoundError(f"no round {round_id} at {folder}: open it with `round open`")
    pinned = json.loads((folder / ROUND_JSON).read_text(encoding="utf-8"))
    # the last day the environment shows: it opens at the open date
    cutoff = date.fromisoformat(pinned["open_date"]) - timedelta(days=1)
    rows = pq.read_table(folder / ROUND_QUESTIONS, columns=_COLUMNS).to_pylist()
    return [
        {
            "query_id": r["question_id"],
            "date": r["target_date"],
            "subject": r["subject"],
            "subject_name": r["subject_name"],
            "object": r["object"],
            "object_name": r["object_name"],
            "date_nlp": spoken(r["target_date"]),
            "cutoff": cutoff,
            "cutoff_nlp": spoken(cutoff),
        }
        for r in rows
        if r["kind"] == RELATION
    ]


def forecast(answer: object) -> dict[str, list[str]]:
    """A model's answer (any value: it is the model's) as a relation forecast a round takes:
    the part of it MIRAI's scorer reads (valid first-level keys, each with its own valid
    second-level codes), the rest dropped."""
    kept = clean_prediction(answer if isinstance(answer, dict) else {})
    return {
        first: sorted(c for c in kept.second_level if c[:2] == first)
        for first in sorted(kept.first_level)
    }


def submit_answers(
    cfg: Config, round_id: str, forecaster: str, model: str, answers: dict[str, object], out: Path
) -> Summary:
    """Write ``answers`` (question id -> a model's answer dict, as it answered) to ``out`` as
    a submission, each cleaned to its valid codes, and submit it as ``forecaster``."""
    lines = [
        json.dumps({"question_id": question_id, "forecast": forecast(answer)})
        for question_id, answer in sorted(answers.items())
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    with partition_lock(cfg, "round", round_id):  # the lock of the round's own steps
        return submit_forecasts(cfg, round_id, forecaster, out, model=model)
