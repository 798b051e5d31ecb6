"""What the DAGs in ``dags/`` share, defined once: their params and the doc listing them,
made from the stages' declared parameters (:func:`documented`), the schedule of a DAG run by
hand (:data:`BY_HAND`), the check that the pools exist (:func:`pools`) and the per-day tasks
(:func:`day_tasks`).

The DAG files import this module while Airflow parses them, so it imports nothing but
Airflow's SDK and the parameters' declarations (the standard library's): parsing stays
light, and the stages are imported inside the tasks only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import Param, task, task_group

from gdelt_forecast.parameters import PARAMETERS, RUN, Parameter

# A DAG that builds one month's stages again by hand (monthly_refresh builds each month once):
# no schedule, runs of up to four months side by side, one retry.
BY_HAND = {
    "schedule": None,
    "start_date": datetime(2015, 3, 1, tzinfo=UTC),
    "catchup": False,
    "max_active_runs": 4,
    "default_args": {"retries": 1, "retry_delay": timedelta(minutes=5)},
}


def documented(doc: str, *stages: str, extra: tuple[Parameter, ...] = ()) -> dict:
    """The ``params`` and ``doc_md`` of a DAG that runs ``stages``: their declared parameters
    (each name once), ``extra`` of the DAG's own, then the run's ``config``, ``data_root`` and
    ``set``, each with its declaration's JSON schema, default and help; and ``doc`` followed by
    the list of them."""
    declared = [p for stage in stages for p in PARAMETERS[stage]]
    found: dict[str, Param] = {}
    for p in (*declared, *extra, *RUN):
        found.setdefault(p.name, Param(p.default, description=p.described, **p.json_schema))
    listed = "\n".join(f"- `{name}`: {param.description}" for name, param in found.items())
    doc += f"\n\n**Params** (validated when the run is triggered):\n\n{listed}\n"
    return {"params": found, "doc_md": doc}


@task
def pools() -> None:
    """Fail at once when the pools this DAG uses were not made (``gdelt-forecast airflow
    init``); a DAG with pools runs this before everything else."""
    from gdelt_forecast.airflow_tasks import require_pools

    require_pools()


def day_tasks(days):
    """Per day of ``days`` (a task's list of ``YYYY-MM-DD``), one mapped group: ``normalize_day``,
    then ``fetch_day`` (pool ``article_fetch``: ``articles.fetch_days`` slots, each task
    keeping ``articles.concurrency`` connections open, every task under the same politeness
    per host), then ``process_day``. A day's tasks follow each other, not the other days':
    a day is processed as soon as it is fetched, while other days are still fetching.
    Returns the processed days."""

    @task
    def normalize_day(day: str) -> str:
        from gdelt_forecast.airflow_tasks import run_day

        return run_day("normalize", day)

    @task(pool="article_fetch")
    def fetch_day(day: str) -> str:
        from gdelt_forecast.airflow_tasks import run_day

        return run_day("fetch", day)

    @task
    def process_day(day: str) -> str:
        from gdelt_forecast.airflow_tasks import run_day

        return run_day("process", day)

    # No group prefix: the task ids stay those of the stages' days (the runs' records, the
    # month bench and the docs name them).
    @task_group(prefix_group_id=False)
    def one_day(day: str):
        return process_day(fetch_day(normalize_day(day)))

    return one_day.expand(day=days)
