"""The llm timelines: the merge rules on their own, then the stage on the demo month against
a scripted OpenAI-compatible server on 127.0.0.1 (the client itself is tested in tests/llm)."""

import json
import re

import pyarrow.parquet as pq
import pytest

from pipeline.config import load_config
from pipeline.timelines.build import build_timelines
from pipeline.timelines.written import adjust, complement
from tests.llm.scripted import MODEL, ScriptedServer, answer
from tests.release.conftest import MONTH, demo_month


def atom(text, date=None, doc="d1"):
    return {"date": date, "text": text, "subject": None, "event_type": None, "object": None,
            "location": None, "source_doc_id": doc}  # fmt: skip


def answered(*texts, date=None):
    return {"events": [{k: v for k, v in atom(t, date).items() if k != "source_doc_id"}
                       for t in texts]}  # fmt: skip


def test_complement_never_rewrites_and_puts_back_what_was_left_out():
    before = [atom("A met B.", "2025-08-01"), atom("B signed.", "2025-08-03")]
    after = complement(before, answered("Talks began.", "a met b", "C protested."), "d2")
    assert [(a["text"], a["source_doc_id"]) for a in after] == [
        ("Talks began.", "d2"),
        ("A met B.", "d1"),  # the answer's "a met b" is the event already there, unchanged
        ("B signed.", "d1"),  # left out by the answer: put back after what it followed
        ("C protested.", "d2"),
    ]
    dated = complement(before, answered("X", date="August 2025"), "d2")
    assert [(a["text"], a["date"]) for a in dated][-1] == ("X", None)  # not yyyy-MM: null


def test_adjust_takes_a_permutation_only():
    atoms = [atom("one"), atom("two"), atom("three")]
    assert [a["text"] for a in adjust(atoms, {"order": [3, 1, 2]})] == ["three", "one", "two"]
    assert adjust(atoms, {"order": [1, 1, 2]}) == atoms
    assert adjust(atoms, {"order": [1, 2]}) == atoms


class StepServer(ScriptedServer):
    """Answers by the step the response_format names: two events for an extraction, one new
    event for a complement, the reversed order for an adjustment."""

    def _next(self, body):
        with self.lock:
            self.requests.append(body)
        step = body["response_format"]["json_schema"]["name"]
        title = body["messages"][-1]["content"].split("title: ", 1)[1].split("\n", 1)[0]
        if step == "adjust":
            size = len(re.findall(r"^\d+\. ", body["messages"][-1]["content"], re.M))
            return answer({"order": list(range(size, 0, -1))})
        if step == "extract":
            return answer(answered(f"{title} began.", f"{title} went on.", date="2025-08-05"))
        return answer(answered(f"{title} ended.", date="2025-08-07"))


@pytest.fixture
def steps():
    server = StepServer()
    yield server
    server.stop()


def test_llm_timelines_on_the_demo_month(steps, tmp_path):
    cfg = demo_month(tmp_path / "data", tmp_path / "mirror")
    cfg = load_config(None, [f"llm.base_url={steps.url}", f"llm.model={MODEL}",
                             "timelines.method=llm", "timelines.min_similarity=0",
                             "llm.max_retries=0"], cfg.data_root)  # fmt: skip
    summary = build_timelines(cfg, MONTH)
    out = cfg.data_root / "timelines" / MONTH
    events = pq.read_table(out / "complex_events.parquet").to_pylist()
    atoms = pq.read_table(out / "timelines.parquet").to_pylist()
    calls = pq.read_table(out / "llm_calls.parquet").to_pylist()
    assert len(events) == 2 and summary.complex_events == 2
    assert sorted(c["step"] for c in calls) == ["adjust", "adjust", "complement:1",
                                                "complement:1", "extract", "extract"]  # fmt: skip
    assert {c["status"] for c in calls} == {"ok"} and len(steps.requests) == 6
    for event in events:
        mine = [a for a in atoms if a["complex_event_id"] == event["complex_event_id"]]
        # extract (2) + complement (1), then reversed by the adjustment
        assert [a["date"] for a in mine] == ["2025-08-07", "2025-08-05", "2025-08-05"]
        assert mine[0]["source_doc_id"] == event["doc_ids"][1]
        assert {a["source_doc_id"] for a in mine[1:]} == {event["doc_ids"][0]}
    assert {(a["method"], a["model"], a["prompt_version"]) for a in atoms} == {
        ("llm", MODEL, "openforecast-v1")
    }
    assert summary.llm["calls"] == 6 and "tokens" in summary.line()
    before = json.dumps(atoms, default=str)
    build_timelines(cfg, MONTH)  # a re-run is answered from the cache
    assert len(steps.requests) == 6
    again = pq.read_table(out / "timelines.parquet").to_pylist()
    assert json.dumps(again, default=str) == before
