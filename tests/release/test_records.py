"""The release packages what the month's stages built, from their records, and refuses a
stage that is missing or stale with one line naming the stage to run again."""

from __future__ import annotations

import json
import shutil
import threading
from datetime import date

import pyarrow.parquet as pq
import pytest

from gdelt_forecast.cli import main
from gdelt_forecast.ground import files
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.ground.data_root import RECORD
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.release.build import PLACES, ReleaseError
from gdelt_forecast.storage.locks import month_lock
from tests.conftest import EXPORT_CSV, SLOT, write_bronze
from tests.release.conftest import DAY, DAYS, MONTH, REPO


def records(root) -> dict[str, dict]:
    return {s: json.loads((root / s / MONTH / RECORD).read_text()) for s in PLACES}


def test_the_release_holds_the_stages_files_byte_for_byte(demo_cfg, release):
    manifest = json.loads((release / "manifest.json").read_text())
    for stage, record in records(demo_cfg.data_root).items():
        assert record["files"] and record["run"]["runs"] >= 1
        assert manifest["stages"][stage] == {
            k: record[k] for k in ("params", "config_sha256", "inputs", "code_version")
        }
        for item in record["files"]:
            prefix, place = next((p, to) for p, to in PLACES[stage] if item["path"].startswith(p))
            released = release / (place + item["path"].removeprefix(prefix))
            source = demo_cfg.data_root / stage / MONTH / item["path"]
            assert released.read_bytes() == source.read_bytes(), item["path"]
    assert manifest["stages"]["timelines"]["params"] == {
        "month": MONTH,
        "history_start": manifest["history"]["start"],
    }


@pytest.fixture
def copy(demo_cfg, tmp_path):
    """A copy of the demo month's data root (its releases left out), to change."""
    shutil.copytree(
        demo_cfg.data_root, tmp_path / "data", ignore=shutil.ignore_patterns("releases")
    )
    return load_config(REPO / "configs/demo.yaml", [], tmp_path / "data")


def refused(cfg, *args, **kwargs) -> str:
    with pytest.raises(ReleaseError) as caught:
        run("release", cfg, MONTH, *args, **kwargs)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_warehouse_changed_after_the_test_set_is_refused(copy, capsys):
    # One kept document fewer (of a story: the timelines change, and so the tasks' input).
    docs = copy.data_root / "articles/docs/date=2025-08-12/part-0.parquet"
    table = pq.read_table(docs)
    pq.write_table(table.slice(1), docs)
    assert "run `gdelt-forecast database`" in refused(copy)  # the warehouse predates it
    run("database", copy)
    message = refused(copy)
    assert message.startswith(f"testset {MONTH} at {copy.data_root / 'testset' / MONTH} is not")
    assert "its input changed since it ran (warehouse)" in message
    assert message.endswith(f"run `gdelt-forecast testset --month {MONTH}` again")
    args = ["--month", MONTH, "--config", "configs/demo.yaml", "--data-root", str(copy.data_root)]
    code = main(["release", *args])
    assert code == 1 and "testset 2025-08" in capsys.readouterr().err
    run("testset", copy, MONTH)
    assert refused(copy).startswith(f"timelines {MONTH}")
    before = records(copy.data_root)["timelines"]["files"]
    run("timelines", copy, MONTH)
    assert records(copy.data_root)["timelines"]["files"] != before
    message = refused(copy)
    assert message.startswith(f"tasks {MONTH}") and "(timelines)" in message
    run("tasks", copy, MONTH)
    message = refused(copy)  # the reasoning tasks read the timelines too
    assert message.startswith(f"reasoning {MONTH}") and "(timelines)" in message
    run("reasoning", copy, MONTH)
    summary = run("release", copy, MONTH)
    assert summary.rows["news"] == 12  # the demo's 13 documents, one fewer
    assert not list((copy.data_root / "releases").glob(".*.tmp"))  # no half release left


def test_the_tasks_input_is_the_timelines_content(copy):
    """Timelines built again to the same bytes leave the tasks current."""
    run("timelines", copy, MONTH)
    assert run("release", copy, MONTH).version == "2025.08.0"


