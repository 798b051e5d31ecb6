"""The demo month's release carries EV2's reasoning records (I-CEC and I-CRR from the two
stories' dates), and `evaluate-reasoning` scores predictions as counted by hand."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta

import pyarrow as pa
import pyarrow.parquet as pq

from gdelt_forecast.cli import main
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.reasoning.evaluate import evaluate_reasoning
from gdelt_forecast.reasoning.records import SCHEMA
from gdelt_forecast.release import card
from gdelt_forecast.release.verify import verify
from tests.llm.scripted import ScriptedServer, llm_config
from tests.release.test_release import _rewrite


def test_the_release_carries_the_reasoning_records(release):
    manifest = json.loads((release / "manifest.json").read_text())
    made = manifest["reasoning"]["records"]
    assert made["I-CEC"] > 0 and made["I-CRR"] > 0
    for task, n in made.items():
        rows = pq.read_table(release / "reasoning" / task / "test.parquet").to_pylist()
        assert len(rows) == n and all(r["task"] == task for r in rows)
        assert all(r["prompt"].endswith("The answer is") and r["evidence"] for r in rows)
    header = card.parse_header((release / "README.md").read_text())
    configs = {c["config_name"]: c["data_files"] for c in header["configs"]}
    assert configs["I-CEC"] == [{"split": "test", "path": "reasoning/I-CEC/*.parquet"}]
    text = (release / "README.md").read_text()
    assert "causal and hierarchical relations need a model" in text
    # The card names what was left out, and only that: no reason counted zero times.
    left = manifest["reasoning"]["left_out"]
    said = text.split("Left out while building:")[1].split(". Every record")[0]
    assert [w for w, n in left.items() if n and f"{n:,} {w.replace('_', ' ')}" not in said] == []
    assert [w for w, n in left.items() if not n and w.replace("_", " ") in said] == []


def test_evaluate_reasoning_against_a_hand_count(release, tmp_path, capsys):
    rows = pq.read_table(release / "reasoning/I-CRR/test.parquet").to_pylist()
    assert len(rows) >= 5
    other = {r["id"]: "ABC"[("ABC".index(r["answer"]) + 1) % 3] for r in rows}
    lines = [
        {"id": rows[0]["id"], "prediction": f"({rows[0]['answer']})"},  # right, a letter
        {"id": rows[1]["id"], "prediction": rows[1]["answer_label"]},  # right, the label
        {"id": rows[2]["id"], "prediction": other[rows[2]["id"]]},  # wrong
        {"id": rows[3]["id"], "prediction": f"The answer is {rows[3]['answer']}."},  # right
        {"id": rows[4]["id"], "prediction": "I cannot tell."},  # names no option
        {"id": "no-such-record", "prediction": "A"},
    ]  # the rest: missing
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = evaluate_reasoning("I-CRR", release / "reasoning/I-CRR", path)
    assert result["accuracy"] == round(100 * 3 / len(rows), 2)
    assert (result["unparseable"], result["missing"], result["unknown_ids"]) == (
        1, len(rows) - 5, 1)  # fmt: skip
    assert result["relation_type"] == {"temporal": result["accuracy"]}
    args = ["evaluate-reasoning", "--task", "I-CRR", "--reasoning", str(release / "reasoning"),
            "--predictions", str(path)]  # fmt: skip
    assert main(args) == 0
    assert f"accuracy {result['accuracy']:.2f}%" in capsys.readouterr().out

    cec = pq.read_table(release / "reasoning/I-CEC/test.parquet").to_pylist()
    by_id = tmp_path / "cec.jsonl"
    by_id.write_text("".join(
        json.dumps({"id": r["id"], "prediction": f"It is {r['answer_label']}."}) + "\n"
        for r in cec))  # fmt: skip
    assert evaluate_reasoning("I-CEC", release / "reasoning", by_id)["accuracy"] == 100.0


def test_verify_catches_a_planted_reasoning_breach(release, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    path = "reasoning/I-CEC/test.parquet"
    rows = pq.read_table(copy / path).to_pylist()
    assert verify(copy) == []
    # The answer's document moved back to the cut: the answer would be in view.
    row = rows[0]
    moved = [{**e, "source_date": row["cut_date"]} if e["event_id"] == row["answer_label"] else e
             for e in row["events"]]  # fmt: skip
    _rewrite(copy, path, pa.Table.from_pylist([{**row, "events": moved}, *rows[1:]], SCHEMA))
    assert any(
        p.startswith(f"{path}: {row['id']}: ") and "first seen on" in p for p in verify(copy)
    )
    # An I-CRR answer that its dates do not give, consistent in itself.
    path = "reasoning/I-CRR/test.parquet"
    rows = pq.read_table(copy / path).to_pylist()
    row = rows[0]
    label = next(c for c in row["candidates"] if c != row["answer_label"])
    wrong = {**row, "answer_label": label, "answer": "ABC"[row["candidates"].index(label)]}
    _rewrite(copy, path, pa.Table.from_pylist([wrong, *rows[1:]], SCHEMA))
    assert f"{path}: {row['id']}: the dates say {row['answer_label']}, the record {label}" in (
        verify(copy)
    )


def test_verify_names_a_reasoning_event_that_is_no_atomic_event(release, tmp_path):
    """Every event a reasoning record shows must be one of the timelines', where rules 2 and
    6 are checked: a text of the record's own is named."""
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    path = "reasoning/I-CRR/test.parquet"
    rows = pq.read_table(copy / path).to_pylist()
    row = rows[0]
    queried = row["queried"][0]
    told = "Martians landed near a crater and met the Pope"
    events = [{**e, "text": told} if e["event_id"] == queried else e for e in row["events"]]
    _rewrite(copy, path, pa.Table.from_pylist([{**row, "events": events}, *rows[1:]], SCHEMA))
    assert verify(copy) == [
        f"{path}: {row['id']}: its event {told!r} is no atomic event of the timelines"
    ]


