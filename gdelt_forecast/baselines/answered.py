"""A release's questions answered as free text by the `llm` server, one prompt each, then
scored and entered on the release's leaderboard: the part the llm baselines on EV2's tasks
(:mod:`gdelt_forecast.reasoning.baseline`) and on OpenForecast's tasks
(:mod:`gdelt_forecast.tasks.baseline`) share. Every call goes through the LLM client (cache,
retries); the calls and the predictions land in ``<data_root>/baselines/<release>/<out>/``
(``llm_calls.parquet``, ``predictions.jsonl`` as ``evaluate-tasks`` and
``evaluate-reasoning`` read them)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from gdelt_forecast.agents import leaderboard
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.llm import Request, run, summarize, write_calls


@dataclass
class Summary(StageSummary):
    """One task's run; each baseline says its scores in its evaluator's words (``line``)."""

    release: str
    task: str
    split: str
    scores: dict = field(repr=False)
    llm: dict = field(default_factory=dict)
    seconds: float = 0.0


S = TypeVar("S", bound=Summary)


def answered(
    summary: type[S],
    cfg: Config,
    release: str,
    task: str,
    split: str,
    out: str,
    prompts: list[tuple[str, str]],
    version: str | None,
    score: Callable[[Path], dict],
) -> S:
    """Each (id, prompt) asked as one user message, the answers scored by ``score`` (of the
    predictions file) and entered on the release's leaderboard (a re-run replaces its row)."""
    requests = [Request(key, task, [{"role": "user", "content": p}], None) for key, p in prompts]
    sent = time.monotonic()
    results = run(cfg, requests) if requests else []
    calls = summarize(results, time.monotonic() - sent)
    folder = DataRoot(cfg.data_root).baselines / release / out
    write_calls(folder / "llm_calls.parquet", results)
    lines = [
        json.dumps({"id": r.key, "prediction": r.answer["content"] if r.answer else None})
        for r in results
    ]
    predictions = folder / "predictions.jsonl"
    predictions.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    scores = score(predictions)
    leaderboard.add_task(
        DataRoot(cfg.data_root).agents / release / leaderboard.FILE,
        {
            "release": release,
            "run": f"baseline-llm_{cfg.llm.model}_{task}",
            "model": cfg.llm.model,
            "task": task,
            "prompt_version": version,
            "accuracy": scores.get("accuracy"),
            "f1": scores.get("f1"),
            "queries": scores["records"],
            "prompt_tokens": calls.prompt_tokens,
            "completion_tokens": calls.completion_tokens,
        },
    )
    llm = {**calls.to_dict(), "line": calls.line()}
    return summary(release, task, split, scores, llm)
