"""A function-calling agent run on the demo release against the real vLLM server, tool
calling enabled: every query ends in one of MIRAI's end states, and the tokens the steps
record equal the server's counters (the random-weight model's answers are not judged)."""

from __future__ import annotations

import importlib.util

import pyarrow.parquet as pq
import pytest

if importlib.util.find_spec("vllm") is None:
    pytest.skip("vLLM is not installed: run `make test-vllm`", allow_module_level=True)

from pathlib import Path  # noqa: E402 (after the skip: see test_server.py)

from gdelt_forecast.agents.react import END_STATES  # noqa: E402
from gdelt_forecast.agents.run import run_agents  # noqa: E402
from gdelt_forecast.ground.config import load_config  # noqa: E402
from gdelt_forecast.pipeline.runner import run  # noqa: E402
from tests.release.conftest import MONTH, REPO, demo_month  # noqa: E402
from tests.vllm.test_timelines import answering, counted  # noqa: E402


def test_a_function_calling_agent_run_against_vllm(vllm_server, demo_built, tmp_path):
    demo = demo_month(demo_built, tmp_path / "data", tmp_path / "mirror")
    release = Path(run("release", demo, MONTH).path)
    cfg = load_config(
        REPO / "configs/demo.yaml",
        [
            *answering(vllm_server, 40),
            "agents.max_steps=3",
            "agents.max_context_tokens=12000",  # within the server's 16,384
        ],
        demo.data_root,
    )
    before = vllm_server.counters()
    summary = run_agents(cfg, str(release), "subset", "function", "all")
    out = Path(summary.path)
    queries = pq.read_table(out / "queries.parquet").to_pylist()
    steps = pq.read_table(out / "steps.parquet").to_pylist()
    assert len(queries) == summary.queries == 2
    assert all(q["end_state"] in END_STATES and q["steps"] >= 1 for q in queries)
    assert sum(summary.end_states.values()) == 2 and summary.scores["n"] == 2
    assert all(s["prompt_tokens"] > 0 and not s["cached"] for s in steps)
    prompt = sum(s["prompt_tokens"] for s in steps)
    assert prompt == summary.prompt_tokens
    tokens = counted(vllm_server, before, steps)
    assert tokens["counted"] == tokens["sent"]
