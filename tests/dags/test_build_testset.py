"""The build_testset DAG: validated params, and a run that writes the month's test set."""

import json

import pyarrow.parquet as pq

from tests.dags.conftest import run_monthly_dag
from tests.testset.test_build import QUADS, warehouse


def run_dag(airflow_env, conf: dict):
    return run_monthly_dag("build_testset", conf, airflow_env)


def test_previous_month_by_default_with_param_overrides(airflow_env, tmp_path):
    root = warehouse(tmp_path / "data", QUADS)
    result = run_dag(airflow_env, {"data_root": str(root), "horizons": [1, 2], "seed": 3})
    assert "STATE success" in result.stdout, (result.stdout + result.stderr)[-5000:]
    rows = pq.read_table(root / "testset/2025-08/queries.parquet").to_pylist()
    assert sorted({r["horizon"] for r in rows}) == [1, 2] and len(rows) == 4
    assert json.loads((root / "testset/2025-08/balance.json").read_text())["seed"] == 3


def test_bad_params_are_refused(airflow_env, tmp_path):
    for conf in ({"month": "2023-13"}, {"horizons": [0]}, {"subset_size": "many"}):
        result = run_dag(airflow_env, {"data_root": str(tmp_path), **conf})
        assert "REFUSED ParamValidationError" in result.stdout, (conf, result.stdout[-2000:])
