"""Causal and hierarchical relations from a scripted judge: only pairs labelled
consistently both ways become questions; a pair labelled wrongly one way makes none."""

from __future__ import annotations

import re

import pyarrow.parquet as pq
import pytest

from gdelt_forecast.contract.reasoning import cameo_types, unsound
from gdelt_forecast.reference import tables
from tests.llm.scripted import MODEL, ScriptedServer, llm_config
from tests.reasoning.test_build import MONTH, story, write

TYPES = cameo_types(tables.relations())

EVENT = re.compile(r"^event([01]) \([^)]*\): (\S+) event (\d+)", re.MULTILINE)
# What the judge says of (story, seq of event0, seq of event1); None both ways otherwise.
PLAN = {
    ("ce1", 3, 4): "Causes", ("ce1", 4, 3): "IsResult",  # consistent
    ("ce1", 1, 2): "IsSubevent", ("ce1", 2, 1): "IsSubevent",  # one way wrong
    ("ce1", 2, 4): "HasSubevent", ("ce1", 4, 2): "IsSubevent",  # consistent
}  # fmt: skip


def judge(body: dict) -> dict:
    found = {int(n): (ce, int(seq)) for n, ce, seq in EVENT.findall(body["messages"][0]["content"])}
    (ce, a), (_, b) = found[0], found[1]
    relation = PLAN.get((ce, a, b), "None")
    return {
        "content": f'{{"relation": "{relation}"}}',
        "usage": {"prompt_tokens": 50, "completion_tokens": 5},
    }


@pytest.fixture
def server():
    scripted = ScriptedServer()
    scripted.player = judge
    yield scripted
    scripted.stop()


def test_only_consistent_pairs_become_questions(server, tmp_path):
    kinds = [
        "Make statement, not specified",
        "Consult, not specified",
        "Demonstrate or rally",
        "Impose embargo or boycott or sanctions",
    ]  # CAMEO names
    write(tmp_path, story("ce1", ["2025-07-01", "2025-07-03", "2025-07-10", "2025-07-12"], kinds)
          + story("ce2", ["2025-06-01", "2025-06-02", "2025-06-03", "2025-06-04"]),
          {"ce1": ["USA", "CHN"], "ce2": ["USA", "RUS"]})  # fmt: skip
    from gdelt_forecast.reasoning.build import build_reasoning

    cfg = llm_config(server, tmp_path, "reasoning.method=llm", "reasoning.min_context=1",
                     "reasoning.crr_per_story=20", "reasoning.cec_per_story=20")  # fmt: skip
    out = tmp_path / "reasoning" / MONTH
    out.mkdir(parents=True)
    summary = build_reasoning(cfg, MONTH, out)
    # 6 pairs a story, each asked both ways; ce1's (1, 2) is the one inconsistent pair.
    assert summary.judged == {"pairs": 12, "consistent": 11, "inconsistent": 1}
    assert len(server.requests) == 24
    assert pq.read_table(out / "llm_calls.parquet").num_rows == 24
    crr = pq.read_table(out / "I-CRR.parquet").to_pylist()
    judged = [r for r in crr if r["relation_type"] != "temporal"]
    assert judged and all(r["method"] == "llm" and r["model"] == MODEL for r in judged)
    pairs = {}
    for r in judged:
        events = {e["event_id"]: e for e in r["events"]}
        seqs = tuple(int(events[i]["source_doc_id"].split("doc")[1]) for i in r["queried"])
        pairs[r["complex_event_id"], seqs, r["relation_type"]] = r["answer_label"]
        assert unsound(r, TYPES) is None
    causal = {k[1]: v for k, v in pairs.items() if k[0] == "ce1" and k[2] == "causal"}
    assert causal.get((3, 4), causal.get((4, 3))) in ("Causes", "IsResult")
    assert causal.get((3, 4), "Causes") == "Causes" and causal.get((4, 3), "IsResult") == "IsResult"
    assert not any(k[0] == "ce1" and set(k[1]) == {1, 2} for k in pairs)  # inconsistent
    hierarchical = {k: v for k, v in pairs.items() if k[2] == "hierarchical" and v != "None"}
    assert set(hierarchical.values()) <= {"IsSubevent", "HasSubevent"} and hierarchical
    cec = pq.read_table(out / "I-CEC.parquet").to_pylist()
    caused = [r for r in cec if r["relation_type"] == "causal"]
    assert caused
    for r in caused:  # ce1's event 4 is the result of event 3, from a later document
        events = {e["event_id"]: e for e in r["events"]}
        assert events[r["answer_label"]]["source_doc_id"] == "ce1-doc4"
        assert r["relation"] == "IsResult" and "is the result of" in r["prompt"]
        assert unsound(r, TYPES) is None
    assert summary.relation_types["I-CRR"].keys() >= {"temporal", "causal", "hierarchical"}
    # The schema level: rallies (ce1's event 3) cause embargoes (event 4), the only judged
    # pair of those types in the month.
    crr = pq.read_table(out / "S-CRR.parquet").to_pylist()
    schema = [
        r for r in crr if r["relation_type"] == "causal" and set(r["queried"]) == set(kinds[2:])
    ]
    assert schema
    for r in schema:
        want = "Causes" if r["queried"] == kinds[2:] else "IsResult"
        assert r["answer_label"] == want and "consistent labels" in r["evidence"]
    assert "judged by scripted-model" in summary.note
