"""An Airflow home with a migrated SQLite database, shared by the DAG tests."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from tests.conftest import made_once

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
def airflow_made(tmp_path_factory) -> Path:
    """One `airflow init` for the whole run (seconds of CPU a home otherwise): the folder of
    its database, ``airflow.db``, and of the key its Variables are encrypted with,
    ``fernet.key``. Tests copy the database (:func:`airflow_home`)."""

    def init(folder: Path) -> None:
        key = Fernet.generate_key().decode()
        (folder / "fernet.key").write_text(key)
        airflow_init(_home(folder, key))

    return made_once(tmp_path_factory, "airflow-init", init)


def airflow_home(made: Path, home: Path) -> dict:
    """The environment of a new Airflow home ``home`` whose database is a copy of ``made``'s."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy2(made / "airflow.db", home / "airflow.db")
    return _home(home, (made / "fernet.key").read_text())


@pytest.fixture(scope="session")
def airflow_env(tmp_path_factory, airflow_made):
    """Each worker's own home (SQLite takes one writer), from :func:`airflow_made`; and its
    warm interpreter (:class:`Zygote`)."""
    env = airflow_home(airflow_made, tmp_path_factory.mktemp("airflow"))
    home = Path(env["AIRFLOW_HOME"])
    with Zygote(env, home / "zygote") as zygote:
        _ZYGOTES.append(zygote)
        yield env
        _ZYGOTES.remove(zygote)


class Zygote:
    """tests/dags/zygote.py for the environment ``env``: runs a snippet in a child forked
    from an interpreter that has Airflow imported and its execution API built."""

    def __init__(self, env: dict, folder: Path):
        folder.mkdir()
        self.env, self.folder = env, folder
        self.log = (folder / "zygote.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("zygote.py"))],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        self._line("READY")

    def _line(self, prefix: str) -> str:
        while line := self.process.stdout.readline():
            if line.startswith(prefix):
                return line
        raise RuntimeError(f"the zygote ended: {(self.folder / 'zygote.log').read_text()[-3000:]}")

    def serves(self, env: dict) -> bool:
        """Whether a snippet for ``env`` may run here: Airflow read its configuration, and
        Python its path, before the fork."""
        return _fixed(env) == _fixed(self.env)

    def run(self, code: str, env: dict, timeout: int) -> subprocess.CompletedProcess:
        out, err = self.folder / "out", self.folder / "err"
        job = {"code": code, "env": env, "out": str(out), "err": str(err), "timeout": timeout}
        self.process.stdin.write(json.dumps(job) + "\n")
        self.process.stdin.flush()
        status = int(self._line("EXIT").split()[1])
        return subprocess.CompletedProcess(
            ["zygote", code],
            status,
            out.read_text(errors="replace"),
            err.read_text(errors="replace"),
        )

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.process.stdin.close()
        self.process.wait(timeout=60)
        self.process.stdout.close()
        self.log.close()


def _fixed(env: dict) -> dict:
    return {k: v for k, v in env.items() if k.startswith("AIRFLOW") or k == "PYTHONPATH"}


_ZYGOTES: list[Zygote] = []  # this worker's, while its airflow_env lives


def _home(home: Path, fernet_key: str) -> dict:
    """The environment of an Airflow home with this checkout's DAGs (airflow.cfg, which holds
    the home's paths, is written by Airflow at its first command)."""
    return {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__FERNET_KEY": fernet_key,
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "PYTHONPATH": str(REPO),
    }


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
    """Run code as in a fresh interpreter, as Airflow's DAG processor and dag.test() would:
    forked from the worker's :class:`Zygote` where its environment allows, else in one."""
    code = textwrap.dedent(code)
    for zygote in _ZYGOTES:
        if zygote.serves(env):
            return zygote.run(code, env, timeout)
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout
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
