"""openforecast/<split>.json: OpenForecast's own layout of the demo release's tasks, read as
its evaluation scripts read it (tests/release/openforecast_eval.py), giving the same accuracy
as `gdelt-forecast evaluate-tasks` on the same answers, and re-checked by `release verify`."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gdelt_forecast.cli import main
from gdelt_forecast.contract.names import MANIFEST
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.release import openforecast
from gdelt_forecast.release.verify import verify
from gdelt_forecast.tasks import baseline as task_baseline
from gdelt_forecast.tasks.evaluate import evaluate_tasks
from tests.llm.scripted import ScriptedServer, llm_config
from tests.release import openforecast_eval
from tests.release.test_release import manifest

CLOSED = ("MCNC", "MCAC", "VQA")


def splits(release: Path) -> dict[str, Path]:
    return {p.stem: p for p in sorted((release / "openforecast").glob("*.json"))}


def records(release: Path, task: str, split: str) -> list[dict]:
    return pq.read_table(release / "tasks" / task / f"{split}.parquet").to_pylist()


def stand_in(prompt: str) -> str:
    """A model that answers by the prompt's hash, in the paper's answer forms."""
    n = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
    if "Event option: \n" in prompt:
        return "Yes" if n % 2 else "No"
    return f"Considering the background, the answer is ({'ABCD'[n % 4]})"


def test_every_record_of_every_split_is_in_openforecasts_shape(release):
    files = splits(release)
    summary = manifest(release)["openforecast"]
    assert set(files) == set(summary["splits"]) and files
    # every filter counted: here none, as every MCNC of the demo has its VQA
    assert summary["left_out"] == {openforecast.NO_VQA: 0, openforecast.NO_MCNC: 0}
    for split, path in files.items():
        raw = path.read_bytes()
        assert raw.isascii() and b"\n\n" not in raw and raw.endswith(b"\n")
        lines = [json.loads(line) for line in raw.decode().splitlines()]
        counts = summary["splits"][split]
        assert counts["complex_events"] == len(lines)
        for task in ("MCNC", "MCAC", "STF", "LTF", "AQA", "VQA"):
            want = {r["id"]: r for r in records(release, task, split)}
            if task == "VQA":
                items = [i["VQA"] | {"known_timeline": i["known_timeline"]}
                         for line in lines for i in line["MCNC"]]  # fmt: skip
            else:
                items = [i for line in lines for i in line[task]]
            assert sorted(i["id"] for i in items) == sorted(want) and counts[task] == len(want)
            for item in items:
                record = want[item["id"]]
                assert item["known_timeline"] == [a["text"] for a in record["background"]]
                if task in ("MCNC", "MCAC"):
                    assert item["choices"] == record["candidates"] and len(item["choices"]) == 4
                    assert "ABCD"[item["label"]] == record["answer"]
                    assert item["true_event"] == record["candidates"][item["label"]]
                elif task == "VQA":
                    assert item["label"] is (record["answer"] == "yes")
                    assert item["event"] == record["candidates"][0]
                elif task in ("STF", "LTF"):
                    assert item["label"] == [a["text"] for a in record["target"]]
                    assert item["time"]
        timelines = pq.read_table(release / "timelines/timelines.parquet").to_pylist()
        for line in lines:
            ce = line["complex_event_id"]
            story = sorted((a for a in timelines if a["complex_event_id"] == ce),
                           key=lambda a: a["seq"])  # fmt: skip
            assert line["event_list"] == [a["text"] for a in story]
            assert line["time"] == [a["date"] for a in story]
            assert isinstance(line["title"], str) and "type" in line


@pytest.mark.parametrize("task", CLOSED)
def test_openforecasts_evaluation_gives_evaluate_tasks_accuracy(demo_cfg, release, tmp_path, task):
    for split, path in splits(release).items():
        metric, outputs = openforecast_eval.evaluate(path, task, stand_in)
        predictions = tmp_path / f"{task}-{split}.jsonl"
        predictions.write_text(
            "".join(json.dumps({"id": i, "prediction": t}) + "\n" for i, t in outputs.items())
        )
        ours = evaluate_tasks(demo_cfg, task, release / "tasks" / task, predictions, split=split)
        assert metric["all_num"] == ours["records"] == ours["predicted"] > 0
        assert round(100 * metric["acc"], 2) == ours["accuracy"]
        # and a model that is always right, by the gold answers of the Parquet records
        gold = {r["id"]: r["answer"] for r in records(release, task, split)}
        right = {i: (gold[i].capitalize() if task == "VQA" else f"({gold[i]})") for i in gold}
        predictions.write_text(
            "".join(json.dumps({"id": i, "prediction": t}) + "\n" for i, t in right.items())
        )
        assert evaluate_tasks(demo_cfg, task, release / "tasks" / task, predictions,
                              split=split)["accuracy"] == 100.0  # fmt: skip


def test_verify_names_a_known_timeline_that_shows_more_than_its_record(release, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    path = next(iter(splits(copy).values()))
    lines = path.read_text().splitlines()
    line = json.loads(lines[0])
    item = line["MCNC"][0] if line["MCNC"] else line["STF"][0]
    # a breach: the answer's own event shown as known
    item["known_timeline"].append(line["event_list"][-1])
    lines[0] = json.dumps(line)
    path.write_text("\n".join(lines) + "\n")
    listing = manifest(copy)
    rel = path.relative_to(copy).as_posix()
    data = path.read_bytes()
    for entry in listing["files"]:
        if entry["path"] == rel:
            entry.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    (copy / MANIFEST).write_text(json.dumps(listing))
    problems = verify(copy)
    assert problems == [
        f"{rel}: line 1 ({line['complex_event_id']}) is not what the task files give"
    ]


def test_an_mcnc_without_its_vqa_is_left_out_and_counted(release, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    split = next(iter(splits(copy)))
    path = copy / "tasks" / "VQA" / f"{split}.parquet"
    table = pq.read_table(path)
    dropped = table.slice(0, 1).to_pylist()[0]
    pq.write_table(table.slice(1), path)
    rows, summary = openforecast.lines(copy)
    assert summary["left_out"] == {openforecast.NO_VQA: 1, openforecast.NO_MCNC: 0}
    lines = [json.loads(line) for line in rows.get(split, [])]
    items = [(line["complex_event_id"], i["cut_date"]) for line in lines for i in line["MCNC"]]
    assert (dropped["complex_event_id"], dropped["cut_date"].isoformat()) not in items
    assert summary["splits"][split]["MCNC"] == len(records(copy, "MCNC", split)) - 1


def test_the_llm_baseline_answers_the_tasks_with_the_papers_prompts(release, tmp_path, capsys):
    """MCNC answered by a scripted model from Table 10's prompt: right on the first
    record, in the paper's answer form; AQA's answers judged by LRAE (the same server)."""
    mcnc = records(release, "MCNC", "test")
    by_prompt = {task_baseline.prompt(r): r for r in mcnc}
    assert len(by_prompt) == len(mcnc) >= 2
    first = mcnc[0]
    shown = next(iter(by_prompt))
    assert shown.startswith("Based on the given event background, please select one option")
    assert f"1. {first['background'][0]['date']}: {first['background'][0]['text']}" in shown
    assert f"(A) {first['candidates'][0]}\n(B) " in shown and "{" not in shown
    right = {mcnc[0]["id"]}
    aqa = records(release, "AQA", "test")
    aqa_prompts = {task_baseline.prompt(r): r for r in aqa}
    assert all(r["target"][0]["text"] not in p for p, r in aqa_prompts.items())  # after the cut

    def player(body):
        prompt = body["messages"][-1]["content"]
        if body.get("response_format"):  # LRAE's judge: yes when the label is in the answer
            label = re.search(r"Label: (.*)\n", prompt)
            yes = label is not None and label[1] in prompt.split("Prediction: ")[1]
            return {"content": json.dumps({"answer": "yes" if yes else "no"})}
        if prompt in aqa_prompts:
            return {"content": f"Brief Analysis: ...\nAnswer: {aqa_prompts[prompt]['answer']}"}
        record = by_prompt[prompt]
        letter = record["answer"] if record["id"] in right else "ABCD"[
            ("ABCD".index(record["answer"]) + 1) % 4]  # fmt: skip
        return {"content": f"The background suggests it. ({letter})"}

    server = ScriptedServer()
    server.player = player
    try:
        cfg = llm_config(server, tmp_path)
        summary = run("tasks_baseline", cfg, release, "MCNC")
        assert summary.scores["accuracy"] == round(100 / len(mcnc), 2)
        assert summary.llm["calls"] == len(mcnc) and summary.scores["unparseable"] == 0
        out = tmp_path / "baselines" / release.name / "tasks" / "MCNC"
        assert len(pq.read_table(out / "llm_calls.parquet")) == len(mcnc)
        assert len((out / "predictions.jsonl").read_text().splitlines()) == len(mcnc)
        opened = run("tasks_baseline", cfg, release, "AQA")
    finally:
        server.stop()
    assert opened.scores["accuracy"] == 100.0 and opened.scores["f1"] > 0
    board = pq.read_table(tmp_path / "agents" / release.name / "leaderboard.parquet").to_pylist()
    assert {r["task"]: (r["accuracy"], r["f1"], r["prompt_version"]) for r in board} == {
        "MCNC": (summary.scores["accuracy"], None, task_baseline.PROMPT_VERSION),
        "AQA": (100.0, opened.scores["f1"], task_baseline.PROMPT_VERSION),
    }
    assert main(["leaderboard", "--release", str(release), "--data-root", str(tmp_path)]) == 0
    assert "OpenForecast's tasks" in capsys.readouterr().out
