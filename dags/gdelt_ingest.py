"""
### GDELT ingest

Every 15 minutes, ingests the GDELT 2.0 slot files of the run's data interval
`[data_interval_start, data_interval_end)` into typed bronze Parquet
(`<data_root>/bronze/events`, `bronze/mentions`, rejects and the `bronze/slots.parquet`
ledger), by calling the same stage functions as `gdelt-forecast ingest`.

* **download** lists the interval's files in the master file list and fetches them into the
  verified raw cache. It retries with exponential backoff when a download failed or when
  GDELT has not listed the slot yet (it publishes a few minutes after the slot).
* **to_bronze** parses the fetched files and writes bronze; slots GDELT never published
  (404) or published broken (md5 mismatch) are recorded in the ledger, not retried.
* **mark_day** runs on a day's last interval: once every file listed for the day has an
  outcome in the ledger it emits the `gdelt_bronze_day` asset event (extra `day`), which
  triggers `build_days`; until then it retries.

A bad config, a relative data root or another error no retry can mend fails the task at
once (no retries); network errors are retried.

Backfill a range with `airflow backfill create --dag-id gdelt_ingest --from-date ...
--to-date ...`. Params: the run's config, as on the command line.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import Asset, CronDataIntervalTimetable, dag, task

from gdelt_forecast.orchestration.dags import dag_params, documented

BRONZE_DAY = Asset("gdelt_bronze_day")
RETRY = {
    "retry_delay": timedelta(minutes=1),
    "retry_exponential_backoff": 2.0,
    "max_retry_delay": timedelta(minutes=30),
}


@dag(
    dag_id="gdelt_ingest",
    schedule=CronDataIntervalTimetable("*/15 * * * *", timezone="UTC"),
    start_date=datetime(2015, 2, 18, 23, 0, tzinfo=UTC),
    catchup=False,
    max_active_runs=4,
    **documented(__doc__, dag_params()),
    tags=["gdelt", "ingest"],
)
def gdelt_ingest():
    # The tasks import gdelt_forecast inside: the DAG processor parses this file often.
    @task(retries=6, **RETRY)
    def download() -> dict:
        from gdelt_forecast.orchestration.tasks import ingest_download

        return ingest_download()

    @task
    def to_bronze(downloaded: dict) -> dict:
        from gdelt_forecast.orchestration.tasks import ingest_to_bronze

        return ingest_to_bronze(downloaded)

    @task(outlets=[BRONZE_DAY], retries=8, **RETRY)
    def mark_day(_: dict) -> dict:
        from gdelt_forecast.orchestration.tasks import ingest_mark_day

        return ingest_mark_day(BRONZE_DAY)

    mark_day(to_bronze(download()))


gdelt_ingest()
