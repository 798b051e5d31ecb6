"""
### Build a month's complex events, timelines and OpenForecast tasks

By hand, to build one month's timelines and tasks again (`monthly_refresh` builds them each
month): `airflow dags trigger build_timelines_and_tasks --conf '{"month": "2023-11"}'`.
Groups the month's kept news (with its history) into complex events and writes each one's
timeline of atomic events, like `gdelt-forecast timelines --month`, into
`<data_root>/timelines/<month>/`; then the six tasks from them, like `gdelt-forecast tasks
--month`, into `<data_root>/tasks/<month>/`.

Params (validated): `month` (`YYYY-MM`; default: the month before the run),
`history_start` (as `monthly_refresh`'s: a release of the month must use the same), `method`
(`extractive` or `llm`, for both tasks); and `config`, `data_root`, `set` as on the command
line. Both tasks run in the pool `llm_server`, so runs of several months never flood the LLM
server together; **pools** first fails at once when `gdelt-forecast airflow init` has not
made it.
A month without documents fails at once, naming the data root.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import Param, dag, task

from gdelt_forecast.dag_shared import HISTORY, MONTH, RUN, pools


@dag(
    dag_id="build_timelines_and_tasks",
    schedule=None,  # monthly_refresh builds each month once; this re-runs two stages
    start_date=datetime(2015, 3, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=4,
    params={
        **MONTH,
        **HISTORY,
        "method": Param(None, type=["null", "string"], enum=[None, "extractive", "llm"]),
        **RUN,
    },
    default_args={"retries": 1, "retry_delay": timedelta(minutes=5)},
    doc_md=__doc__,
    tags=["openforecast", "timelines", "tasks"],
)
def build_timelines_and_tasks():
    @task(pool="llm_server")
    def timelines() -> dict:
        # Imported here: the DAG processor parses this file often, and must stay light.
        from gdelt_forecast.airflow_tasks import (
            history_start,
            param_overrides,
            run_month,
            run_stage,
        )

        overrides = param_overrides("timelines", ("method",))
        return run_stage(
            "timelines", run_month(), overrides=overrides, history_start=history_start()
        )

    @task(pool="llm_server")
    def tasks(_: dict) -> dict:
        from gdelt_forecast.airflow_tasks import param_overrides, run_month, run_stage

        overrides = param_overrides("timelines", ("method",))
        return run_stage("tasks", run_month(), overrides=overrides)

    built = timelines()
    pools() >> built
    tasks(built)


build_timelines_and_tasks()
