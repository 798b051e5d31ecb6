"""evaluate-tasks: accuracy of the closed tasks on crafted predictions, counted by hand, and
LRAE on the open ones against a scripted judge on 127.0.0.1, with its token accounting."""

import json
import re
from datetime import date

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from gdelt_forecast.cli import main
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.ground.embeddings import embed
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.tasks.evaluate import TaskEvaluateError, evaluate_tasks, parse_choice, render
from gdelt_forecast.tasks.lrae import Evidence, _unit, atomic
from tests.llm.scripted import MODEL, ScriptedServer, answer
from tests.release.conftest import MONTH, REPO, demo_month


@pytest.fixture(scope="module")
def demo(tmp_path_factory, demo_built):
    base = tmp_path_factory.mktemp("evaluate")
    cfg = demo_month(demo_built, base / "data", base / "mirror")
    run("timelines", cfg, MONTH)
    run("tasks", cfg, MONTH)
    return cfg


def tasks_dir(cfg):
    return cfg.data_root / "tasks" / MONTH


def records(cfg, task):
    return pq.read_table(tasks_dir(cfg) / task).to_pylist()


def write(path, lines):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("task", "raw", "chosen"),
    [("MCNC", "Analysis... so the answer is (C).", "C"), ("MCNC", "(A) or (B)? I pick (B)", "B"),
     ("MCAC", "b", "B"), ("MCAC", "Answer: D.", "D"), ("MCAC", "Probably Paris", None),
     ("VQA", "Yes, it will; no doubt. Final answer: No", "no"), ("VQA", "YES", "yes"),
     ("VQA", "maybe", None), ("MCNC", None, None)],
)  # fmt: skip
def test_choices_are_parsed_leniently(task, raw, chosen):
    assert parse_choice(task, raw) == chosen


def test_accuracy_of_the_closed_tasks_equals_a_hand_count(demo, tmp_path):
    for task in ("MCNC", "MCAC", "VQA"):
        rows = records(demo, task)
        n = len(rows)
        assert n == 6
        gold, other = rows[:2]
        wrong = "no" if gold["answer"] == "yes" else "yes"
        if task != "VQA":
            wrong = next(letter for letter in "ABCD" if letter != gold["answer"])
            correct = f"I choose ({gold['answer']})"
        else:
            correct = f"Final answer: {gold['answer']}"
        preds = write(
            tmp_path / f"{task}.jsonl",
            [
                {"id": gold["id"], "prediction": f"({wrong})"},
                {"id": gold["id"], "prediction": correct},  # the last line of an id wins
                {"id": "nobody", "prediction": "(A)"},
                {"prediction": "(A)"},
            ],
        )
        result = evaluate_tasks(demo, task, tasks_dir(demo), preds)
        one = round(100 / n, 2)  # one record of n right
        assert (result["accuracy"], result["predicted"], result["missing"]) == (one, 1, n - 1)
        assert (result["unknown_ids"], result["bad_lines"], result["duplicate_ids"]) == (1, 1, 1)
        preds = write(
            tmp_path / f"{task}-2.jsonl",
            [
                {"id": gold["id"], "prediction": correct},
                {"id": other["id"], "prediction": "I cannot tell."},
            ],
        )
        result = evaluate_tasks(demo, task, tasks_dir(demo), preds)
        assert (result["accuracy"], result["unparseable"]) == (one, 1)
        # bytes, not trust: an undecodable line is a counted bad line, named by its number
        preds.write_bytes(preds.read_bytes() + b'{"id": "x", "prediction": "\xff"}\n')
        result = evaluate_tasks(demo, task, tasks_dir(demo), preds)
        assert (result["accuracy"], result["bad_lines"]) == (one, 1)
        assert result["bad_lines_first"] == ["line 3 is not UTF-8 (invalid start byte at byte 27)"]
        assert "bad lines: line 3 is not UTF-8" in render(result)
    only_test = tmp_path / "only-test"
    only_test.mkdir()
    table = pq.read_table(tasks_dir(demo) / "MCNC")
    pq.write_table(table.filter(pc.equal(table["split"], "test")), only_test / "MCNC.parquet")
    with pytest.raises(TaskEvaluateError, match="no MCNC \\(train\\) records"):
        evaluate_tasks(demo, "MCNC", only_test, preds, split="train")
    (tmp_path / "bad.jsonl").write_text("not json\n")
    with pytest.raises(TaskEvaluateError, match="no line is a JSON object with a id"):
        evaluate_tasks(demo, "MCNC", tasks_dir(demo), tmp_path / "bad.jsonl")


class Judge(ScriptedServer):
    """Stage 1: yes (with the first label's index) when the prediction says MATCH; stage 2:
    yes when it says SUPPORTED and some evidence was given."""

    def _next(self, body):
        with self.lock:
            self.requests.append(body)
        prompt = body["messages"][-1]["content"]
        prediction = re.search(r'The prediction is "(.*)"', prompt, re.S)
        prediction = prediction[1] if prediction else prompt.split("Prediction: ")[1]
        if "The label is:" in prompt:  # stage 2, evidence
            evidence = prompt.split("The label is:\n")[1].split("\nThe prediction")[0]
            yes = "SUPPORTED" in prediction and evidence != "(none)"
            return answer({"answer": "yes" if yes else "no"})
        schema = body["response_format"]["json_schema"]["schema"]
        verdict = {"answer": "yes" if "MATCH" in prediction else "no"}
        if "index" in schema["properties"]:
            verdict["index"] = 1 if verdict["answer"] == "yes" else None
        return answer(verdict)


