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

Backfill a range with `airflow backfill create --dag-id gdelt_ingest --from-date ...
--to-date ...`. Params: `config` (YAML path), `data_root`, `set` (`section.key=value`
overrides), as on the command line.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import CronDataIntervalTimetable, Param, dag, get_current_context, task

PARAMS = {
    "config": Param(None, type=["null", "string"], description="YAML config file"),
    "data_root": Param(None, type=["null", "string"], description="data root override"),
    "set": Param([], type="array", description="section.key=value overrides"),
}


def _config_and_range():
    # Imported here: the DAG processor parses this file often, and must stay light.
    from pipeline.config import load_config

    ctx = get_current_context()
    params = ctx["params"]
    cfg = load_config(params["config"], params["set"], params["data_root"])
    start = datetime.fromtimestamp(ctx["data_interval_start"].timestamp(), UTC)
    end = datetime.fromtimestamp(ctx["data_interval_end"].timestamp(), UTC)
    # The stage takes an inclusive range; the interval excludes its end.
    return cfg, start.replace(tzinfo=None), end.replace(tzinfo=None) - timedelta(seconds=1)


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
    @task(
        retries=6,
        retry_delay=timedelta(minutes=1),
        retry_exponential_backoff=2.0,
        max_retry_delay=timedelta(minutes=30),
    )
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
        from dataclasses import asdict

        from pipeline.gdelt.download import Fetched
        from pipeline.gdelt.ingest import Summary, write_bronze

        cfg, _, _ = _config_and_range()
        fetched = [Fetched.from_dict(item) for item in downloaded["fetched"]]
        summary = write_bronze(cfg, fetched, Summary(**downloaded["summary"]))
        print(summary.line())
        return asdict(summary)

    to_bronze(download())


gdelt_ingest()
