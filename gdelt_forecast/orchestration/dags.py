"""What the DAGs in ``dags/`` share, made from the stages' declarations
(:data:`gdelt_forecast.pipeline.stages.STAGES`): their params and the doc listing them
(:func:`dag_params`, :func:`documented`), a task per stage with its pool and its place after
the stages it reads (:func:`stage_tasks`), the per-day tasks (:func:`day_tasks`), the schedule
of a DAG run by hand (:data:`BY_HAND`) and the check that the pools exist (:func:`pools`).

The DAG files import this module while Airflow parses them, so it imports nothing but
Airflow's SDK and the declarations (the standard library's): parsing stays light, and the
stages are imported inside the tasks only."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta

from airflow.sdk import Param, task, task_group

from gdelt_forecast.pipeline.parameters import RUN, Parameter
from gdelt_forecast.pipeline.stages import STAGES

# A DAG that builds one month's stages again by hand (monthly_refresh builds each month once):
# no schedule, runs of up to four months side by side, one retry.
BY_HAND = {
    "schedule": None,
    "start_date": datetime(2015, 3, 1, tzinfo=UTC),
    "catchup": False,
    "max_active_runs": 4,
    "default_args": {"retries": 1, "retry_delay": timedelta(minutes=5)},
}


def dag_params(*stages: str, extra: tuple[Parameter, ...] = ()) -> dict[str, Parameter]:
    """The params of a DAG that runs ``stages``: their declared parameters, ``extra`` of the
    DAG's own, then the run's ``config``, ``data_root`` and ``set``. Where two stages declare
    a parameter of one name, the first stage's is the DAG's, and the other stage takes none
    of it (``method`` is the timelines' where they and ``reasoning`` run together)."""
    found: dict[str, Parameter] = {}
    for p in (*(p for stage in stages for p in STAGES[stage].parameters), *extra, *RUN):
        found.setdefault(p.name, p)
    return found


def documented(doc: str, params: Mapping[str, Parameter]) -> dict:
    """The ``params`` and ``doc_md`` of a DAG: each param with its declaration's JSON schema,
    default and help, and ``doc`` followed by the list of them."""
    found = {
        name: Param(p.default, description=p.described, **p.json_schema)
        for name, p in params.items()
    }
    listed = "\n".join(f"- `{name}`: {param.description}" for name, param in found.items())
    doc += f"\n\n**Params** (validated when the run is triggered):\n\n{listed}\n"
    return {"params": found, "doc_md": doc}


@task
def pools() -> None:
    """Fail at once when the pools this DAG uses were not made (``gdelt-forecast airflow
    init``); a DAG with pools runs this before everything else."""
    from gdelt_forecast.orchestration.tasks import require_pools

    require_pools()


def stage_tasks(names: Iterable[str], params: Mapping[str, Parameter], upstream=None) -> dict:
    """A task per stage of ``names`` (its id the stage's name, in its declared pool), each
    after those of the stages it reads among them, else after ``upstream``; the tasks by
    name. A task passes the stage the run's params that are its own (``params``' of its
    declared parameters)."""
    made: dict = {}
    for name in names:
        stage = STAGES[name]
        taken = tuple(p.name for p in stage.parameters if params.get(p.name) is p)
        made[name] = _stage_task(name, taken, stage.pool)
        before = [made[a] for a in stage.after if a in made]
        if before or upstream is not None:
            (before or upstream) >> made[name]
    return made


def _stage_task(name: str, taken: tuple[str, ...], pool: str | None):
    # The id and pool set here (None: Airflow's default pool); the task imports the stages
    # when it runs.
    @task(task_id=name, pool=pool)
    def stage() -> dict:
        from gdelt_forecast.orchestration.tasks import run_declared

        return run_declared(name, taken)

    return stage()


def day_tasks(days):
    """Per day of ``days`` (a task's list of ``YYYY-MM-DD``), one mapped group of the day
    stages in their declared order: ``normalize_day``, then ``fetch_day`` (pool
    ``article_fetch``: ``articles.fetch_days`` slots, each task keeping
    ``articles.concurrency`` connections open, every task under the same politeness per
    host), then ``process_day``. A day's tasks follow each other, not the other days': a day
    is processed as soon as it is fetched, while other days are still fetching. Returns the
    processed days."""
    steps = [_day_task(s.name, s.pool) for s in STAGES.values() if s.partition == "day"]

    # No group prefix: the task ids stay those of the stages' days (the runs' records, the
    # month bench and the docs name them).
    @task_group(prefix_group_id=False)
    def one_day(day: str):
        for step in steps:
            day = step(day)
        return day

    return one_day.expand(day=days)


def _day_task(name: str, pool: str | None):
    @task(task_id=f"{name}_day", pool=pool)
    def one(day: str) -> str:
        from gdelt_forecast.orchestration.tasks import run_day

        return run_day(name, day)

    return one
