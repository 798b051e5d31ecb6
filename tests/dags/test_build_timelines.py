"""The build_timelines DAG: validated params, its pool, and a run on the demo month."""

import pyarrow.parquet as pq

from tests.dags.conftest import python
from tests.release.conftest import REPO, demo_month


def run_dag(airflow_env, conf: dict):
    return python(
        f"""
        from datetime import datetime, UTC
        from airflow.dag_processing.dagbag import DagBag
        dag = DagBag().dags["build_timelines"]
        print("POOL", dag.get_task("build").pool)
        try:
            run = dag.test(logical_date=datetime(2025, 9, 1, 6, tzinfo=UTC), run_conf={conf!r})
            print("STATE", run.state)
        except Exception as exc:
            print("REFUSED", type(exc).__name__, exc)
        """,
        airflow_env,
    )


def test_previous_month_by_default_into_timelines(airflow_env, tmp_path):
    cfg = demo_month(tmp_path / "data", tmp_path / "mirror")
    conf = {"data_root": str(cfg.data_root), "config": str(REPO / "configs/demo.yaml")}
    result = run_dag(airflow_env, conf)
    assert "POOL llm_server" in result.stdout
    assert "STATE success" in result.stdout, (result.stdout + result.stderr)[-5000:]
    events = pq.read_table(cfg.data_root / "timelines/2025-08/complex_events.parquet")
    assert events.num_rows == 2
    bad = run_dag(airflow_env, {**conf, "method": "llm-that-does-not-exist"})
    assert "REFUSED ParamValidationError" in bad.stdout, bad.stdout[-2000:]
