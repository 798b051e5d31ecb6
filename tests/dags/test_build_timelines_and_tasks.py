"""The build_timelines_and_tasks DAG: validated params, its pool, and a run on the demo month
that writes the timelines and then the tasks."""

import pyarrow.parquet as pq

from tests.dags.conftest import run_monthly_dag
from tests.release.conftest import REPO, demo_month


def run_dag(airflow_env, conf: dict):
    return run_monthly_dag("build_timelines_and_tasks", conf, airflow_env)


def test_previous_month_by_default_into_timelines(airflow_env, tmp_path):
    cfg = demo_month(tmp_path / "data", tmp_path / "mirror")
    conf = {"data_root": str(cfg.data_root), "config": str(REPO / "configs/demo.yaml")}
    result = run_dag(airflow_env, conf)
    assert "POOLS ['default_pool', 'llm_server']" in result.stdout  # the check, the work
    assert "STATE success" in result.stdout, (result.stdout + result.stderr)[-5000:]
    events = pq.read_table(cfg.data_root / "timelines/2025-08/complex_events.parquet")
    assert events.num_rows == 2
    # then the tasks from them: the demo's tasks.cuts_per_timeline (3) cuts of each story
    for task in ("STF", "LTF", "AQA", "MCNC", "MCAC", "VQA"):
        assert pq.read_table(cfg.data_root / f"tasks/2025-08/{task}").num_rows == 6
    bad = run_dag(airflow_env, {**conf, "method": "llm-that-does-not-exist"})
    assert "REFUSED ParamValidationError" in bad.stdout, bad.stdout[-2000:]
