"""The monthly_refresh DAG: its tasks, pools and validated params, and a run from bronze to a
release of the demo month."""

import json
import os
import shutil

import pytest

from gdelt_forecast.release.build import PLACES as RELEASED
from tests.dags.conftest import REPO, parsed, python


def test_dag_parses_with_its_tasks_pools_and_params(airflow_env):
    info = parsed(
        "monthly_refresh",
        """
        "tasks": {t.task_id: t.pool for t in dag.tasks},
        "per_day": {t.task_id: t.get_closest_mapped_task_group().group_id
                    for t in dag.tasks if t.get_closest_mapped_task_group()},
        "params": sorted(dag.params),
        "schedule": dag.timetable.expression,
        "doc": dag.doc_md.strip().splitlines()[0],
        """,
        airflow_env,
    )
    assert info["tasks"] == {
        "pools": "default_pool",
        "days": "default_pool",
        "normalize_day": "default_pool",
        "fetch_day": "article_fetch",
        "process_day": "default_pool",
        "database": "warehouse_writer",
        "testset": "default_pool",
        "timelines": "llm_server",
        "tasks": "llm_server",
        "reasoning": "llm_server",  # a model-server stage, as the stages declare it
        "release": "default_pool",
        "rounds": "default_pool",
    }
    # A day's three tasks are one mapped group: its process_day waits for its own fetch_day,
    # not for every day's.
    assert info["per_day"] == dict.fromkeys(("normalize_day", "fetch_day", "process_day"),
                                            "one_day")  # fmt: skip
    assert info["params"] == [
        "config",
        "data_root",
        "history_start",
        "month",
        "partial",
        "set",
        "version",
    ]
    assert info["schedule"] == "0 6 2 * *"
    assert info["doc"] == "### Monthly refresh: from bronze to a release"


def test_bad_params_are_refused(airflow_env, tmp_path):
    confs = [
        {"month": "2023-13"},
        {"month": "2023-1"},
        {"version": "../x"},
        {"history_start": "2025-02-30"},
        {"partial": "yes"},
    ]
    result = python(
        f"""
        from datetime import datetime, UTC
        from airflow.dag_processing.dagbag import DagBag
        dag = DagBag().dags["monthly_refresh"]
        for conf in {confs!r}:
            try:
                run = dag.test(logical_date=datetime(2025, 9, 2, 6, tzinfo=UTC),
                               run_conf={{"data_root": {str(tmp_path)!r}, **conf}})
                print("RAN", conf, run.state)
            except Exception as exc:
                print("REFUSED", type(exc).__name__, conf)
        """,
        airflow_env,
    )
    for conf in confs:
        assert f"REFUSED ParamValidationError {conf!r}" in result.stdout, (conf, result.stdout)


