"""What the DAGs in ``dags/`` share, defined once: the params (the run's ``config``,
``data_root`` and ``set`` overrides, as on the command line, the ``month`` of the monthly
ones, the release's ``history_start``), the check that the pools exist (:func:`pools`) and
the per-day tasks (:func:`day_tasks`).

The DAG files import this module while Airflow parses them, so it imports nothing but
Airflow's SDK (the package's ``__init__`` is a docstring and a version): parsing stays
light, and the stages are imported inside the tasks only."""

from __future__ import annotations

from airflow.sdk import Param, task, task_group

RUN = {
    "config": Param(None, type=["null", "string"], description="YAML config file"),
    "data_root": Param(None, type=["null", "string"], description="data root override"),
    "set": Param([], type="array", description="section.key=value overrides"),
}
MONTH = {
    "month": Param(None, type=["null", "string"], pattern=r"^\d{4}-(0[1-9]|1[0-2])$"),
}
HISTORY = {  # the release's history start; the month's timelines read no document before it
    "history_start": Param(None, type=["null", "string"], format="date"),
}


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
