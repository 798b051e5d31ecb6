"""
### Build a month's complex events, timelines and OpenForecast tasks

Monthly (on the 1st, for the month before) or by hand: `airflow dags trigger
build_timelines_and_tasks --conf '{"month": "2023-11"}'`. Groups the month's kept
news (with its history) into complex events and writes each one's timeline of atomic events,
like `gdelt-forecast timelines --month`, into `<data_root>/timelines/<month>/`; then the six
tasks from them, like `gdelt-forecast tasks --month`, into `<data_root>/tasks/<month>/`.

Params (validated): `month` (`YYYY-MM`; default: the month before the run), `method`
(`extractive` or `llm`, for both tasks); and `config`, `data_root`, `set` as on the command
line. Both tasks run in the pool `llm_server`, so runs of several months never flood the LLM
server together.
A month without documents fails at once, naming the data root.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import CronTriggerTimetable, Param, dag, task

from gdelt_forecast.dag_params import MONTH, RUN


@dag(
    dag_id="build_timelines_and_tasks",
    schedule=CronTriggerTimetable("0 6 1 * *", timezone="UTC"),
    start_date=datetime(2015, 3, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=4,
    params={
        **MONTH,
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
        from gdelt_forecast.airflow_tasks import param_overrides, run_month, run_stage
        from gdelt_forecast.timelines.build import build_timelines as build_month

        overrides = param_overrides("timelines", ("method",))
        return run_stage(build_month, run_month(), overrides=overrides)

    @task(pool="llm_server")
    def tasks(_: dict) -> dict:
        from gdelt_forecast.airflow_tasks import param_overrides, run_month, run_stage
        from gdelt_forecast.tasks.build import build_tasks

        overrides = param_overrides("timelines", ("method",))
        return run_stage(build_tasks, run_month(), overrides=overrides)

    tasks(timelines())


build_timelines_and_tasks()
