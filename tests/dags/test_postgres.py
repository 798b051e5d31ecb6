"""Airflow on a real PostgreSQL metadata database, as a deployment beyond `standalone` runs it
(docker/compose.yaml): the test starts Debian's PostgreSQL on 127.0.0.1, runs `airflow db
migrate` against it and `airflow dags test build_testset` on the demo month, then stops it.

PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user the
Debian package creates. Skipped, saying why, only where the server binaries are missing.
"""

import glob
import json
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.dags.conftest import AIRFLOW, REPO, airflow_init
from tests.release.conftest import demo_month


def _bin_dir() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(os.path.realpath(found)).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(versions[-1]).parent if versions else None


BIN = _bin_dir()
pytestmark = pytest.mark.skipif(
    BIN is None, reason="PostgreSQL server binaries not found: `apt-get install postgresql`"
)


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@pytest.fixture(scope="module")
def postgres():
    # Its own folder in /tmp: pytest's are private to root, whom the server may not be.
    base = Path(tempfile.mkdtemp(prefix="gdelt-forecast-postgres-"))
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    if os.geteuid() == 0:
        for path in (base, sock):
            shutil.chown(path, "postgres")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def run(*command: str) -> None:
        subprocess.run(
            _as_server_user([str(BIN / command[0]), *command[1:]]),
            check=True,
            capture_output=True,
            timeout=120,
        )

    run("initdb", "-D", str(data), "-U", "airflow", "--auth=trust", "-E", "UTF8")
    options = f"-h 127.0.0.1 -p {port} -k {sock}"
    run("pg_ctl", "-D", str(data), "-o", options, "-l", str(base / "server.log"), "-w", "start")
    try:
        run("createdb", "-h", "127.0.0.1", "-p", str(port), "-U", "airflow", "airflow")
        yield f"postgresql+psycopg2://airflow@127.0.0.1:{port}/airflow"
    finally:
        run("pg_ctl", "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(base, ignore_errors=True)


def test_dags_run_on_a_postgres_metadata_database(postgres, tmp_path):
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
    assert "postgresql" in airflow("config", "get-value", "database", "sql_alchemy_conn").stdout
    cfg = demo_month(tmp_path / "data", tmp_path / "mirror")
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
