"""The pools come from the project's command (`gdelt-forecast airflow init`, which the
shared Airflow home of these tests was made with), and every pool a DAG names is one of
them."""

import json
import subprocess

from gdelt_forecast.airflow_pools import POOLS
from tests.dags.conftest import AIRFLOW, python


def test_airflow_init_made_every_pool(airflow_env):
    listed = subprocess.run(
        [AIRFLOW, "pools", "list", "-o", "json"],
        env=airflow_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr[-3000:]
    made = {p["pool"]: (int(p["slots"]), p["description"]) for p in json.loads(listed.stdout)}
    assert {name: made.get(name) for name in POOLS} == POOLS


def test_every_pool_a_dag_names_is_the_projects(airflow_env):
    result = python(
        """
        import json
        from airflow.dag_processing.dagbag import DagBag
        bag = DagBag()
        print(json.dumps(sorted({t.pool for d in bag.dags.values() for t in d.tasks})))
        """,
        airflow_env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    used = set(json.loads(result.stdout.strip().splitlines()[-1])) - {"default_pool"}
    assert used == set(POOLS)