def _refresh(conf: dict, airflow_env: dict, tmp_path) -> str:
    """A monthly_refresh run of 2025-09-02 with ``conf``, offline, which must succeed; the
    AWS variables as they are now (the S3 server's, once its fixture is up). Returns the
    run's id."""
    aws = {k: v for k, v in os.environ.items() if k.startswith("AWS_")}
    env = {
        **airflow_env,
        **aws,
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    result = python(
        f"""
        from datetime import datetime, UTC
        from airflow.dag_processing.dagbag import DagBag
        run = DagBag().dags["monthly_refresh"].test(
            logical_date=datetime(2025, 9, 2, 6, tzinfo=UTC), run_conf={conf!r}
        )
        print("STATE", run.state, run.run_id)
        """,
        env,
        timeout=600,
    )
    assert "STATE success" in result.stdout, (result.stdout + result.stderr)[-5000:]
    return result.stdout.split("STATE success ")[1].split()[0]


@pytest.mark.long(seconds=25)
def test_a_run_takes_the_demo_month_from_bronze_to_a_release(airflow_env, demo_built, tmp_path):
    from tests.release.conftest import demo_month

    # The demo's days, with their pages in a web archive: every stage has work to redo (the
    # run redoes the August days; July's, normalized and processed, stay in the data root).
    cfg = demo_month(demo_built, tmp_path / "data", tmp_path / "mirror")
    root = cfg.data_root
    (root / "warehouse.duckdb").unlink()
    for stage in RELEASED:
        shutil.rmtree(root / stage)
    conf = {
        "config": str(REPO / "configs/demo.yaml"),
        "data_root": str(root),
        "set": [f"articles.archives=[{cfg.articles.archives[0]}]"],
        "month": "2025-08",
        "partial": True,  # the demo holds three days of August
        "version": "demo",
    }
    run_id = _refresh(conf, airflow_env, tmp_path)
    assert (root / "releases/LATEST").read_text().strip() == "demo"
    release = root / "releases/demo"
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["month"] == "2025-08"
    # As `make demo`: 3 cuts (tasks.cuts_per_timeline) of each of the two stories.
    assert manifest["tasks"]["records"] == dict.fromkeys(
        ("STF", "LTF", "AQA", "MCNC", "MCAC", "VQA"), 6
    )
    # Each month stage ran once, in this run, and the release holds its files byte for byte.
    for stage, places in RELEASED.items():
        folder = root / stage / "2025-08"
        record = json.loads((folder / "_record.json").read_text())
        assert (record["run"]["id"], record["run"]["runs"]) == (run_id, 1), stage
        assert manifest["stages"][stage]["inputs"] == record["inputs"]
        assert record["files"], stage
        for item in record["files"]:
            prefix, place = next((p, to) for p, to in places if item["path"].startswith(p))
            released = release / (place + item["path"].removeprefix(prefix))
            assert released.read_bytes() == (folder / item["path"]).read_bytes(), item["path"]
    assert (root / "tasks/2025-08/MCNC/test.parquet").exists()


@pytest.mark.long(seconds=35)
def test_a_run_on_a_bucket_data_root_publishes_the_release_there(
    airflow_env, demo_built, s3_endpoint, s3fs_client, tmp_path
):
    """The same month with the data root in a bucket: the workers see only the bucket (the
    bronze is put there, nothing else), each task works in its own working copy, and the
    release lands in the bucket with LATEST naming it."""
    from tests.conftest import new_bucket
    from tests.release.conftest import demo_month

    cfg = demo_month(demo_built, tmp_path / "data", tmp_path / "mirror")
    root = f"{new_bucket()}/demo"
    bronze = [p.relative_to(cfg.data_root) for p in (cfg.data_root / "bronze").rglob("*.parquet")]
    s3fs_client.put([str(cfg.data_root / p) for p in bronze], [f"{root}/{p}" for p in bronze])
    conf = {
        "config": str(REPO / "configs/demo.yaml"),
        "data_root": root,
        "set": [
            f"articles.archives=[{cfg.articles.archives[0]}]",
            f"storage.local_dir={tmp_path / 'worker'}",
        ],
        "month": "2025-08",
        "partial": True,
        "version": "demo",
    }
    _refresh(conf, airflow_env, tmp_path)
    bucket_root = root.removeprefix("s3://")
    assert s3fs_client.cat_file(f"{bucket_root}/releases/LATEST") == b"demo\n"
    manifest = json.loads(s3fs_client.cat_file(f"{bucket_root}/releases/demo/manifest.json"))
    assert manifest["config"]["data_root"] == root
    # Only bronze is in the bucket, and the run normalizes the days of its month: the stories
    # have their August documents (2025-08-02, 08-07, 08-12) only, and each is cut twice
    # (CHN-USA on 08-02 and 08-06, RUS-USA on 08-02 and 08-07): no later day leaves a target,
    # and CHN-USA's 07-29 event comes from a page first seen on 08-02.
    assert manifest["tasks"]["records"] == dict.fromkeys(
        ("STF", "LTF", "AQA", "MCNC", "MCAC", "VQA"), 4
    )
    for key in (
        "silver/events/date=2025-08-07/part-0.parquet",
        "articles/docs",
        "testset/2025-08/queries.parquet",
        "tasks/2025-08/MCNC/test.parquet",
        "tasks/2025-08/_record.json",
    ):
        assert s3fs_client.exists(f"{bucket_root}/{key}"), key
    assert not s3fs_client.exists(f"{bucket_root}/warehouse.duckdb")
    assert not s3fs_client.find(f"{bucket_root}/locks")
