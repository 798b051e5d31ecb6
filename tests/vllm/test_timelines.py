"""The timelines stage's llm method on the demo month, against the real vLLM server: every
call's token counts equal the server's own counters, and a second run sends nothing that
was answered (a failed call is never cached, so only its complex event asks again)."""

from __future__ import annotations

import importlib.util
import time

import pyarrow.parquet as pq
import pytest

if importlib.util.find_spec("vllm") is None:
    pytest.skip("vLLM is not installed: run `make test-vllm`", allow_module_level=True)

from gdelt_forecast.ground.config import load_config  # noqa: E402 (after the skip: see test_server.py)
from gdelt_forecast.pipeline.runner import run  # noqa: E402
from tests.release.conftest import MONTH, REPO, demo_month  # noqa: E402

PROMPT, GENERATION = "vllm:prompt_tokens_total", "vllm:generation_tokens_total"


def settled(server, expected: dict[str, float]) -> dict[str, float]:
    """The counters once they reach ``expected`` (they lag the answers a little), or as they
    are after 10 s."""
    deadline = time.monotonic() + 10
    while True:
        now = server.counters()
        if all(now.get(k, 0) >= v for k, v in expected.items()) or time.monotonic() > deadline:
            return now
        time.sleep(0.2)


def counted(server, before: dict[str, float], rows: list[dict]) -> dict:
    """What the server's token counters grew by since ``before``, and what ``rows`` (calls
    or steps, with their tokens) say was sent."""
    sent = {
        PROMPT: sum(r["prompt_tokens"] for r in rows),
        GENERATION: sum(r["completion_tokens"] for r in rows),
    }
    after = settled(server, {k: before.get(k, 0) + v for k, v in sent.items()})
    return {"counted": {k: after[k] - before.get(k, 0) for k in sent}, "sent": sent}


def answering(server, max_tokens: int) -> list[str]:
    """The overrides that point the LLM client at ``server``, sampling."""
    return [
        f"llm.base_url={server.base_url}",
        f"llm.model={server.model}",
        "llm.timeout_s=300",
        "llm.temperature=1.0",
        f"llm.max_tokens={max_tokens}",
    ]


def test_llm_timelines_against_vllm(vllm_server, demo_built, tmp_path):
    demo = demo_month(demo_built, tmp_path / "data", tmp_path / "mirror")
    cfg = load_config(
        REPO / "configs/demo.yaml",
        [
            f"llm.base_url={vllm_server.base_url}",
            f"llm.model={vllm_server.model}",
            "timelines.method=llm",
            "timelines.article_chars=2000",
            "llm.timeout_s=300",
            # Random weights: greedy decoding loops on JSON whitespace until max_tokens
            # (tests/vllm/README.md); sampled answers end by themselves.
            "llm.temperature=1.0",
            "llm.max_tokens=500",
        ],
        demo.data_root,
    )
    before = vllm_server.counters()
    summary = run("timelines", cfg, MONTH)
    calls = pq.read_table(cfg.data_root / f"timelines/{MONTH}/llm_calls.parquet").to_pylist()
    assert summary.complex_events == 2 and len(calls) >= 4  # extract + complement each
    assert {c["step"] for c in calls} >= {"extract", "complement:1"}
    assert all(c["status"] in ("ok", "fallback", "failed") for c in calls)
    sent = {
        PROMPT: sum(c["prompt_tokens"] for c in calls if not c["cached"]),
        GENERATION: sum(c["completion_tokens"] for c in calls if not c["cached"]),
    }
    after = settled(vllm_server, {k: before.get(k, 0) + v for k, v in sent.items()})
    assert {k: after[k] - before.get(k, 0) for k in sent} == sent
    assert summary.llm["prompt_tokens"] == sent[PROMPT] > 0

    answered = {c["hash"] for c in calls if c["status"] != "failed"}
    again = run("timelines", cfg, MONTH)
    rerun = pq.read_table(cfg.data_root / f"timelines/{MONTH}/llm_calls.parquet").to_pylist()
    assert all(c["cached"] for c in rerun if c["hash"] in answered)
    # Only a complex event with a failed call asks again: that call, and the later steps
    # whose prompts differ once it is answered.
    resent = [c for c in rerun if not c["cached"]]
    failed_events = {c["key"] for c in calls if c["status"] == "failed"}
    assert {c["key"] for c in resent} <= failed_events
    final = settled(vllm_server, {})
    assert final[GENERATION] - after[GENERATION] == sum(c["completion_tokens"] for c in resent)
    # Every answered call of a complex event without a failure is asked the same again (a
    # failed event's later prompts differ once its failed step is answered).
    clean = {c["hash"] for c in calls if c["status"] != "failed" and c["key"] not in failed_events}
    assert again.llm["cache_hits"] == len(rerun) - len(resent) >= len(clean)
