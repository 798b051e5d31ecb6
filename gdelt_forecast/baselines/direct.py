"""The ``llm`` baseline: MIRAI's Direct IO agent, the model's answer to the query alone (no
tools, no data), with the prompts of MIRAI's appendix K (``prompts/mirai-direct-v1``).
Imported only when that baseline runs: it loads the LLM client (and openai)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

from pydantic import ConfigDict, Field

from gdelt_forecast.agents import leaderboard
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.llm import Answer, Request, run, summarize, write_calls
from gdelt_forecast.llm.schema import chars
from gdelt_forecast.scoring.answers import parse_prediction

PROMPTS = Path(__file__).parent / "prompts" / "mirai-direct-v1"


class Forecast(Answer):
    """MIRAI's dict of first-level -> second-level codes, bounded (at most 20 first-level
    codes of at most 20 codes each) so that guided decoding ends; the scorer reads and
    checks the codes (invalid ones are counted, not trusted)."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"maxProperties": 20})
    __pydantic_extra__: dict[str, Annotated[list[chars(3)], Field(max_length=20)]]


def _read_answer(text: str) -> dict:
    """A prediction from an answer that is not plain JSON ("Final Answer: {...}")."""
    prediction = parse_prediction(text)
    if prediction is None:
        raise ValueError("no prediction dict in the answer")
    return prediction


# The query rows' columns Direct IO reads (testset/queries.parquet's, or a round's relation
# queries as rounds.entrants gives them).
COLUMNS = [
    "query_id", "date", "subject", "subject_name", "object", "object_name", "date_nlp",
    "cutoff_nlp",
]  # fmt: skip


def direct_io(rows: list[dict], cfg: Config, calls: Path) -> tuple[dict[str, object], dict]:
    """MIRAI's Direct IO: one chat per query row (``COLUMNS``), the answer dict as the
    prediction (a failed call predicts nothing, as an unparseable answer scores in MIRAI);
    the calls logged to ``calls``."""
    system = (PROMPTS / "system.txt").read_text(encoding="utf-8").strip().format()
    query = (PROMPTS / "query.txt").read_text(encoding="utf-8").strip()
    requests = [
        Request(
            r["query_id"],
            "direct",
            [
                {"role": "system", "content": system},
                {
                    "role": "user",
                    "content": query.format(
                        actor1_name=r["subject_name"],
                        actor2_name=r["object_name"],
                        future_date_nlp=r["date_nlp"],
                        current_date_nlp=r["cutoff_nlp"],
                        future_date=r["date"].isoformat(),
                        actor1_code=r["subject"],
                        actor2_code=r["object"],
                    ),
                },
            ],
            Forecast,
            "forecast",
            _read_answer,
        )
        for r in rows
    ]
    t0 = time.monotonic()
    results = run(cfg, requests)
    write_calls(calls, results)
    predictions = {r.key: r.answer or {} for r in results}
    return predictions, summarize(results, time.monotonic() - t0).to_dict()


def enter(cfg: Config, release: str, split: str, scores: dict, llm: dict, queries: int) -> None:
    """The run's row on the release's leaderboard beside the agents', as MIRAI's Table 2
    lists Direct IO: no action, no APIs (a re-run replaces its row)."""
    leaderboard.add(
        DataRoot(cfg.data_root).agents / release / leaderboard.FILE,
        {
            "release": release,
            "run": f"baseline-llm_{cfg.llm.model}_direct_{split}",
            "model": cfg.llm.model,
            "action": "direct",
            "apis": "-",
            "split": split,
            "samples": 1,
            "prompt_version": PROMPTS.name,
            "summary": {
                "scores": scores,
                "queries": queries,
                "prompt_tokens": llm["prompt_tokens"],
                "completion_tokens": llm["completion_tokens"],
            },
        },
    )
