"""``gdelt-forecast baseline --method llm --task I-CEC``: the `llm` server answers a
release's reasoning questions, each with its record's own prompt (EV2's appendix wording,
which ends "The answer is"), as EV2 evaluates models; the answers are read leniently
(:func:`gdelt_forecast.reasoning.evaluate.chosen`) and scored by task, relation type and
relation. Calls and predictions land in ``<data_root>/baselines/<release>/reasoning/<TASK>/``
and the scores join the release's leaderboard (:mod:`gdelt_forecast.baselines.answered`).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from gdelt_forecast.baselines import answered
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.errors import StageError


class Summary(answered.Summary):
    def line(self) -> str:
        from gdelt_forecast.reasoning.evaluate import render

        return f"baseline llm on {self.task}: {render(self.scores)}\n{self.llm['line']}"


def answer_reasoning(cfg: Config, folder: Path, task: str) -> Summary:
    from gdelt_forecast.reasoning.evaluate import evaluate_reasoning

    path = folder / "reasoning" / task
    if not path.is_dir():
        raise StageError(f"baseline: {folder.name} has no {task} records ({path})")
    rows = pq.read_table(path).to_pylist()
    return answered.answered(
        Summary, cfg, folder.name, task, "test", f"reasoning/{task}",
        [(r["id"], r["prompt"]) for r in rows], rows[0]["prompt_version"] if rows else None,
        lambda predictions: evaluate_reasoning(task, path, predictions),
    )  # fmt: skip
