"""Errors no retry can mend fail a DAG's task on its first try, in seconds, naming the data
root: what a new user meets when the data root is relative or holds nothing yet."""

import json

import pytest

from gdelt_forecast.ground.config import CONFIG_ENV, DATA_ROOT_ENV
from tests.dags.conftest import python


@pytest.mark.long(seconds=20)
def test_unmendable_errors_fail_at_once_without_retry(airflow_env, tmp_path):
    # Without $GDELT_FORECAST_CONFIG and $GDELT_FORECAST_DATA_ROOT, the relative "data" of
    # configs/default.yaml applies, as under a fresh `airflow standalone`.
    env = {k: v for k, v in airflow_env.items() if k not in (CONFIG_ENV, DATA_ROOT_ENV)}
    empty = tmp_path / "empty"
    cases = [  # dag, logical date, run conf, task that fails, message it must print
        (
            "gdelt_ingest",
            "2025-08-07T22:15",
            {},
            "download",
            "config: data_root 'data' is relative",
        ),
        (
            "build_testset",
            "2025-09-01T06:00",
            {},
            "testset",
            "config: data_root 'data' is relative",
        ),
        (
            "build_testset",
            "2025-09-01T06:00",
            {"data_root": str(empty)},
            "testset",
            f"no warehouse at {empty / 'warehouse.duckdb'}",
        ),
        (
            "build_days",
            "2025-08-08T00:00",
            {"data_root": str(empty), "start_date": "2025-08-07"},
            "normalize_day",
            f"no bronze events for 2025-08-07: ingest them first (data root {empty})",
        ),
        (
            "build_days",
            "2025-08-08T00:00",
            {"data_root": str(empty), "start_date": "2025-08-08", "end_date": "2025-08-07"},
            "days",
            "end_date 2025-08-07 is before start_date 2025-08-08",
        ),
        (
            "monthly_refresh",
            "2025-09-02T06:00",
            {"data_root": str(empty)},
            "days",
            f"no bronze events for any day of 2025-08 under {empty / 'bronze/events'}",
        ),
    ]
    # One interpreter runs every case: Airflow's start-up is the slow part.
    result = python(
        f"""
        import json, time
        from datetime import datetime, UTC
        from airflow.dag_processing.dagbag import DagBag
        bag = DagBag()
        for dag_id, when, conf, _, _ in {cases!r}:
            start = time.monotonic()
            run = bag.dags[dag_id].test(
                logical_date=datetime.fromisoformat(when).replace(tzinfo=UTC), run_conf=conf
            )
            tis = [[ti.task_id, str(ti.state), ti.try_number] for ti in run.get_task_instances()]
            print("RESULT", json.dumps({{"dag": dag_id, "state": str(run.state), "tis": tis,
                                         "seconds": time.monotonic() - start}}), flush=True)
        """,
        env,
        timeout=400,
    )
    output = result.stdout + result.stderr
    results = [json.loads(line[7:]) for line in result.stdout.splitlines() if line[:7] == "RESULT "]
    assert len(results) == len(cases), output[-5000:]
    # A retry would show as up_for_retry in the log and take minutes (retry_delay).
    assert "up_for_retry" not in output
    for (dag_id, _, _, task_id, message), run in zip(cases, results, strict=True):
        failed = [(task, tries) for task, state, tries in run["tis"] if state == "failed"]
        assert run["state"] == "failed", run
        assert failed and {task for task, _ in failed} == {task_id}, run
        assert all(tries == 1 for _, tries in failed), run  # first try, and no second
        assert run["seconds"] < 60, run
        assert f"AirflowFailException: {message}" in output, (dag_id, message)
