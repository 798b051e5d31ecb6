"""
### Monthly refresh: from bronze to a release

On the 2nd of each month (06:00 UTC) for the month before, or by hand (`airflow dags trigger
monthly_refresh --conf '{"month": "2023-11"}'`), checks that its pools were made (**pools**
fails at once, naming them, unless `gdelt-forecast airflow init` made them), then runs the
month's bronze through every later stage once, as the command line would:
**normalize_day**, **fetch_day** (pool `article_fetch`) and **process_day**, one group mapped
per day (a day is processed as soon as it is fetched);
**database** (pool `warehouse_writer`), once **history** has seen every earlier day with
bronze built (its silver and documents: a month of a backfill waits for the months before
it); **testset**, and **timelines** then **tasks** and **reasoning** (the three in the pool
`llm_server`: one month's model work at a time);
**release**, which packages what those built (their records say so) and refuses stale ones;
then **rounds**: the live rounds' turn (`gdelt-forecast round refresh`, docs/rounds.md), which
resolves the live rounds that are due and whose GDELT files are all in, and opens the live
round the release names (a release built in the month after its own names one).

**days** fails at once if a day of the month has no bronze, unless the param `partial` is
true (then it leaves such days out); a month without any never reaches a release. Errors no
retry can mend (a relative data root, no queries, an existing version) fail at once, naming
the data root; network and I/O errors are retried. Months run side by side (`airflow
backfill create --dag-id monthly_refresh --from-date ... --to-date ... --max-active-runs 3`);
locks in `<data_root>/locks/` make two runs of one day or month take turns. Params: `gdelt-forecast
release`'s options (`month` defaults to the month before the run; the timelines read no
document before `history_start`), and `partial`.
"""

from datetime import UTC, datetime

from airflow.sdk import CronTriggerTimetable, dag, task

from gdelt_forecast.orchestration.dags import dag_params, day_tasks, documented, pools, stage_tasks
from gdelt_forecast.pipeline.parameters import PARTIAL
from gdelt_forecast.pipeline.stages import STAGES

# The warehouse, then every month stage after what it reads, the release last.
MONTHLY = ["database", *(name for name, s in STAGES.items() if s.partition == "month")]
PARAMS = dag_params("release", extra=(PARTIAL,))


@dag(
    dag_id="monthly_refresh",
    schedule=CronTriggerTimetable("0 6 2 * *", timezone="UTC"),
    start_date=datetime(2015, 3, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=4,
    # retry_delay: Airflow's [core] default_task_retry_delay (120 s in `make airflow` and
    # docker/compose.yaml; a bench that kills workers sets it shorter)
    default_args={"retries": 2},
    **documented(__doc__, PARAMS),
    tags=["gdelt", "warehouse", "mirai", "release"],
)
def monthly_refresh():
    # Tasks import gdelt_forecast inside: the DAG processor parses this file often.
    @task
    def days() -> list[str]:
        from gdelt_forecast.orchestration.tasks import month_days

        return month_days()

    # A month's warehouse and release read every earlier day: in a backfill, a month waits
    # for the months before it, run beside it, to have built their days (rescheduled: no
    # worker slot is held while it waits).
    @task.sensor(poke_interval=60, timeout=24 * 3600, mode="reschedule")
    def history() -> bool:
        from gdelt_forecast.orchestration.tasks import history_built

        return history_built()

    first, earlier = days(), history()
    pools() >> [first, earlier]
    stage_tasks(MONTHLY, PARAMS, upstream=[day_tasks(first), earlier])


monthly_refresh()