@pytest.fixture
def judge():
    server = Judge()
    yield server
    server.stop()


def test_lrae_on_the_open_tasks_against_a_scripted_judge(demo, judge, tmp_path):
    overrides = [f"llm.base_url={judge.url}", f"llm.model={MODEL}"]
    cfg = load_config(REPO / "configs/demo.yaml", overrides, demo.data_root)
    ltf = records(cfg, "LTF")
    labels = [len(r["target"]) for r in ltf]
    # Record 1: two predictions, one matching label 1, one supported by the news; record 2:
    # one wrong prediction, nothing supports it; the other records: no prediction.
    preds = write(
        tmp_path / "ltf.jsonl",
        [
            {"id": ltf[0]["id"], "prediction": "1. MATCH talks\n2. SUPPORTED impeachment trade"},
            {"id": ltf[1]["id"], "prediction": "1. Aliens land."},
        ],
    )
    result = evaluate_tasks(cfg, "LTF", tasks_dir(cfg), preds)
    n = len(ltf)
    fn = labels[0] - 1 + sum(labels[1:])
    assert result["counts"] == {"tp": 1, "mtp": 1, "fp": 1, "fn": fn}
    p1, r1 = 2 / 2, 2 / (2 + labels[0] - 1)  # (TP + MTP) over its denominators
    f1 = 2 * p1 * r1 / (p1 + r1)
    assert result["precision"] == round(100 * p1 / n, 2)  # the other records score 0
    assert result["recall"] == round(100 * r1 / n, 2)
    assert result["f1"] == round(100 * f1 / n, 2)
    strict_r1 = 1 / labels[0]
    assert result["strict"]["recall"] == round(100 * strict_r1 / n, 2)
    assert result["judge_model"] == MODEL and "MiniLM" in result["evidence_model"]
    # 3 stage-1 calls, 2 stage-2 calls (the predictions stage 1 called wrong)
    assert result["llm"]["calls"] == 5 and len(judge.requests) == 5
    assert result["llm"]["prompt_tokens"] == 5 * 10  # the scripted server's usage per call
    again = evaluate_tasks(cfg, "LTF", tasks_dir(cfg), preds)  # cached: nothing sent
    assert len(judge.requests) == 5 and again["f1"] == result["f1"]
    assert again["llm"]["cache_hits"] == 5

    aqa = records(cfg, "AQA")
    preds = write(tmp_path / "aqa.jsonl", [{"id": aqa[0]["id"], "prediction": "MATCH"}])
    result = evaluate_tasks(cfg, "AQA", tasks_dir(cfg), preds)
    one = round(100 / len(aqa), 2)
    assert (result["accuracy"], result["strict"]["accuracy"], result["missing"]) == (
        one,
        one,
        len(aqa) - 1,
    )
    args = [
        "evaluate-tasks",
        "--task",
        "AQA",
        "--tasks",
        str(tasks_dir(cfg)),
        "--predictions",
        str(preds),
        "--data-root",
        str(cfg.data_root),
        "--config",
        "configs/demo.yaml",
        "--set",
        overrides[0],
        "--set",
        overrides[1],
        "--json",
    ]
    assert main(args) == 0


def test_atomic_predictions():
    assert atomic("LTF", "1. A met B.\n2. C left.") == ["A met B.", "C left."]
    assert atomic("STF", "A met B.\nC left.") == ["A met B.", "C left."]
    assert atomic("STF", ["A", " ", "B"]) == ["A", "B"]
    assert atomic("AQA", " China ") == ["China"] and atomic("LTF", None) == []


def test_evidence_is_only_news_dated_after_the_cut():
    """The judge's evidence for a prediction comes from after its record's cut, and nothing
    from on or before the earliest cut asked about is embedded at all."""
    cfg = load_config(REPO / "configs/demo.yaml", [], None)
    line = "China and the United States hold trade talks in Geneva this week, officials say."
    news = [
        {"date": date(2025, 8, d), "title": f"Day {d}: {line}", "text": f"{line} (day {d})"}
        for d in (1, 2, 5, 9)
    ]
    evidence = Evidence.of(cfg, news, after=date(2025, 8, 2))
    dated = dict(zip(evidence.paragraphs, evidence.dates, strict=True))
    assert sorted(set(dated.values())) == [date(2025, 8, 5), date(2025, 8, 9)]
    assert evidence.vectors.shape[0] == len(dated) == 4
    cuts = [date(2025, 8, 2), date(2025, 8, 5), date(2025, 8, 9)]
    query = _unit(embed(cfg, ["trade talks"])).repeat(len(cuts), 0)
    found = [sorted({dated[p].day for p in shown}) for shown in evidence.top(query, cuts)]
    assert found == [[5, 9], [9], []]
