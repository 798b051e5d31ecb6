"""The tasks' llm method and LRAE on the demo month, against the real vLLM server: both run
end to end, and the tokens they log equal the server's own counters."""

from __future__ import annotations

import importlib.util
import json

import pyarrow.parquet as pq
import pytest

if importlib.util.find_spec("vllm") is None:
    pytest.skip("vLLM is not installed: run `make test-vllm`", allow_module_level=True)

from gdelt_forecast.ground.config import load_config  # noqa: E402 (after the skip: see test_server.py)
from gdelt_forecast.pipeline.runner import run  # noqa: E402
from gdelt_forecast.tasks.evaluate import evaluate_tasks  # noqa: E402
from tests.release.conftest import MONTH, REPO, demo_month  # noqa: E402
from tests.vllm.test_timelines import GENERATION, PROMPT, answering, settled  # noqa: E402


def test_llm_tasks_and_lrae_against_vllm(vllm_server, demo_built, tmp_path):
    demo = demo_month(demo_built, tmp_path / "data", tmp_path / "mirror")
    run("timelines", demo, MONTH)  # extractive timelines: the model writes the tasks' parts
    cfg = load_config(
        REPO / "configs/demo.yaml",
        # Random weights: sampled answers end by themselves (tests/vllm/README.md).
        [*answering(vllm_server, 300), "timelines.method=llm"],
        demo.data_root,
    )
    before = vllm_server.counters()
    summary = run("tasks", cfg, MONTH)
    out = cfg.data_root / "tasks" / MONTH
    calls = pq.read_table(out / "llm_calls.parquet").to_pylist()
    # One call per record the model writes parts of: the demo's 6 cuts each give all three.
    assert sorted(c["step"] for c in calls) == ["AQA"] * 6 + ["MCAC"] * 6 + ["MCNC"] * 6
    assert sum(summary.records.values()) == 36  # a record the noise cannot fill stays extractive
    methods = {
        r["method"] for t in ("AQA", "MCAC", "MCNC") for r in pq.read_table(out / t).to_pylist()
    }
    assert methods <= {"llm", "extractive"}
    sent = {
        PROMPT: sum(c["prompt_tokens"] for c in calls),
        GENERATION: sum(c["completion_tokens"] for c in calls),
    }
    after = settled(vllm_server, {k: before.get(k, 0) + v for k, v in sent.items()})
    assert {k: after[k] - before.get(k, 0) for k in sent} == sent

    ltf = pq.read_table(out / "LTF").to_pylist()
    preds = tmp_path / "ltf.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"id": r["id"], "prediction": "1. Talks resume.\n2. Sanctions are lifted."})
            + "\n"
            for r in ltf
        )
    )
    result = evaluate_tasks(cfg, "LTF", out, preds)
    assert result["records"] == 6 and result["judge_model"] == vllm_server.model
    counts = result["counts"]
    assert counts["tp"] + counts["mtp"] + counts["fp"] == 12  # every atomic prediction judged
    assert 0 <= result["f1"] <= 100 and result["llm"]["calls"] >= 12
    judged = settled(vllm_server, {PROMPT: after[PROMPT] + result["llm"]["prompt_tokens"]})
    assert judged[PROMPT] - after[PROMPT] == result["llm"]["prompt_tokens"] > 0
