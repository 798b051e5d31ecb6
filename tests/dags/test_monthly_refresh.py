"""The monthly_refresh DAG: its tasks, pools and validated params. Its runs: the demo month's
from bronze to a release under the scheduler and its LocalExecutor, as docs/airflow.md gives
it (tests/release/test_readme.py), and a simulated month's with the data root in a bucket,
on Celery workers (tests/bench/test_celery_month.py)."""

from tests.dags.conftest import parsed, python


def test_dag_parses_with_its_tasks_pools_and_params(airflow_env):
    info = parsed(
        "monthly_refresh",
        """
        "tasks": {t.task_id: t.pool for t in dag.tasks},
        "per_day": {t.task_id: t.get_closest_mapped_task_group().group_id
                    for t in dag.tasks if t.get_closest_mapped_task_group()},
        "params": sorted(dag.params),
        "schedule": dag.timetable.expression,
        "doc": dag.doc_md.strip().splitlines()[0],
        "database_after": sorted(dag.get_task("database").upstream_task_ids),
        "history": [dag.get_task("history").mode, dag.get_task("history").poke_interval],
        """,
        airflow_env,
    )
    assert info["tasks"] == {
        "pools": "default_pool",
        "days": "default_pool",
        "history": "default_pool",
        "normalize_day": "default_pool",
        "fetch_day": "article_fetch",
        "process_day": "default_pool",
        "database": "warehouse_writer",
        "testset": "default_pool",
        "timelines": "llm_server",
        "tasks": "llm_server",
        "reasoning": "llm_server",  # a model-server stage, as the stages declare it
        "release": "default_pool",
        "rounds": "default_pool",
    }
    # A day's three tasks are one mapped group: its process_day waits for its own fetch_day,
    # not for every day's.
    assert info["per_day"] == dict.fromkeys(("normalize_day", "fetch_day", "process_day"),
                                            "one_day")  # fmt: skip
    assert info["params"] == [
        "config",
        "data_root",
        "history_start",
        "month",
        "partial",
        "set",
        "version",
    ]
    assert info["schedule"] == "0 6 2 * *"
    # The warehouse waits for the month's days and for every earlier day (a backfill's months
    # side by side), the wait rescheduled so that it holds no worker slot.
    assert info["database_after"] == ["history", "process_day"]
    assert info["history"] == ["reschedule", 60.0]
    assert info["doc"] == "### Monthly refresh: from bronze to a release"


def test_bad_params_are_refused(airflow_env, tmp_path):
    confs = [
        {"month": "2023-13"},
        {"month": "2023-1"},
        {"version": "../x"},
        {"history_start": "2025-02-30"},
        {"partial": "yes"},
    ]
    result = python(
        f"""
        from datetime import datetime, UTC
        from airflow.dag_processing.dagbag import DagBag
        dag = DagBag().dags["monthly_refresh"]
        for conf in {confs!r}:
            try:
                run = dag.test(logical_date=datetime(2025, 9, 2, 6, tzinfo=UTC),
                               run_conf={{"data_root": {str(tmp_path)!r}, **conf}})
                print("RAN", conf, run.state)
            except Exception as exc:
                print("REFUSED", type(exc).__name__, conf)
        """,
        airflow_env,
    )
    for conf in confs:
        assert f"REFUSED ParamValidationError {conf!r}" in result.stdout, (conf, result.stdout)
