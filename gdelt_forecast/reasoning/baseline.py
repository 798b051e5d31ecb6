"""``gdelt-forecast baseline --method llm --task I-CEC``: the `llm` server answers a
release's reasoning questions, each with its record's own prompt (EV2's appendix wording,
which ends "The answer is"), as EV2 evaluates models; the answers are read leniently
(:func:`gdelt_forecast.reasoning.evaluate.chosen`) and scored by task, relation type and
relation. Calls and predictions land in ``<data_root>/baselines/<release>/reasoning/<TASK>/``
and the scores join the release's leaderboard (:mod:`gdelt_forecast.baselines.answered`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from gdelt_forecast.config import Config
from gdelt_forecast.errors import StageError
from gdelt_forecast.summary import StageSummary


@dataclass
class Summary(StageSummary):
    release: str
    task: str
    scores: dict = field(repr=False)
    llm: dict = field(default_factory=dict)
    seconds: float = 0.0

    def line(self) -> str:
        from gdelt_forecast.reasoning.evaluate import render

        return f"baseline llm on {self.task}: {render(self.scores)}\n{self.llm['line']}"


def answer_reasoning(cfg: Config, folder: Path, task: str) -> Summary:
    from gdelt_forecast.baselines import answered
    from gdelt_forecast.reasoning.evaluate import evaluate_reasoning

    t0 = time.monotonic()
    path = folder / "reasoning" / task
    if not path.is_dir():
        raise StageError(f"baseline: {folder.name} has no {task} records ({path})")
    rows = pq.read_table(path).to_pylist()
    predictions, calls = answered.answer(
        cfg, folder.name, f"reasoning/{task}", task, [(r["id"], r["prompt"]) for r in rows]
    )
    scores = evaluate_reasoning(task, path, predictions)
    version = rows[0]["prompt_version"] if rows else None
    answered.enter(cfg, folder.name, task, version, calls, scores["records"],
                   accuracy=scores["accuracy"])  # fmt: skip
    return Summary(
        folder.name, task, scores, {**calls.to_dict(), "line": calls.line()},
        time.monotonic() - t0,
    )  # fmt: skip
