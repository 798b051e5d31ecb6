"""The release's "Model-built parts" (quality.json's model_built and the card's section):
none in the demo's extractive release; for a release whose timelines a model wrote, its
calls and tokens counted from the release's own llm_calls.parquet, each request once."""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq

from gdelt_forecast.llm import Result, write_calls
from gdelt_forecast.release import card
from gdelt_forecast.release.model_built import model_built
from tests.release.test_release import manifest


def test_the_extractive_demo_release_has_no_model_built_part(release):
    quality = json.loads((release / "stats" / "quality.json").read_text())
    assert quality["model_built"]["parts"] == {}
    assert quality["model_built"]["model"]["weights_sha256"] is None
    assert "No part of this release was written by a model" in (release / "README.md").read_text()


def test_a_model_written_timeline_is_counted_from_its_calls(release, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    path = copy / "timelines" / "timelines.parquet"
    table = pq.read_table(path)
    atoms = table.to_pylist()
    atoms = [{**a, "method": "llm", "prompt_version": "openforecast-v1"} for a in atoms]
    pq.write_table(pa.Table.from_pylist(atoms, table.schema), path)

    def result(key, status, reason="", attempts=1, cached=False, tokens=(100, 20)):
        return Result(f"h-{key}", key, "extract", "a-model", status, reason=reason,
                      attempts=attempts, cached=cached, prompt_tokens=tokens[0],
                      completion_tokens=tokens[1])  # fmt: skip

    write_calls(
        copy / "timelines" / "llm_calls.parquet",
        [
            result("a", "ok"),
            result("a", "ok", cached=True),  # the same request again: its tokens count once
            result("b", "ok", attempts=2, tokens=(300, 40)),
            result("c", "failed", "cut at max_tokens", tokens=(50, 512)),
        ],
    )
    meta = manifest(copy)
    meta["config"]["llm"] |= {"weights_sha256": "ab" * 32, "server": "vLLM 0.32.0 (CPU)"}
    meta["timelines"] |= {
        "atomic_events": 5 + 4,  # 4 from documents no model event cites: extractive ones
        "written_dropped": {"2-not-after-source": 1, "3-one-event-once": 1, "6-grounded": 2},
        "kept_extractive": {"documents": 2, "atomic_events": 4, "written_events_repeated": 0},
        "ungrounded": {"echoes-prompt": 2},
        "examples": {
            "6-grounded": [{"text": "The news release time: 2025-08-02", "reason": "echoes-prompt"}]
        },  # fmt: skip
    }
    section = model_built(copy, meta)
    assert section["model"] == {
        "model": meta["config"]["llm"]["model"],
        "weights_sha256": "ab" * 32,
        "server": "vLLM 0.32.0 (CPU)",
    }
    assert list(section["parts"]) == ["timelines"]  # the demo's tasks and reasoning: no calls
    part = section["parts"]["timelines"]
    assert part["models"] == ["a-model"] and part["prompt_versions"] == ["openforecast-v1"]
    assert part["calls"] == {
        "calls": 4, "distinct": 3, "ok": 3, "fallback": 0, "failed": 1, "retried": 1,
        "failed_by_reason": {"cut at max_tokens": 1},
        "prompt_tokens": 100 + 300 + 50, "completion_tokens": 20 + 40 + 512,
    }  # fmt: skip
    # 9 proposed: 5 kept, 4 dropped; rule 6 saw the 8 rule 2 left and dropped 2
    assert (part["proposed"], part["kept"], part["grounding_rate"]) == (9, 5, 0.75)
    assert part["filled_by_extractive"] == {"documents": 2, "atomic_events": 4}
    text = card._model_built(section)
    assert "weights sha256 `" + "ab" * 32 + "`, served by vLLM 0.32.0 (CPU)" in text
    assert "| 4 (3, 0, 1 (1 cut at max_tokens), 1) | 450 / 572 | 9 | 5 |" in text
    assert "grounding rate 75%; 2 documents no kept event cites gave 4 extractive events" in text
    assert "timelines, `6-grounded`: 'The news release time: 2025-08-02': echoes-prompt" in text
