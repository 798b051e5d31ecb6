"""The llm timelines: the merge rules on their own, then the stage on the demo month against
a scripted OpenAI-compatible server on 127.0.0.1 (the client itself is tested in tests/llm)."""

import json
import re
from datetime import date, timedelta

import pyarrow.parquet as pq
import pytest

from gdelt_forecast.ground.config import load_config
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.timelines.written import adjust, complement
from tests.llm.scripted import MODEL, ScriptedServer, answer, error
from tests.release.conftest import MONTH, demo_month


def atom(text, date=None, doc="d1"):
    return {
        "date": date,
        "text": text,
        "subject": None,
        "event_type": None,
        "object": None,
        "location": None,
        "source_doc_id": doc,
    }


def answered(*texts, date=None):
    return {
        "events": [{k: v for k, v in atom(t, date).items() if k != "source_doc_id"} for t in texts]
    }


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
    """Answers by the step the response_format names. An extraction: the document's title,
    dated on its release day with a subject the document never names (rule 6 nulls it),
    and a plan dated 30 days later (rule 2 must drop it). A
    complement: the title again reworded ("Once more: ..."), which rule 3 must merge into the
    title, and three events rule 6 must drop: the prompt's header read back, an invented
    event, and the title dated on a day the document never states. An adjustment: the
    reversed order."""

    def _next(self, body):
        with self.lock:
            self.requests.append(body)
        step = body["response_format"]["json_schema"]["name"]
        prompt = body["messages"][-1]["content"]
        if step == "adjust":
            size = len(re.findall(r"^\d+\. ", prompt, re.M))
            return answer({"order": list(range(size, 0, -1))})
        title = prompt.split("title: ", 1)[1].split("\n", 1)[0]
        day = date.fromisoformat(re.findall(r"^The \w+ release time: (\S+)", prompt, re.M)[0])
        if step == "extract":
            plan = (day + timedelta(days=30)).isoformat()
            [event] = answered(title, date=day.isoformat())["events"]
            invented = {**event, "subject": "The Martian Empire"}  # rule 6 nulls it
            return answer(
                {
                    "events": [
                        invented,
                        *answered(f"A summit on {title} is planned", date=plan)["events"],
                    ]
                }
            )
        n = len(self.requests)
        return answer(
            {
                "events": answered(f"Once more: {title}", title, date=day.isoformat())["events"]
                + answered(f"The News release time: {day}", date=day.isoformat())["events"]
                + answered(f"Martians landed near crater {n}", date=day.isoformat())["events"]
                + answered(f"Earlier: {title}", date="1999-01-02")["events"]
            }
        )


@pytest.fixture
def steps():
    server = StepServer()
    yield server
    server.stop()


def test_llm_timelines_on_the_demo_month(steps, demo_built, tmp_path):
    cfg = demo_month(demo_built, tmp_path / "data", tmp_path / "mirror")
    cfg = load_config(
        None,
        [
            f"llm.base_url={steps.url}",
            f"llm.model={MODEL}",
            "timelines.method=llm",
            "timelines.min_similarity=0",
            "llm.max_retries=0",
        ],
        cfg.data_root,
    )
    summary = run("timelines", cfg, MONTH)
    out = cfg.data_root / "timelines" / MONTH
    events = pq.read_table(out / "complex_events.parquet").to_pylist()
    atoms = pq.read_table(out / "timelines.parquet").to_pylist()
    calls = pq.read_table(out / "llm_calls.parquet").to_pylist()
    assert len(events) == 2 and summary.complex_events == 2
    steps_per_event = ["adjust", *(f"complement:{n}" for n in range(1, 5)), "extract"]
    assert sorted(c["step"] for c in calls) == sorted(steps_per_event * 2)
    assert {c["status"] for c in calls} == {"ok"} and len(steps.requests) == 12
    # Per story: the plan (rule 2), the four reworded titles (rule 3) and the four
    # complements' echo, invention and wrong date (rule 6) are dropped.
    assert summary.dropped == {"2-not-after-source": 2, "3-one-event-once": 8, "6-grounded": 24}
    assert summary.arguments_nulled == 2  # each story's invented subject
    assert not any(a["subject"] for a in atoms)
    assert summary.ungrounded == {
        "echoes-prompt": 8,
        "text-not-in-document": 8,
        "date-not-in-document": 8,
    }
    shown = summary.examples["6-grounded"]
    assert len(shown) == 3 and {e["reason"] for e in shown} <= set(summary.ungrounded)
    assert summary.examples["2-not-after-source"][0]["text"].startswith("A summit")
    for event in events:
        mine = [a for a in atoms if a["complex_event_id"] == event["complex_event_id"]]
        assert [a["seq"] for a in mine] == list(range(1, 6))
        # One event per document, dated and sourced by it, in the adjusted (reversed) order.
        assert [(a["source_doc_id"], a["date"], a["source_date"]) for a in mine] == [
            (doc, day.isoformat(), day)
            for doc, day in reversed(list(zip(event["doc_ids"], event["doc_dates"], strict=True)))
        ]
        assert not any(
            a["text"].startswith(("Once more", "A summit", "The News", "Martians", "Earlier"))
            for a in mine
        )
    assert {(a["method"], a["model"], a["prompt_version"]) for a in atoms} == {
        ("llm", MODEL, "openforecast-v1")
    }
    assert summary.llm["calls"] == 12 and "tokens" in summary.line()
    before = json.dumps(atoms, default=str)
    run("timelines", cfg, MONTH)  # a re-run is answered from the cache
    assert len(steps.requests) == 12
    again = pq.read_table(out / "timelines.parquet").to_pylist()
    assert json.dumps(again, default=str) == before


class FailingComplements(StepServer):
    """StepServer whose complements fail: only the first document's events are the model's."""

    def _next(self, body):
        if body["response_format"]["json_schema"]["name"] == "complement":
            with self.lock:
                self.requests.append(body)
            return error(500)
        return super()._next(body)


def test_documents_no_model_event_cites_give_their_extractive_events(demo_built, tmp_path):
    server = FailingComplements()
    cfg = demo_month(demo_built, tmp_path / "data", tmp_path / "mirror")
    settings = [f"llm.base_url={server.url}", f"llm.model={MODEL}", "timelines.method=llm",
                "timelines.min_similarity=0", "llm.max_retries=0"]  # fmt: skip
    try:
        summary = run("timelines", load_config(None, settings, cfg.data_root), MONTH)
    finally:
        server.stop()
    out = cfg.data_root / "timelines" / MONTH
    atoms = pq.read_table(out / "timelines.parquet").to_pylist()
    events = pq.read_table(out / "complex_events.parquet").to_pylist()
    extractive = run("timelines", cfg, MONTH)
    for event in events:
        mine = [a for a in atoms if a["complex_event_id"] == event["complex_event_id"]]
        first, later = event["doc_ids"][0], set(event["doc_ids"][1:])
        assert [a["method"] for a in mine if a["source_doc_id"] == first] == ["llm"]
        assert {a["source_doc_id"] for a in mine if a["method"] == "extractive"} == later
        assert [a["seq"] for a in mine] == list(range(1, len(mine) + 1))
        starts = [a["date"] or a["source_date"].isoformat() for a in mine]
        assert starts == sorted(starts)  # in date order (every date here is day-precise)
    filled = [a for a in atoms if a["method"] == "extractive"]
    assert summary.kept_extractive == {
        "documents": 8, "atomic_events": len(filled), "written_events_repeated": 0}  # fmt: skip
    assert 0 < len(filled) < extractive.atomic_events  # the first documents' are the model's
    assert "8 documents gave their extractive events" in summary.line()