def test_another_config_history_or_a_changed_file_is_refused(copy):
    subset = load_config(REPO / "configs/demo.yaml", ["testset.subset_size=1"], copy.data_root)
    assert "testset 2025-08" in refused(subset) and "another config" in refused(subset)
    method = load_config(REPO / "configs/demo.yaml", ["tasks.seed=7"], copy.data_root)
    assert refused(method).startswith(f"tasks {MONTH}")
    message = refused(copy, history_start=date(2025, 7, 1))
    assert message.startswith(f"timelines {MONTH}")
    assert "'history_start': '2025-01-01'" in message and "'2025-07-01'" in message
    mcnc = copy.data_root / "tasks" / MONTH / "MCNC" / "test.parquet"
    mcnc.write_bytes(mcnc.read_bytes() + b"\0")
    assert "MCNC/test.parquet changed since its stage ran" in refused(copy)
    (copy.data_root / "tasks" / MONTH / RECORD).unlink()
    assert "it has no record" in refused(copy)
    assert not (copy.data_root / "releases" / "LATEST").exists()


def test_the_runner_replaces_a_month_whole(copy):
    folder = copy.data_root / "tasks" / MONTH
    (folder / "STF.parquet").write_bytes(b"left by an older layout")
    before = records(copy.data_root)["tasks"]
    run("tasks", copy, MONTH)
    after = records(copy.data_root)["tasks"]
    assert not (folder / "STF.parquet").exists()
    assert after["files"] == before["files"]  # the same build gives the same bytes
    assert after["run"]["runs"] == before["run"]["runs"] + 1
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]


def test_the_command_line_takes_the_months_lock_as_airflow_does(copy):
    """A second run of one month waits for the first wherever it was started."""
    held = month_lock(copy, "testset", MONTH)
    held.acquire()
    done = threading.Event()
    worker = threading.Thread(target=lambda: (main_testset(copy), done.set()))
    worker.start()
    try:
        assert not done.wait(3)  # waiting for the lock, nothing written
        assert records(copy.data_root)["testset"]["run"]["runs"] == 1
    finally:
        held.release()
    worker.join(60)
    assert done.is_set() and records(copy.data_root)["testset"]["run"]["runs"] == 2


def main_testset(cfg) -> None:
    args = ["testset", "--month", MONTH, "--config", "configs/demo.yaml"]
    assert main([*args, "--data-root", str(cfg.data_root)]) == 0


def test_the_day_stages_record_each_day_they_wrote(demo_cfg):
    root = demo_cfg.data_root
    for stage, tables in (
        ("normalize", ("silver/events", "silver/funnel")),
        ("process", ("articles/docs", "articles/exclusions")),
    ):
        for day in DAYS:
            record = json.loads((root / "records" / stage / f"date={day}.json").read_text())
            assert record["stage"] == stage and record["partition"] == day.isoformat()
            want = [f"{t}/date={day}/part-0.parquet" for t in tables]
            assert [f["path"] for f in record["files"]] == want
            for item in record["files"]:
                path = root / item["path"]
                assert item["sha256"] == files.sha256(path)
                assert item["rows"] == pq.read_metadata(path).num_rows
            assert record["inputs"]["files"] and record["config_sha256"]
    process = json.loads((root / "records/process" / f"date={DAY}.json").read_text())
    assert process["params"] == {"first": str(DAYS[0]), "last": str(DAYS[-1])}
    assert process["summary"]["kept"] > 0


def test_a_day_record_tells_a_rerun_on_other_bronze(real_day):
    cfg = load_config(None, ["events.min_daily_mentions=0"], real_day)
    path = real_day / "records/normalize" / f"date={DAY}.json"
    run("normalize", cfg, DAY, DAY)
    first = json.loads(path.read_text())
    run("normalize", cfg, DAY, DAY)
    again = json.loads(path.read_text())
    assert again["run"]["runs"] == 2 and again["inputs"] == first["inputs"]
    assert again["files"] == first["files"]  # the same bronze makes the same silver

    lines = EXPORT_CSV.read_bytes().split(b"\n")[:-1]
    write_bronze(real_day, SLOT, "export", b"\n".join(lines[:-100]) + b"\n")
    run("normalize", cfg, DAY, DAY)
    changed = json.loads(path.read_text())
    assert changed["inputs"] != first["inputs"]
    kept = {f["path"]: f["rows"] for f in changed["files"]}
    assert kept["silver/events/date=2025-08-07/part-0.parquet"] < first["files"][0]["rows"]
