"""
### Build a month's complex events, timelines and OpenForecast tasks

By hand, to build one month's timelines and tasks again (`monthly_refresh` builds them each
month): `airflow dags trigger build_timelines_and_tasks --conf '{"month": "2023-11"}'`.
Groups the month's kept news (with its history) into complex events and writes each one's
timeline of atomic events, like `gdelt-forecast timelines --month`, into
`<data_root>/timelines/<month>/`; then the six tasks from them, like `gdelt-forecast tasks
--month`, into `<data_root>/tasks/<month>/`.

Params: `gdelt-forecast timelines`'s options (`month` defaults to the month before the run;
`method` is both tasks'). Both tasks run in the pool `llm_server`, so runs of several months
never flood the LLM server together; **pools** first fails at once when `gdelt-forecast
airflow init` has not made it.
A month without documents fails at once, naming the data root.
"""

from __future__ import annotations

from airflow.sdk import dag, task

from gdelt_forecast.dag_shared import BY_HAND, documented, pools


@dag(
    dag_id="build_timelines_and_tasks",
    **BY_HAND,
    **documented(__doc__, "timelines", "tasks"),
    tags=["openforecast", "timelines", "tasks"],
)
def build_timelines_and_tasks():
    @task(pool="llm_server")
    def timelines() -> dict:
        # Imported here: the DAG processor parses this file often, and must stay light.
        from gdelt_forecast.airflow_tasks import param, run_month, run_stage

        start = param("timelines", "history_start")
        return run_stage("timelines", run_month(), history_start=start)

    @task(pool="llm_server")
    def tasks(_: dict) -> dict:
        from gdelt_forecast.airflow_tasks import run_month, run_stage

        return run_stage("tasks", run_month())

    built = timelines()
    pools() >> built
    tasks(built)


build_timelines_and_tasks()
