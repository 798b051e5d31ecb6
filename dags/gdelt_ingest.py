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
  triggers `build_database`; until then it retries.

Backfill a range with `airflow backfill create --dag-id gdelt_ingest --from-date ...
--to-date ...`. Params: `config` (YAML path), `data_root`, `set` (`section.key=value`
overrides), as on the command line.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import Asset, CronDataIntervalTimetable, Param, dag, get_current_context, task
from airflow.sdk.exceptions import AirflowSkipException

BRONZE_DAY = Asset("gdelt_bronze_day")
PARAMS = {
    "config": Param(None, type=["null", "string"], description="YAML config file"),
    "data_root": Param(None, type=["null", "string"], description="data root override"),
    "set": Param([], type="array", description="section.key=value overrides"),
}
RETRY = {
    "retry_delay": timedelta(minutes=1),
    "retry_exponential_backoff": 2.0,
    "max_retry_delay": timedelta(minutes=30),
}


def _config_and_range():
    # Imported here: the DAG processor parses this file often, and must stay light.
    from pipeline.config import from_dag_params

    ctx = get_current_context()
    start = datetime.fromtimestamp(ctx["data_interval_start"].timestamp(), UTC)
    end = datetime.fromtimestamp(ctx["data_interval_end"].timestamp(), UTC)
    # The stage takes an inclusive range; the interval excludes its end.
    last = end.replace(tzinfo=None) - timedelta(seconds=1)
    return from_dag_params(ctx["params"]), start.replace(tzinfo=None), last


@dag(
    dag_id="gdelt_ingest",
    schedule=CronDataIntervalTimetable("*/15 * * * *", timezone="UTC"),
    start_date=datetime(2015, 2, 18, 23, 0, tzinfo=UTC),
    catchup=False,
    max_active_runs=4,
    params=PARAMS,
    doc_md=__doc__,
    tags=["gdelt", "ingest"],
)
def gdelt_ingest():
    @task(retries=6, **RETRY)
    def download() -> dict:
        from dataclasses import asdict

        from pipeline.gdelt.ingest import fetch_files, list_slot_files, new_summary

        cfg, start, end = _config_and_range()
        listing = list_slot_files(cfg, start, end, cfg.gdelt.tables)
        if not listing.files:
            raise RuntimeError(f"no slot listed yet for {start:%Y-%m-%dT%H:%M}..{end:%H:%M}")
        fetched = fetch_files(cfg, listing)
        failed = [f"{f.file.name}: {f.detail}" for f in fetched if f.status == "failed"]
        if failed:
            raise RuntimeError(f"{len(failed)} downloads failed: {'; '.join(failed)}")
        return {
            "summary": asdict(new_summary(start, end, listing)),
            "fetched": [f.to_dict() for f in fetched],
        }

    @task
    def to_bronze(downloaded: dict) -> dict:
        from pipeline.gdelt.download import Fetched
        from pipeline.gdelt.ingest import Summary, write_bronze

        cfg, _, _ = _config_and_range()
        fetched = [Fetched.from_dict(item) for item in downloaded["fetched"]]
        summary = write_bronze(cfg, fetched, Summary(**downloaded["summary"]))
        print(summary.line())
        return summary.to_dict()

    @task(outlets=[BRONZE_DAY], retries=8, **RETRY)
    def mark_day(_: dict) -> dict:
        from dataclasses import asdict

        from pipeline.gdelt.days import day_status

        cfg, start, end = _config_and_range()
        if start.date() == (end + timedelta(seconds=1)).date():
            raise AirflowSkipException("not the day's last interval")
        status = day_status(cfg, start.date())
        if not status.complete:
            raise RuntimeError(f"{status.day} not complete yet: {status.statuses}")
        get_current_context()["outlet_events"][BRONZE_DAY].extra = {"day": status.day}
        return asdict(status)

    mark_day(to_bronze(download()))


gdelt_ingest()
