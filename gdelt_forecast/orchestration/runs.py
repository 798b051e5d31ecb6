"""``gdelt-forecast airflow wait DAG``: wait for the newest manual run of a DAG (the one
``airflow dags trigger`` just queued) to finish; exit 0 when it succeeded, else 1 naming the
tasks that did not. Airflow's CLI has no such wait, and a script that triggers a run (the
README's, a cron job's) must know whether it worked. ``gdelt-forecast airflow run DAG``
unpauses the DAG, triggers a run and waits for that run, in one process.

It asks Airflow's own CLI (``airflow dags list-runs``, ``airflow tasks
states-for-dag-run``), so it reads the same metadata database as the scheduler, whatever
that database is; in this process (:mod:`.airflow_cli`), as a process a poll cost 4 s of CPU
that the run it waits for could use.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.orchestration.airflow_cli import airflow, airflow_json

FINISHED = ("success", "failed")


def find_run(dag_id: str, run_id: str | None = None) -> dict | None:
    """The run ``run_id`` of ``dag_id`` (by default its newest manual run), or None."""
    runs = airflow_json("dags", "list-runs", dag_id)
    if run_id is not None:
        return next((r for r in runs if r["run_id"] == run_id), None)
    manual = [r for r in runs if r["run_id"].startswith("manual__")]
    return max(manual, key=lambda r: r["run_after"], default=None)


def wait(
    dag_id: str, timeout_s: float, poll_s: float = 3.0, run_id: str | None = None
) -> tuple[bool, str]:
    """(succeeded, one line saying how the run ended) once the run ``run_id`` of ``dag_id``
    (by default its newest manual run) finishes; StageError when there is none or it is not
    done in ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        run = find_run(dag_id, run_id)
        if run is None:
            raise StageError(f"{dag_id} has no manual run: airflow dags trigger {dag_id} first")
        if run["state"] in FINISHED:
            break
        if time.monotonic() > deadline:
            raise StageError(
                f"{dag_id} {run['run_id']} is still {run['state']} after {timeout_s:.0f} s "
                "(a paused DAG's runs stay queued: airflow dags unpause; is the scheduler up?)"
            )
        time.sleep(poll_s)
    line = f"{dag_id} {run['run_id']}: {run['state']}"
    if run["state"] == "success":
        return True, line
    tasks = airflow_json("tasks", "states-for-dag-run", dag_id, run["run_id"])
    failed = sorted(t["task_id"] for t in tasks if t.get("state") not in ("success", "skipped"))
    return False, f"{line} (not successful: {', '.join(failed) or 'no task ran'})"


def trigger_and_wait(dag_id: str, conf: dict, timeout_s: float) -> tuple[bool, str]:
    """Unpause ``dag_id`` (a paused DAG's runs stay queued), trigger a manual run with
    ``conf`` and :func:`wait` for it."""
    airflow("dags", "unpause", dag_id)
    run_id = f"manual__{datetime.now(UTC).isoformat()}"
    # -o plain: Airflow's table output fails on a conf holding brackets (rich reads them as
    # markup), after the run is queued.
    conf_json = json.dumps(conf)
    airflow("dags", "trigger", dag_id, "--run-id", run_id, "--conf", conf_json, "-o", "plain")
    return wait(dag_id, timeout_s, run_id=run_id)


def wait_healthy(api: str, timeout_s: float = 180.0) -> None:
    """Return once the api-server at ``api`` answers its health check (tasks reach Airflow
    through it, so nothing may run before), else StageError."""
    import urllib.request

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(f"{api}/api/v2/monitor/health", timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass  # not listening yet
        if time.monotonic() > deadline:
            raise StageError(f"Airflow's api-server at {api} did not answer in {timeout_s:.0f} s")
        time.sleep(1.0)


if __name__ == "__main__":  # `make airflow-up`: python -m gdelt_forecast.orchestration.runs URL
    import sys

    try:
        wait_healthy(sys.argv[1])
    except StageError as exc:
        sys.exit(f"airflow-up: {exc}")
    print(f"Airflow is up: {sys.argv[1]}")
