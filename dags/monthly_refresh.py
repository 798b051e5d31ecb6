"""
### Monthly refresh: from bronze to a release

On the 2nd of each month (06:00 UTC) for the month before, or by hand (`airflow dags trigger
monthly_refresh --conf '{"month": "2023-11"}'`), checks that its pools were made (**pools**
fails at once, naming them, unless `gdelt-forecast airflow init` made them), then runs the
month's bronze through every later stage once, as the command line would:
**normalize_day**, **fetch_day** (pool `article_fetch`) and **process_day**, one group mapped
per day (a day is processed as soon as it is fetched);
**database** (pool `warehouse_writer`); **testset**, and **timelines** then **tasks** (pool
`llm_server`) and **reasoning**; **release**, which packages what those built (their records
say so) and refuses stale ones.

**days** fails at once if a day of the month has no bronze, unless the param `partial` is
true (then it leaves such days out); a month without any never reaches a release. Errors no
retry can mend (a relative data root, no queries, an existing version) fail at once, naming
the data root; network and I/O errors are retried. Months run side by side; locks in
`<data_root>/locks/` make two runs of one day or month take turns. Params: `gdelt-forecast
release`'s options (`month` defaults to the month before the run; the timelines read no
document before `history_start`), and `partial`.
"""

from datetime import UTC, datetime

from airflow.sdk import CronTriggerTimetable, dag, task

from gdelt_forecast.dag_shared import day_tasks, documented, pools
from gdelt_forecast.parameters import PARTIAL


@dag(
    dag_id="monthly_refresh",
    schedule=CronTriggerTimetable("0 6 2 * *", timezone="UTC"),
    start_date=datetime(2015, 3, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=4,
    # retry_delay: Airflow's [core] default_task_retry_delay (120 s in `make airflow` and
    # docker/compose.yaml; a bench that kills workers sets it shorter)
    default_args={"retries": 2},
    **documented(__doc__, "release", extra=(PARTIAL,)),
    tags=["gdelt", "warehouse", "mirai", "release"],
)
def monthly_refresh():
    # Tasks import gdelt_forecast inside: the DAG processor parses this file often.
    @task
    def days() -> list[str]:
        from gdelt_forecast.airflow_tasks import month_days

        return month_days()

    @task(pool="warehouse_writer")
    def database(_: list[str]) -> dict:
        from gdelt_forecast.airflow_tasks import run_stage

        return run_stage("database")

    @task
    def testset(_: dict) -> dict:
        from gdelt_forecast.airflow_tasks import run_month, run_stage

        return run_stage("testset", run_month())

    @task(pool="llm_server")
    def timelines(_: dict) -> dict:
        from gdelt_forecast.airflow_tasks import param, run_month, run_stage

        start = param("release", "history_start")
        return run_stage("timelines", run_month(), history_start=start)

    @task(pool="llm_server")
    def tasks(_: dict) -> dict:
        from gdelt_forecast.airflow_tasks import run_month, run_stage

        return run_stage("tasks", run_month())

    @task
    def reasoning(_: dict) -> dict:
        from gdelt_forecast.airflow_tasks import run_month, run_stage

        return run_stage("reasoning", run_month())

    @task
    def release(_testset: dict, _tasks: dict, _reasoning: dict) -> dict:
        from gdelt_forecast.airflow_tasks import param, run_month, run_stage

        version, start = param("release", "version"), param("release", "history_start")
        return run_stage("release", run_month(), version, start)

    first = days()
    pools() >> first
    warehouse = database(day_tasks(first))
    stories = timelines(warehouse)
    release(testset(warehouse), tasks(stories), reasoning(stories))


monthly_refresh()
