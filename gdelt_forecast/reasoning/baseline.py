"""``gdelt-forecast baseline --method llm --task I-CEC``: the `llm` server answers a
release's reasoning questions, each with its record's own prompt (EV2's appendix wording,
which ends "The answer is"), as EV2 evaluates models; the answers are read leniently
(:func:`gdelt_forecast.reasoning.evaluate.chosen`) and scored by task, relation type and
relation. Every call goes through the LLM client (cache, retries,
``<data_root>/baselines/<release>/reasoning/<TASK>/llm_calls.parquet``, with the predictions
beside it), and the scores join the release's agent leaderboard
(:mod:`gdelt_forecast.agents.leaderboard`) as a row of their own.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq

from gdelt_forecast.config import Config
from gdelt_forecast.data_root import DataRoot
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
    from gdelt_forecast.agents import leaderboard
    from gdelt_forecast.llm import Request, run, summarize, write_calls
    from gdelt_forecast.reasoning.evaluate import evaluate_reasoning

    t0 = time.monotonic()
    path = folder / "reasoning" / task
    if not path.is_dir():
        raise StageError(f"baseline: {folder.name} has no {task} records ({path})")
    rows = pq.read_table(path).to_pylist()
    requests = [
        Request(r["id"], task, [{"role": "user", "content": r["prompt"]}], None) for r in rows
    ]
    sent = time.monotonic()
    results = run(cfg, requests) if requests else []
    calls = summarize(results, time.monotonic() - sent)
    out = DataRoot(cfg.data_root).baselines / folder.name / "reasoning" / task
    write_calls(out / "llm_calls.parquet", results)
    lines = [
        json.dumps({"id": r.key, "prediction": r.answer["content"] if r.answer else None})
        for r in results
    ]
    predictions = out / "predictions.jsonl"
    predictions.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    scores = evaluate_reasoning(task, path, predictions)
    summary = Summary(
        folder.name, task, scores, {**calls.to_dict(), "line": calls.line()},
        time.monotonic() - t0,
    )  # fmt: skip
    leaderboard.add_reasoning(
        DataRoot(cfg.data_root).agents / folder.name / leaderboard.FILE,
        {
            "release": folder.name,
            "run": f"baseline-llm_{cfg.llm.model}_{task}",
            "model": cfg.llm.model,
            "task": task,
            "prompt_version": rows[0]["prompt_version"] if rows else None,
            "accuracy": scores["accuracy"],
            "queries": scores["records"],
            "prompt_tokens": calls.prompt_tokens,
            "completion_tokens": calls.completion_tokens,
            "finished": datetime.now(UTC).replace(microsecond=0).isoformat(),
        },
    )
    return summary
