"""The tasks stage on the demo month's extractive timelines (two stories of real pages, first
seen on five days)."""

from datetime import date

import pyarrow.parquet as pq
import pytest

from gdelt_forecast.cli import main
from gdelt_forecast.contract import leakage
from gdelt_forecast.contract.names import SPLITS, TASKS
from gdelt_forecast.contract.text import text_key as key
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.tasks.cut import split_of
from gdelt_forecast.tasks.extractive import value
from gdelt_forecast.tasks.records import SCHEMA
from tests.release.conftest import MONTH, REPO, demo_month


@pytest.fixture(scope="module")
def demo(tmp_path_factory, demo_built):
    base = tmp_path_factory.mktemp("tasks")
    cfg = demo_month(demo_built, base / "data", base / "mirror")
    run("timelines", cfg, MONTH)
    return cfg


def read(cfg, task):
    """A task's records, all splits (``tasks/<month>/<TASK>/<split>.parquet``)."""
    return pq.read_table(cfg.data_root / "tasks" / MONTH / task)


def test_every_task_of_the_demo_month(demo):
    summary = run("tasks", demo, MONTH)
    assert summary.timelines == 2 and summary.cuts == 6
    assert summary.records == dict.fromkeys(TASKS, 6)
    assert summary.soundness == {
        "1-provenance": {"background_events": 3, "cut_days": 0},
        "4-no-answer-in-context": {"negatives": 0, "records": 0},
        "5-across-splits": {"records": 0},
        "7-generated-grounded": {"records": 0},
    }
    assert "removed by rule: 1-provenance 3 background events" in summary.line()
    atoms = pq.read_table(demo.data_root / "timelines" / MONTH / "timelines.parquet").to_pylist()
    for task in TASKS:
        table = read(demo, task)
        assert table.schema == SCHEMA
        for row in table.to_pylist():
            assert row["task"] == task and row["id"].startswith(f"{task}-")
            assert row["background"] and row["target"] and row["question"] and row["answer"]
            assert (row["method"], row["prompt_version"], row["model"]) == (
                "extractive",
                "tasks-extractive-v2",
                None,
            )
            assert leakage.dated_wrong(row) is None and leakage.unsourced(row) is None
            mine = [a for a in atoms if a["complex_event_id"] == row["complex_event_id"]]
            assert {key(e["text"]) for e in row["target"]} <= {key(a["text"]) for a in mine}
            if task in ("MCNC", "MCAC"):
                assert len(row["candidates"]) == len({key(c) for c in row["candidates"]}) == 4
                assert row["answer"] in "ABCD"
            elif task == "VQA":
                assert len(row["candidates"]) == 1 and row["answer"] in ("yes", "no")
            else:
                assert row["candidates"] == []
    for row in read(demo, "MCNC").to_pylist():  # no negative is an event of the story
        story = {key(a["text"]) for a in atoms if a["complex_event_id"] == row["complex_event_id"]}
        gold = row["candidates"]["ABCD".index(row["answer"])]
        assert gold == row["target"][0]["text"]
        assert [c for c in row["candidates"] if key(c) in story] == [gold]
    for row in read(demo, "MCAC").to_pylist():  # the gold value, and three the story lacks
        story = [a for a in atoms if a["complex_event_id"] == row["complex_event_id"]]
        [target] = [a for a in story if a["text"] == row["target"][0]["text"]]
        gold = value(target, row["argument"])
        assert row["candidates"]["ABCD".index(row["answer"])] == gold
        [aqa] = [
            r
            for r in read(demo, "AQA").to_pylist()
            if (r["complex_event_id"], r["cut_date"]) == (row["complex_event_id"], row["cut_date"])
        ]
        assert (aqa["question"], aqa["answer"]) == (row["question"], gold)
        wrong = [c for c in row["candidates"] if c != gold]
        assert not {key(c) for c in wrong} & {key(value(a, row["argument"])) for a in story}
    for row in read(demo, "LTF").to_pylist():
        assert row["answer"].splitlines() == [
            f"{i}. {e['text']}" for i, e in enumerate(row["target"], 1)
        ]


def test_a_rerun_writes_the_same_files(demo):
    run("tasks", demo, MONTH)
    out = demo.data_root / "tasks" / MONTH

    def files():
        return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*.parquet")}

    before = files()
    run("tasks", demo, MONTH)
    assert files() == before
    assert sorted(before) == sorted(f"{t}/{s}.parquet" for t in TASKS for s in SPLITS)


def test_splits_follow_the_cut_offs(demo):
    # The demo's cuts run from 2025-07-22 to 2025-08-07: by default test from the month's
    # first day, dev in the 7 days before it, train before that.
    for overrides, expected in (
        ([], {"train", "dev", "test"}),
        (["tasks.test_from=2025-07-01"], {"test"}),
        (["tasks.test_from=2025-08-20", "tasks.dev_days=60"], {"dev"}),
    ):
        cfg = load_config(REPO / "configs/demo.yaml", overrides, demo.data_root)
        summary = run("tasks", cfg, MONTH)
        rows = read(cfg, "STF").to_pylist()
        assert {r["split"] for r in rows} == set(summary.splits) == expected
        first = date(2025, 8, 1)
        assert all(r["split"] == split_of(r["cut_date"], first, cfg.tasks) for r in rows)
        assert sum(summary.splits.values()) == 6 * len(TASKS)


def test_the_leakage_rule_catches_a_planted_leak(demo):
    run("tasks", demo, MONTH)
    rows = [r for task in TASKS for r in read(demo, task).to_pylist()]
    assert leakage.leaked(rows) == {}
    train = next(r for r in rows if r["split"] == "train")
    test = next(
        r
        for r in rows
        if r["split"] == "test" and r["complex_event_id"] != train["complex_event_id"]
    )
    train = {**train, "background": train["background"] + test["target"][:1]}
    assert set(leakage.leaked([train, test])) == {test["id"]}
    late = {**test, "background": test["background"] + test["target"][:1]}
    assert "is not before the cut" in leakage.dated_wrong(late)


def test_without_timelines_it_is_an_error(demo, capsys):
    with pytest.raises(StageError, match="no timelines of 2025-07"):
        run("tasks", demo, "2025-07")
    assert main(["tasks", "--month", "2025-07", "--data-root", str(demo.data_root)]) == 1
    assert "run `timelines` first" in capsys.readouterr().err
