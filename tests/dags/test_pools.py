"""The pools come from the project's command (`gdelt-forecast airflow init`, which the
shared Airflow home of these tests was made with), every pool a DAG names is one of them,
and a run whose pools were not made fails at once under a real scheduler."""

import contextlib
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from gdelt_forecast.ground.config import Config
from gdelt_forecast.orchestration.pools import MARK, POOLS, slots
from tests.conftest import free_port
from tests.dags.conftest import AIRFLOW, REPO, python


def test_airflow_init_made_every_pool(airflow_env):
    """Read back through ``airflow_cli.airflow``, Airflow's CLI in one process, as ``init``
    and ``airflow wait`` run it: what a command prints comes back without Airflow's log
    lines, and a command Airflow refuses raises, with Airflow's own words."""
    result = python(
        f"""
        import json
        from gdelt_forecast.ground.errors import StageError
        from gdelt_forecast.orchestration.airflow_cli import airflow
        pools = airflow("pools", "list", "-o", "json")
        mark = airflow("variables", "get", {MARK!r})
        try:
            airflow("dags", "list-runs", "no_such_dag", "-o", "json")
        except StageError as exc:
            refused = str(exc)
        print(json.dumps({{"pools": json.loads(pools), "mark": mark, "refused": refused}}))
        """,
        airflow_env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    made = {p["pool"]: (int(p["slots"]), p["description"]) for p in found["pools"]}
    made_here = {name: (n, POOLS[name]) for name, n in slots(Config()).items()}
    assert {name: made.get(name) for name in POOLS} == made_here
    assert json.loads(found["mark"]) == sorted(POOLS)
    assert found["refused"] == (
        "airflow dags list-runs no_such_dag failed: DAG: no_such_dag does not exist in 'dag' table"
    )


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


def test_every_pooled_task_waits_for_the_pools_check(airflow_env):
    result = python(
        """
        import json
        from airflow.dag_processing.dagbag import DagBag
        out = {}
        for dag_id, dag in DagBag().dags.items():
            pooled = sorted(t.task_id for t in dag.tasks if t.pool != "default_pool")
            if pooled:
                after = dag.task_dict["pools"].get_flat_relative_ids(upstream=False)
                out[dag_id] = sorted(set(pooled) - after)
        print(json.dumps(out))
        """,
        airflow_env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    unchecked = json.loads(result.stdout.strip().splitlines()[-1])
    assert unchecked == dict.fromkeys(
        ("build_days", "build_timelines_and_tasks", "monthly_refresh"), []
    )


@pytest.mark.long
def test_a_run_without_the_pools_fails_at_once_under_a_real_scheduler(tmp_path):
    """`airflow standalone` (scheduler, DAG processor, API server, LocalExecutor) on a fresh
    home where nobody ran `gdelt-forecast airflow init`: a triggered monthly_refresh fails
    within seconds at its `pools` task, naming the pools, instead of waiting for ever."""
    api = free_port()
    env = {
        **os.environ,
        "PATH": f"{Path(AIRFLOW).parent}{os.pathsep}{os.environ['PATH']}",  # it runs `airflow`
        "PYTHONPATH": str(REPO),
        "AIRFLOW_HOME": str(tmp_path / "airflow"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",  # only monthly_refresh runs
        "AIRFLOW__CORE__PARALLELISM": "4",
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(api),
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{api}/execution/",
        "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
        "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(free_port()),
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
    }

    log = (tmp_path / "standalone.log").open("w")
    server = subprocess.Popen(
        [AIRFLOW, "standalone"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    conf = json.dumps({"data_root": str(tmp_path / "data"), "month": "2025-08"})
    try:
        # Airflow's CLI in one process (airflow_cli), not one per poll: 4 s of CPU each; the
        # run waited for as `gdelt-forecast airflow wait` waits.
        driven = python(
            f"""
            import json, time
            from gdelt_forecast.ground.errors import StageError
            from gdelt_forecast.orchestration.airflow_cli import airflow, airflow_json
            from gdelt_forecast.orchestration.runs import newest_manual_run, wait
            deadline = time.monotonic() + 240
            while True:  # until the DAG processor has stored it, and it is unpaused
                try:
                    airflow("dags", "unpause", "monthly_refresh")
                    dags = airflow_json("dags", "list")
                except StageError:  # not stored yet
                    dags = []
                if any(d["dag_id"] == "monthly_refresh" and str(d["is_paused"]) == "False"
                       for d in dags):  # the CLI's JSON has "False"
                    break
                assert time.monotonic() < deadline, "monthly_refresh never unpaused"
                time.sleep(2)
            airflow("dags", "trigger", "monthly_refresh", "--conf", {conf!r}, "-o", "plain")
            wait("monthly_refresh", 120, poll_s=1)
            run = newest_manual_run("monthly_refresh")
            tis = airflow_json("tasks", "states-for-dag-run", "monthly_refresh", run["run_id"])
            print(json.dumps({{"state": run["state"], "run_id": run["run_id"], "tasks": tis}}))
            """,
            env,
            timeout=420,
        )
        assert driven.returncode == 0, (driven.stdout + driven.stderr)[-3000:]
        found = json.loads(driven.stdout.strip().splitlines()[-1])
        run_id = found["run_id"]
        assert found["state"] == "failed"
        states = {t["task_id"]: t["state"] for t in found["tasks"]}
        assert states.pop("pools") == "failed"
        assert set(states.values()) == {"upstream_failed"}
        [attempt] = (tmp_path / "airflow/logs").glob(
            f"dag_id=monthly_refresh/run_id={run_id}/task_id=pools/attempt=*.log"
        )
        assert (
            "the Airflow pool(s) article_fetch, llm_server, warehouse_writer were not made: run "
            "`gdelt-forecast airflow init`"
        ) in attempt.read_text()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(timeout=60)
        with contextlib.suppress(ProcessLookupError):  # any component that outlived it
            os.killpg(server.pid, signal.SIGKILL)
        server.wait()
        log.close()
