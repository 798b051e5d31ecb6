"""
### Build days: their events, their news, then the warehouse once

Runs on each `gdelt_bronze_day` asset event (one per complete day of bronze, from
`gdelt_ingest`), or by hand with the params `start_date` and `end_date`.

* **pools** fails at once, naming them, when the pools below were not made (run
  `gdelt-forecast airflow init`).
* **days** collects the days to build: the triggering events' `day`, or the params' range.
* **normalize_day** (one mapped task per day) applies the MIRAI rules to the day's bronze
  and writes its silver events and funnel, like `gdelt-forecast normalize`.
* **fetch_day** (mapped) fetches the source pages of the day's silver events, like
  `gdelt-forecast articles fetch`, in the pool `article_fetch` (`articles.fetch_days`
  slots: each task keeps `articles.concurrency` connections open, so a backfill cannot open
  thousands; all of them share each host's politeness).
* **process_day** (mapped) extracts and cleans them, like `gdelt-forecast articles process`,
  as soon as the same day's `fetch_day` ends (a day's three tasks are one mapped group).
* **database** rebuilds `warehouse.duckdb` once, from silver and the documents, like
  `gdelt-forecast database`, in the pool `warehouse_writer` (one slot: one writer).

Params: `start_date` and `end_date` as `gdelt-forecast normalize` takes them (not given: the
triggering events' days). An error no retry can mend (a relative data root, a day without
bronze, `end_date` before `start_date`) fails its task at once; network and I/O errors are
retried. A day's tasks hold the lock `<data_root>/locks/<stage>-<day>.lock` (as the command
line does), so two runs covering one day take turns.
"""

from __future__ import annotations

from datetime import UTC, datetime

from airflow.sdk import Asset, dag, task

from gdelt_forecast.orchestration.dags import dag_params, day_tasks, documented, pools, stage_tasks

BRONZE_DAY = Asset("gdelt_bronze_day")
PARAMS = dag_params("normalize")


@dag(
    dag_id="build_days",
    schedule=[BRONZE_DAY],
    start_date=datetime(2015, 2, 19, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    # retry_delay: Airflow's [core] default_task_retry_delay (120 s in `make airflow` and
    # docker/compose.yaml; a bench that kills workers sets it shorter)
    default_args={"retries": 2},
    **documented(__doc__, PARAMS),
    tags=["gdelt", "events", "warehouse"],
)
def build_days():
    # The tasks import gdelt_forecast inside: the DAG processor parses this file often.
    @task
    def days() -> list[str]:
        from gdelt_forecast.orchestration.tasks import requested_days

        return requested_days(BRONZE_DAY)

    first = days()
    pools() >> first
    stage_tasks(["database"], PARAMS, upstream=day_tasks(first))


build_days()
