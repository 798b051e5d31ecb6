"""An Airflow home with a migrated SQLite database, shared by the DAG tests."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
AIRFLOW = str(Path(sys.executable).with_name("airflow"))
# All that a DAG file loads of the package while Airflow parses it: the shared params and
# tasks, and the stages' declarations they are made from (the standard library's only).
LIGHT = [
    "gdelt_forecast",
    "gdelt_forecast.contract",
    "gdelt_forecast.contract.names",
    "gdelt_forecast.ground",
    "gdelt_forecast.ground.data_root",
    "gdelt_forecast.ground.dates",
    "gdelt_forecast.ground.errors",
    "gdelt_forecast.orchestration",
    "gdelt_forecast.orchestration.dags",
    "gdelt_forecast.pipeline",
    "gdelt_forecast.pipeline.parameters",
    "gdelt_forecast.pipeline.stages",
]


@pytest.fixture(scope="session")
def airflow_env(tmp_path_factory):
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(tmp_path_factory.mktemp("airflow")),
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "PYTHONPATH": str(REPO),
    }
    airflow_init(env)
    return env


def airflow_init(env: dict) -> None:
    """Airflow's database and the pools, as a user sets them up: the project's command."""
    done = subprocess.run(
        [sys.executable, "-m", "gdelt_forecast.cli", "airflow", "init"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def python(code: str, env: dict, timeout: int = 240) -> subprocess.CompletedProcess:
    """Run code in a fresh interpreter, as Airflow's DAG processor and dag.test() would."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def parsed(dag_id: str, fields: str, env: dict) -> dict:
    """``fields`` (a dict display's items, over ``dag``, the DAG ``dag_id``, and ``dags``, every
    DAG by id) as Airflow's DAG processor parses ``dags/``, once the parse is checked: no
    import errors, and nothing of the package loaded but :data:`LIGHT`."""
    result = python(
        f"""
        import json, sys
        from airflow.dag_processing.dagbag import DagBag
        bag = DagBag()
        dags = bag.dags
        dag = dags[{dag_id!r}]
        print(json.dumps({{
            "errors": {{k: str(v) for k, v in bag.import_errors.items()}},
            "loaded": sorted(m for m in sys.modules if m.startswith("gdelt_forecast")),
            {fields}
        }}))
        """,
        env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    info = json.loads(result.stdout.strip().splitlines()[-1])
    assert info.pop("errors") == {}
    assert info.pop("loaded") == LIGHT
    return info


def run_monthly_dag(dag_id: str, conf: dict, env: dict) -> subprocess.CompletedProcess:
    """``dag.test()`` of a monthly DAG for the run of 2025-09-01 (the month 2025-08): prints
    ``POOLS`` (its tasks' pools), then ``STATE <state>`` or ``REFUSED <error>``."""
    return python(
        f"""
        from datetime import datetime, UTC
        from airflow.dag_processing.dagbag import DagBag
        dag = DagBag().dags[{dag_id!r}]
        print("POOLS", sorted({{t.pool for t in dag.tasks}}))
        try:
            run = dag.test(logical_date=datetime(2025, 9, 1, 6, tzinfo=UTC), run_conf={conf!r})
            print("STATE", run.state)
        except Exception as exc:
            print("REFUSED", type(exc).__name__, exc)
        """,
        env,
    )
