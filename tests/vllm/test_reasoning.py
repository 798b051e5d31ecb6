"""The reasoning stage's judged relations against the real vLLM server (plumbing only: the
random-weight model's labels are not judged): every pair is asked both ways through
guided JSON, each answer is a label, and the tokens logged equal the server's counters."""

from __future__ import annotations

import importlib.util

import pyarrow.parquet as pq
import pytest

if importlib.util.find_spec("vllm") is None:
    pytest.skip("vLLM is not installed: run `make test-vllm`", allow_module_level=True)

from gdelt_forecast.contract.reasoning import cameo_types, unsound  # noqa: E402
from gdelt_forecast.ground.config import load_config  # noqa: E402
from gdelt_forecast.pipeline.runner import run  # noqa: E402
from gdelt_forecast.reference import tables  # noqa: E402
from tests.release.conftest import MONTH, REPO, demo_month  # noqa: E402
from tests.vllm.test_timelines import answering, counted  # noqa: E402

TYPES = cameo_types(tables.relations())


def test_the_model_labels_pairs_both_ways(vllm_server, demo_built, tmp_path):
    demo = demo_month(demo_built, tmp_path / "data", tmp_path / "mirror")
    cfg = load_config(
        REPO / "configs/demo.yaml",
        [
            *answering(vllm_server, 40),
            "reasoning.method=llm",
            "reasoning.judged_pairs=3",
        ],
        demo.data_root,
    )
    before = vllm_server.counters()
    summary = run("reasoning", cfg, MONTH)
    out = cfg.data_root / "reasoning" / MONTH
    calls = pq.read_table(out / "llm_calls.parquet").to_pylist()
    assert summary.judged["pairs"] == 6 and len(calls) == 12  # two stories, both ways
    assert sum(summary.judged.get(k, 0) for k in ("consistent", "inconsistent", "failed")) == 6
    assert all(c["status"] in ("ok", "fallback", "failed") for c in calls)
    for task in ("I-CEC", "I-CRR"):
        for row in pq.read_table(out / f"{task}.parquet").to_pylist():
            assert unsound(row, TYPES) is None
    tokens = counted(vllm_server, before, calls)
    assert tokens["counted"] == tokens["sent"]