def test_the_llm_baseline_answers_and_joins_the_leaderboard(release, tmp_path, capsys):
    rows = pq.read_table(release / "reasoning/I-CRR/test.parquet").to_pylist()
    right = {r["prompt"]: r["answer"] for r in rows[:2]}  # the first two answered right
    wrong = {r["prompt"]: "ABC"[("ABC".index(r["answer"]) + 1) % 3] for r in rows[2:]}
    server = ScriptedServer()
    server.player = lambda body: {
        "content": f" {({**right, **wrong})[body['messages'][0]['content']]}. Because..."
    }
    try:
        cfg = llm_config(server, tmp_path)
        summary = run("reasoning_baseline", cfg, release, "I-CRR")
        again = run("reasoning_baseline", cfg, release, "I-CRR")  # from the cache
    finally:
        server.stop()
    assert summary.scores["accuracy"] == round(100 * 2 / len(rows), 2)
    same = [k for k in summary.scores if k != "seconds"]
    assert [again.scores[k] for k in same] == [summary.scores[k] for k in same]
    assert len(server.requests) == len(rows)  # the second run's answers came from the cache
    assert summary.llm["calls"] == len(rows)
    board = pq.read_table(tmp_path / "agents" / release.name / "leaderboard.parquet").to_pylist()
    assert [(r["task"], r["accuracy"]) for r in board] == [("I-CRR", summary.scores["accuracy"])]
    assert main(["leaderboard", "--release", str(release), "--data-root", str(tmp_path)]) == 0
    assert "EV2's reasoning tasks" in capsys.readouterr().out


def test_verify_catches_a_negative_from_after_the_cut(release, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    path = "reasoning/I-CEC/test.parquet"
    rows = pq.read_table(copy / path).to_pylist()
    row = rows[0]
    atoms = pq.read_table(copy / "timelines/timelines.parquet").to_pylist()
    later = next(a for a in atoms if a["source_date"] > row["cut_date"])  # as first seen
    negative = next(c for c in row["candidates"] if c != row["answer_label"])
    swapped = [
        {**e, "text": later["text"], "date": later["date"], "type": later["event_type"],
         "source_doc_id": later["source_doc_id"], "source_date": later["source_date"]}
        if e["event_id"] == negative else e
        for e in row["events"]
    ]  # fmt: skip
    _rewrite(copy, path, pa.Table.from_pylist([{**row, "events": swapped}, *rows[1:]], SCHEMA))
    assert f"{path}: {row['id']}: {negative} comes from a document first seen after the cut" in (
        verify(copy)
    )


def test_verify_holds_the_schema_level_to_its_cut_and_to_cameo_types(release, tmp_path):
    """S-CEC and S-CRR from the release alone: an event behind a shown type first seen
    after the cut, an answer type seen by the cut, and a type a model wrote are each named."""
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    assert verify(copy) == []
    path = "reasoning/S-CRR/test.parquet"
    rows = pq.read_table(copy / path).to_pylist()
    row = rows[0]
    first = min(e["source_date"] for e in row["events"])
    early = {**row, "cut_date": first - timedelta(days=1)}  # every event now after it
    _rewrite(copy, path, pa.Table.from_pylist([early, *rows[1:]], SCHEMA))
    late = row["events"][0]["event_id"]
    assert f"{path}: {row['id']}: {late} comes from a document first seen after the cut" in (
        verify(copy)
    )
    own = "Sign a treaty with Atlantis"
    named = {**row, "queried": [own, *row["queried"][1:]],
             "events": [{**e, "type": own} if e["type"] == row["queried"][0] else e
                        for e in row["events"]]}  # fmt: skip
    _rewrite(copy, path, pa.Table.from_pylist([named, *rows[1:]], SCHEMA))
    assert f"{path}: {row['id']}: type {own!r} is no CAMEO relation" in verify(copy)
    _rewrite(copy, path, pa.Table.from_pylist(rows, SCHEMA))
    path = "reasoning/S-CEC/test.parquet"
    rows = pq.read_table(copy / path).to_pylist()
    row = rows[0]
    answers = [e for e in row["events"] if e["type"] == row["answer_label"]]
    seen = {**row, "cut_date": max(e["source_date"] for e in answers)}
    _rewrite(copy, path, pa.Table.from_pylist([seen, *rows[1:]], SCHEMA))
    assert f"{path}: {row['id']}: the answer comes from a document seen by the cut" in (
        verify(copy)
    )
