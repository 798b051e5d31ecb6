"""The gdelt_ingest DAG: it parses cleanly and light, and a dag.test() run fills bronze."""

import os

import pyarrow.parquet as pq

from tests.conftest import SLOT
from tests.dags.conftest import parsed, python


def test_dagbag_imports_without_errors_or_heavy_imports(airflow_env):
    info = parsed(
        "gdelt_ingest",
        """
        "tasks": sorted(dag.task_dict),
        "doc": dag.doc_md.strip().splitlines()[0],
        "retries": dag.task_dict["download"].retries,
        "backoff": bool(dag.task_dict["download"].retry_exponential_backoff),
        """,
        airflow_env,
    )
    assert info["tasks"] == ["download", "mark_day", "to_bronze"]
    assert info["doc"] == "### GDELT ingest"
    assert info["retries"] >= 3 and info["backoff"]


def test_dag_test_run_ingests_its_interval_from_a_local_mirror(airflow_env, file_mirror, tmp_path):
    file_mirror.add_real_slot()
    data_root = tmp_path / "data"
    result = python(
        f"""
        from datetime import datetime, UTC
        from airflow.dag_processing.dagbag import DagBag
        dag = DagBag().dags["gdelt_ingest"]
        run = dag.test(
            # The run after 22:15 covers the interval [22:00, 22:15): slot {SLOT}.
            logical_date=datetime(2025, 8, 7, 22, 15, tzinfo=UTC),
            run_conf={{"data_root": {str(data_root)!r},
                       "set": ["gdelt.base_url={file_mirror.url}", "download.backoff_s=0"]}},
        )
        print("STATE", run.state)
        """,
        airflow_env,
    )
    assert "STATE success" in result.stdout, (result.stdout + result.stderr)[-5000:]
    events = pq.read_table(data_root / "bronze/events/date=2025-08-07" / f"{SLOT}.parquet")
    assert events.num_rows == 909
    ledger = pq.read_table(data_root / "bronze/slots.parquet").to_pylist()
    assert sorted((r["table"], r["status"], r["rows"]) for r in ledger) == [
        ("export", "downloaded", 909),
        ("mentions", "downloaded", 3366),
    ]


def test_mark_day_waits_for_the_days_last_interval(airflow_env, file_mirror, tmp_path):
    file_mirror.add_real_slot()
    result = python(
        f"""
        from datetime import datetime, UTC
        from airflow.dag_processing.dagbag import DagBag
        dag = DagBag().dags["gdelt_ingest"]
        run = dag.test(
            logical_date=datetime(2025, 8, 7, 22, 15, tzinfo=UTC),
            run_conf={{"data_root": {str(tmp_path / "data")!r},
                       "set": ["gdelt.base_url={file_mirror.url}"]}},
        )
        states = {{ti.task_id: str(ti.state) for ti in run.get_task_instances()}}
        print("STATES", states)
        """,
        airflow_env,
    )
    assert "'mark_day': 'skipped'" in result.stdout, (result.stdout + result.stderr)[-5000:]
    assert "'to_bronze': 'success'" in result.stdout


def test_a_run_on_a_bucket_data_root_ingests_into_the_bucket(
    airflow_env, file_mirror, s3fs_client, tmp_path
):
    """download puts the verified zips in the bucket's raw/, to_bronze pulls them from
    there into its working copy, and bronze and the ledger land in the bucket."""
    from tests.conftest import new_bucket

    file_mirror.add_real_slot()
    root = f"{new_bucket()}/data"
    aws = {k: v for k, v in os.environ.items() if k.startswith("AWS_")}
    result = python(
        f"""
        from datetime import datetime, UTC
        from airflow.dag_processing.dagbag import DagBag
        run = DagBag().dags["gdelt_ingest"].test(
            logical_date=datetime(2025, 8, 7, 22, 15, tzinfo=UTC),
            run_conf={{"data_root": {root!r},
                       "set": ["gdelt.base_url={file_mirror.url}", "download.backoff_s=0",
                               "storage.local_dir={tmp_path / "worker"}"]}},
        )
        print("STATE", run.state)
        """,
        {**airflow_env, **aws},
    )
    assert "STATE success" in result.stdout, (result.stdout + result.stderr)[-5000:]
    bucket_root = root.removeprefix("s3://")
    with s3fs_client.open(f"{bucket_root}/bronze/events/date=2025-08-07/{SLOT}.parquet") as f:
        assert pq.read_table(f).num_rows == 909
    with s3fs_client.open(f"{bucket_root}/bronze/slots.parquet") as f:
        statuses = {(r["table"], r["status"]) for r in pq.read_table(f).to_pylist()}
    assert statuses == {("export", "downloaded"), ("mentions", "downloaded")}
    assert len(s3fs_client.find(f"{bucket_root}/raw/gdelt")) == 2
