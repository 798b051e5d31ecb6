"""
### Monthly refresh: from bronze to a release

On the 2nd of each month (06:00 UTC) for the month before, or by hand (`airflow dags trigger
monthly_refresh --conf '{"month": "2023-11"}'`), runs the month's bronze through the later
stages as the command line would: **normalize_day** (mapped per day), **update_warehouse**
(pool `warehouse_writer`), **fetch_day** (mapped, pool `article_fetch`), **process_day**
(mapped), **add_news** (`warehouse_writer`), **testset**, **timelines** and **tasks** (pool
`llm_server`), **release**.

**days** fails at once if a day of the month has no bronze, unless the param `partial` is
true (then it leaves such days out); a month without any never reaches a release. Errors no
retry can mend (a relative data root, no queries, an existing version) fail at once, naming
the data root; network and I/O errors are retried. Months run side by side; locks in
`<data_root>/locks/` make two runs of one day or month take turns. Params (validated):
`month` (default: the month before the run), `version` (default: the next free `YYYY.MM.n`),
`history_start` (default: `release.history_start`, else January 1st of the month's year),
`partial`, and `config`, `data_root`, `set` as on the command line.
"""

from datetime import UTC, datetime, timedelta

from airflow.sdk import CronTriggerTimetable, Param, dag, task

from gdelt_forecast.dag_params import MONTH, RUN


@dag(
    dag_id="monthly_refresh",
    schedule=CronTriggerTimetable("0 6 2 * *", timezone="UTC"),
    start_date=datetime(2015, 3, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=4,
    params={
        **MONTH,
        "version": Param(None, type=["null", "string"], pattern=r"^[0-9A-Za-z][0-9A-Za-z._-]*$"),
        "history_start": Param(None, type=["null", "string"], format="date"),
        "partial": Param(False, type="boolean", description="leave out days without bronze"),
        **RUN,
    },
    default_args={"retries": 2, "retry_delay": timedelta(minutes=2)},
    doc_md=__doc__,
    tags=["gdelt", "warehouse", "mirai", "release"],
)
def monthly_refresh():
    # Tasks import gdelt_forecast inside: the DAG processor parses this file often.
    @task
    def days() -> list[str]:
        from gdelt_forecast.airflow_tasks import month_days

        return month_days()

    @task
    def normalize_day(day: str) -> str:
        from gdelt_forecast.airflow_tasks import run_day
        from gdelt_forecast.events.normalize import normalize

        return run_day("normalize", normalize, day)

    @task(pool="warehouse_writer")
    def update_warehouse(days: list[str]) -> list[str]:
        from gdelt_forecast.airflow_tasks import run_stage
        from gdelt_forecast.warehouse.build import build_database

        run_stage(build_database)
        return sorted(days)

    @task(pool="article_fetch")
    def fetch_day(day: str) -> str:
        from gdelt_forecast.airflow_tasks import run_day
        from gdelt_forecast.articles.sources import fetch_days

        return run_day("fetch", fetch_days, day)

    @task
    def process_day(day: str) -> str:
        from gdelt_forecast.airflow_tasks import run_day
        from gdelt_forecast.articles.process import process

        return run_day("process", process, day)

    @task
    def testset(_: list[str]) -> dict:
        from gdelt_forecast.airflow_tasks import run_month, run_stage
        from gdelt_forecast.testset.build import build_testset

        return run_stage(build_testset, run_month())

    @task(pool="llm_server")
    def timelines(_: dict) -> dict:
        from gdelt_forecast.airflow_tasks import run_month, run_stage
        from gdelt_forecast.timelines.build import build_timelines

        return run_stage(build_timelines, run_month())

    @task(pool="llm_server")
    def tasks(_: dict) -> dict:
        from gdelt_forecast.airflow_tasks import run_month, run_stage
        from gdelt_forecast.tasks.build import build_tasks

        return run_stage(build_tasks, run_month())

    @task
    def release(_: dict) -> dict:
        from gdelt_forecast.airflow_tasks import release_options, run_month, run_stage
        from gdelt_forecast.release.build import build_release

        return run_stage(build_release, run_month(), **release_options())

    events = update_warehouse(normalize_day.expand(day=days()))
    processed = process_day.expand(day=fetch_day.expand(day=events))
    release(tasks(timelines(testset(update_warehouse.override(task_id="add_news")(processed)))))


monthly_refresh()
