"""Airflow on a real PostgreSQL metadata database, as a deployment beyond `standalone` runs it
(docker/compose.yaml): the test starts Debian's PostgreSQL on 127.0.0.1, runs `airflow db
migrate` against it and `airflow dags test build_testset` on the demo month, then stops it.

The server is bench/harness/servers.py's, as the month bench starts it. Skipped, saying why,
only where the server binaries are missing.
"""

import json
import os
import subprocess

import pytest

from bench.harness import servers as local_servers
from tests.dags.conftest import AIRFLOW, REPO, airflow_init
from tests.release.conftest import demo_month

pytestmark = pytest.mark.skipif(
    local_servers.postgres_bin() is None,
    reason="PostgreSQL server binaries not found: `apt-get install postgresql`",
)


@pytest.fixture(scope="module")
def postgres():
    with local_servers.postgres() as url:
        yield url


@pytest.mark.long(seconds=25)
def test_dags_run_on_a_postgres_metadata_database(postgres, demo_built, tmp_path):
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(tmp_path / "airflow"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": postgres,
        "PYTHONPATH": str(REPO),
    }

    def airflow(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [AIRFLOW, *args], env=env, capture_output=True, text=True, timeout=timeout
        )
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        return done

    airflow_init(env)
    cfg = demo_month(demo_built, tmp_path / "data", tmp_path / "mirror")
    conf = {
        "month": "2025-08",
        "data_root": str(cfg.data_root),
        "config": str(REPO / "configs/demo.yaml"),
    }
    record = cfg.data_root / "testset/2025-08/_record.json"
    assert json.loads(record.read_text())["run"]["id"].startswith("cli-")  # the demo's build
    airflow("dags", "test", "build_testset", "2025-09-02", "--conf", json.dumps(conf))
    built = json.loads(record.read_text())["run"]
    assert not built["id"].startswith("cli-") and built["runs"] == 2
    # The run is in PostgreSQL: its state is read back from there.
    import sqlalchemy

    with sqlalchemy.create_engine(postgres).connect() as con:
        runs = con.execute(sqlalchemy.text("SELECT dag_id, state FROM dag_run")).all()
    assert [tuple(r) for r in runs] == [("build_testset", "success")]
