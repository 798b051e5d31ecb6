"""The pools come from the project's command (`gdelt-forecast airflow init`, which the
shared Airflow home of these tests was made with), every pool a DAG names is one of them,
and a run whose pools were not made fails at once under a real scheduler."""

import json
import secrets
import subprocess

import pytest

from bench.harness import servers as local_servers
from gdelt_forecast.ground.config import Config
from gdelt_forecast.orchestration.pools import MARK, POOLS, slots
from tests.conftest import free_port
from tests.dags.conftest import AIRFLOW, airflow_home, python


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


@pytest.mark.long(seconds=40)
def test_a_run_without_the_pools_fails_at_once_under_a_real_scheduler(airflow_made, tmp_path):
    """Airflow's services as `make airflow-up` starts them (API server, scheduler, DAG
    processor, LocalExecutor) on a home whose pools and their mark were deleted, as where
    nobody ran `gdelt-forecast airflow init`: a triggered monthly_refresh fails within seconds
    at its `pools` task, naming the pools, instead of waiting for ever. (The home is a copy of
    the tests' migrated database, its DAGs stored: no migration to wait for.)"""
    api = free_port()
    env = {
        **airflow_home(airflow_made, tmp_path / "airflow"),
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",  # only monthly_refresh runs
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__CORE__PARALLELISM": "4",
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(api),
        # one secret for the tasks' tokens, which the scheduler signs and the API server checks
        "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(32),
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{api}/execution/",
        "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
    }
    conf = {"data_root": str(tmp_path / "data"), "month": "2025-08"}
    services = []
    for service in ("api-server", "scheduler", "dag-processor"):
        with (tmp_path / f"{service}.log").open("w") as log:
            services.append(
                subprocess.Popen(
                    [AIRFLOW, service],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
    try:
        # Airflow's CLI in one process (airflow_cli), not one per command: 4 s of CPU each;
        # the pools made by init deleted first, and the run triggered and waited for as
        # `gdelt-forecast airflow run` does.
        driven = python(
            f"""
            import json
            from gdelt_forecast.orchestration.airflow_cli import airflow, airflow_json
            from gdelt_forecast.orchestration.runs import find_run, trigger_and_wait, wait_healthy
            for pool in {sorted(POOLS)!r}:
                airflow("pools", "delete", pool)
            airflow("variables", "delete", {MARK!r})
            wait_healthy("http://127.0.0.1:{api}")
            trigger_and_wait("monthly_refresh", {conf!r}, 120)
            run = find_run("monthly_refresh")
            tis = airflow_json("tasks", "states-for-dag-run", "monthly_refresh", run["run_id"])
            print(json.dumps({{"state": run["state"], "run_id": run["run_id"], "tasks": tis}}))
            """,
            env,
            timeout=420,
        )
    finally:
        # 10 s, not the harness's 60: a scheduler stopped just after its LocalExecutor's
        # workers ran has been seen to wait the whole grace (as `make airflow-down` says), a
        # minute of this test in the suite, and these services are thrown away.
        local_servers.stop(*services, timeout_s=10)
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
