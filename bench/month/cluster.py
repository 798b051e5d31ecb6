"""Airflow as docker/compose.yaml deploys it, on this machine: the CeleryExecutor with Redis as
broker and PostgreSQL as metadata database and result backend, an api-server, a scheduler, a
DAG processor and ``workers`` Celery workers, all on 127.0.0.1, each service in a session
of its own logging into ``<home>/<service>.log``. A worker runs ``concurrency`` tasks at once
(1 by default; the month bench gives more, ``--worker-slots``, since a fetching day waits on
its hosts, not on the CPU).

Each worker has its own name (the ``hostname`` Airflow records on the tasks it ran, through
bench/month/worker_hostname.py) and its own log-server port. :meth:`Cluster.kill_worker` SIGKILLs a
worker with the tasks it runs (their processes, in groups of their own), as a lost machine;
Airflow notices the silence after ``heartbeat_timeout_s`` and retries the task
``retry_delay_s`` later on a worker that lives.

What ran where is read from the metadata database: :meth:`Cluster.tasks` lists every try of
every task with its worker, times and the ``usage`` XCom that gdelt_forecast.orchestration.tasks
pushes (the task's CPU seconds and peak RSS).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

from bench.harness import REPO
from bench.harness import servers as local_servers
from gdelt_forecast.orchestration.runs import wait_healthy

BIN = Path(sys.executable).parent


class Cluster:
    def __init__(
        self,
        home: Path,
        database: str,
        broker: str,
        env: dict[str, str],
        workers: int = 2,
        concurrency: int = 1,
        heartbeat_timeout_s: int = 30,
        retry_delay_s: int = 10,
    ):
        home.mkdir(parents=True, exist_ok=True)
        self.home, self.database = home, database
        self.port = local_servers.free_port()
        self.api = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            **env,
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__EXECUTOR": "CeleryExecutor",
            "AIRFLOW__CORE__DEFAULT_TASK_RETRY_DELAY": str(retry_delay_s),
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{self.api}/execution/",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": database,
            "AIRFLOW__CELERY__BROKER_URL": broker,
            "AIRFLOW__CELERY__RESULT_BACKEND": "db+" + database,
            "AIRFLOW__CELERY__WORKER_CONCURRENCY": str(concurrency),
            "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": str(heartbeat_timeout_s),
            # Airflow looks for silent tasks every 10 s by default: a short timeout is only
            # short if it is looked for as often.
            "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT_DETECTION_INTERVAL": str(
                min(10, heartbeat_timeout_s / 4)
            ),
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__API__PORT": str(self.port),
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(32),
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        }
        self.services: dict[str, subprocess.Popen] = {}
        self.worker_names = [f"worker{i + 1}" for i in range(workers)]

    def airflow(self, *args: str, timeout: int = 300) -> str:
        done = subprocess.run(
            [str(BIN / "airflow"), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"airflow {' '.join(args[:3])}: {(done.stderr or done.stdout)[-2000:]}"
            )
        return done.stdout

    def _start(self, name: str, *args: str, env: dict | None = None) -> None:
        with (self.home / f"{name}.log").open("ab") as log:
            self.services[name] = subprocess.Popen(
                [str(BIN / "airflow"), *args],
                env=env or self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def start(
        self, dags: tuple[str, ...] = ("monthly_refresh",), init: tuple[str, ...] = ()
    ) -> None:
        """Migrate the database, make the pools and store the DAGs (``gdelt-forecast airflow
        init`` with the options ``init``: the config that sizes the pools), start the services
        and the workers, and unpause ``dags``."""
        done = subprocess.run(
            [str(BIN / "gdelt-forecast"), "airflow", "init", *init],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            raise RuntimeError(f"gdelt-forecast airflow init: {done.stderr[-2000:]}")
        for service in ("api-server", "scheduler", "dag-processor"):
            self._start(service, service)
        for name in self.worker_names:
            self.start_worker(name)
        wait_healthy(self.api, timeout_s=300)
        for dag in dags:
            self.airflow("dags", "unpause", dag)

    def start_worker(self, name: str) -> None:
        env = {
            **self.env,
            "GDELT_BENCH_WORKER": name,
            "AIRFLOW__CORE__HOSTNAME_CALLABLE": "bench.month.worker_hostname.hostname",
            "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(local_servers.free_port()),
        }
        self._start(name, "celery", "worker", "--celery-hostname", f"{name}@bench", env=env)

    def kill_worker(self, name: str) -> None:
        """SIGKILL the worker and every task it runs, as a machine lost: its whole process
        tree, since Airflow starts each task in a process group of its own."""
        import psutil

        worker = self.services.pop(name)
        tree = psutil.Process(worker.pid).children(recursive=True)
        for process in [psutil.Process(worker.pid), *tree]:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        worker.wait()
        psutil.wait_procs(tree, timeout=30)

    def trigger(self, dag: str, run_id: str, conf: dict) -> None:
        self.airflow(
            "dags", "trigger", dag, "--run-id", run_id, "--conf", json.dumps(conf), "-o", "plain"
        )

    def query(self, sql: str, **params) -> list[dict]:
        import sqlalchemy

        engine = sqlalchemy.create_engine(self.database, poolclass=sqlalchemy.pool.NullPool)
        with engine.connect() as con:
            return [dict(r._mapping) for r in con.execute(sqlalchemy.text(sql), params)]

    def run_state(self, dag: str, run_id: str) -> str | None:
        rows = self.query(
            "SELECT state FROM dag_run WHERE dag_id = :d AND run_id = :r", d=dag, r=run_id
        )
        return rows[0]["state"] if rows else None

    def running(self, dag: str, run_id: str, task_id: str) -> list[dict]:
        """The tries of ``task_id`` (any map index) running now, with their worker and start."""
        return self.query(
            "SELECT map_index, hostname, start_date FROM task_instance WHERE dag_id = :d AND "
            "run_id = :r AND task_id = :t AND state = 'running'",
            d=dag,
            r=run_id,
            t=task_id,
        )

    def wait(self, dag: str, run_id: str, timeout_s: float, poll_s: float = 3.0, tick=None) -> str:
        """The run's final state; ``tick()`` is called at each poll (the faults)."""
        deadline = time.monotonic() + timeout_s
        while (state := self.run_state(dag, run_id)) not in ("success", "failed"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{dag} {run_id} still {state} after {timeout_s:.0f} s")
            if tick is not None:
                tick()
            time.sleep(poll_s)
        return state

    def tasks(self, dag: str, run_id: str) -> list[dict]:
        """Every try of every task of the run: ``task_id``, ``map_index``, ``try_number``,
        ``state``, ``hostname``, ``start``/``end`` (epoch seconds) and the ``usage`` XCom."""
        columns = (
            "task_id, map_index, try_number, state, hostname, "
            "extract(epoch from start_date) AS start, extract(epoch from end_date) AS end"
        )
        where = "WHERE dag_id = :d AND run_id = :r"
        tries = self.query(
            f"SELECT {columns} FROM task_instance {where} UNION ALL "
            f"SELECT {columns} FROM task_instance_history {where}",
            d=dag,
            r=run_id,
        )
        usage = {
            (x["task_id"], x["map_index"]): x["value"]
            for x in self.query(
                f"SELECT task_id, map_index, value FROM xcom {where} AND key = 'usage'",
                d=dag,
                r=run_id,
            )
        }
        for t in tries:
            t["start"], t["end"] = (
                float(t[k]) if t[k] is not None else None for k in ("start", "end")
            )
            value = usage.get((t["task_id"], t["map_index"])) if t["state"] == "success" else None
            t["usage"] = json.loads(value) if isinstance(value, str) else value
        return sorted(tries, key=lambda t: (t["start"] or 0, t["task_id"], t["map_index"]))

    def stop(self) -> None:
        services, self.services = self.services, {}
        local_servers.stop(*services.values())

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *_) -> None:
        self.stop()
