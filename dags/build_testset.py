"""
### Build a month's test set

Monthly (on the 1st, for the month before) or by hand:
`airflow dags trigger build_testset --conf '{"month": "2023-11"}'`. Builds the month's
MIRAI relation queries, the balanced subset and the `mirai_compat/` files from
`warehouse.duckdb`, like `gdelt-forecast testset --month`, into
`<data_root>/testset/<month>/`.

Params (validated): `month` (`YYYY-MM`; default: the month before the run), `horizons`
(days, each at least 1), `subset_size`, `seed`; and `config`, `data_root`, `set` as on the
command line. A query whose history could reach past its cutoff fails the run.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import CronTriggerTimetable, Param, dag, get_current_context, task


@dag(
    dag_id="build_testset",
    schedule=CronTriggerTimetable("0 6 1 * *", timezone="UTC"),
    start_date=datetime(2015, 3, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    params={
        "month": Param(None, type=["null", "string"], pattern=r"^\d{4}-(0[1-9]|1[0-2])$"),
        "horizons": Param(
            None, type=["null", "array"], items={"type": "integer", "minimum": 1}, minItems=1
        ),
        "subset_size": Param(None, type=["null", "integer"], minimum=1),
        "seed": Param(None, type=["null", "integer"]),
        "config": Param(None, type=["null", "string"], description="YAML config file"),
        "data_root": Param(None, type=["null", "string"], description="data root override"),
        "set": Param([], type="array", description="section.key=value overrides"),
    },
    default_args={"retries": 1, "retry_delay": timedelta(minutes=5)},
    doc_md=__doc__,
    tags=["mirai", "testset"],
)
def build_testset():
    @task
    def build() -> dict:
        from pipeline.config import from_dag_params
        from pipeline.testset.build import build_testset as build_month

        ctx = get_current_context()
        params = dict(ctx["params"])
        month = params["month"]
        if not month:
            month_start = ctx["logical_date"].replace(day=1)
            month = (month_start - timedelta(days=1)).strftime("%Y-%m")
        overrides = list(params["set"] or [])
        for key in ("horizons", "subset_size", "seed"):
            if params[key] is not None:
                overrides.append(f"testset.{key}={params[key]}")
        summary = build_month(from_dag_params({**params, "set": overrides}), month)
        print(summary.line())
        return summary.to_dict()

    build()


build_testset()
