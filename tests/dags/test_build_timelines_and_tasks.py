"""The build_timelines_and_tasks DAG: validated params, its pool, and a run on the demo month
that writes the timelines and then what reads them: the tasks and the reasoning tasks."""

import pyarrow.parquet as pq

from gdelt_forecast.ground.config import load_config
from gdelt_forecast.release.build import current_records
from tests.dags.conftest import run_monthly_dag
from tests.release.conftest import REPO, demo_month


def run_dag(airflow_env, conf: dict):
    return run_monthly_dag("build_timelines_and_tasks", conf, airflow_env)


def test_previous_month_by_default_into_timelines(airflow_env, demo_built, tmp_path):
    cfg = demo_month(demo_built, tmp_path / "data", tmp_path / "mirror")
    # A timelines setting the demo's extractive timelines do not read: their config changes,
    # and so does the config of every stage built from them.
    changed = ["timelines.article_chars=5000"]
    conf = {"data_root": str(cfg.data_root), "config": str(REPO / "configs/demo.yaml")}
    result = run_dag(airflow_env, {**conf, "set": changed})
    assert "POOLS ['default_pool', 'llm_server']" in result.stdout  # the check, the work
    assert "STATE success" in result.stdout, (result.stdout + result.stderr)[-5000:]
    events = pq.read_table(cfg.data_root / "timelines/2025-08/complex_events.parquet")
    assert events.num_rows == 2
    # then the tasks from them: the demo's tasks.cuts_per_timeline (3) cuts of each story
    for task in ("STF", "LTF", "AQA", "MCNC", "MCAC", "VQA"):
        assert pq.read_table(cfg.data_root / f"tasks/2025-08/{task}").num_rows == 6
    # and the reasoning tasks, which read them too: a release of the month with the same
    # setting finds none of its stages stale
    records = current_records(load_config(REPO / "configs/demo.yaml", changed, cfg.data_root),
                              "2025-08")  # fmt: skip
    assert records["reasoning"]["run"]["id"] == records["timelines"]["run"]["id"]  # this run
    bad = run_dag(airflow_env, {**conf, "method": "llm-that-does-not-exist"})
    assert "REFUSED ParamValidationError" in bad.stdout, bad.stdout[-2000:]
