"""MIRAI's Direct IO baseline on the demo release against the real vLLM server: every query
is asked once, the answers are scored, and the tokens logged equal the server's counters."""

from __future__ import annotations

import importlib.util

import pyarrow.parquet as pq
import pytest

if importlib.util.find_spec("vllm") is None:
    pytest.skip("vLLM is not installed: run `make test-vllm`", allow_module_level=True)

from pathlib import Path  # noqa: E402 (after the skip: see test_server.py)

from gdelt_forecast.baselines import run_baseline  # noqa: E402
from gdelt_forecast.ground.config import load_config  # noqa: E402
from gdelt_forecast.pipeline.runner import run  # noqa: E402
from tests.release.conftest import MONTH, REPO, demo_month  # noqa: E402
from tests.vllm.test_timelines import answering, counted  # noqa: E402


def test_the_llm_baseline_against_vllm(vllm_server, demo_built, tmp_path):
    demo = demo_month(demo_built, tmp_path / "data", tmp_path / "mirror")
    release = Path(run("release", demo, MONTH).path)
    cfg = load_config(
        REPO / "configs/demo.yaml",
        [
            *answering(vllm_server, 100),
        ],
        demo.data_root,
    )
    before = vllm_server.counters()
    summary = run_baseline(cfg, release, "llm", "subset")
    calls = pq.read_table(demo.data_root / "baselines" / release.name / "llm_calls.parquet")
    calls = calls.to_pylist()
    assert summary.queries == len(calls) == 2 and summary.llm["calls"] == 2
    assert {c["step"] for c in calls} == {"direct"} and summary.scores["n"] == 2
    tokens = counted(vllm_server, before, calls)
    assert tokens["counted"] == tokens["sent"]
