"""
### Build a month's test set

By hand, to build one month's test set again (`monthly_refresh` builds it each month):
`airflow dags trigger build_testset --conf '{"month": "2023-11"}'`. Builds the month's
MIRAI relation queries, the balanced subset and the `mirai_compat/` files from
`warehouse.duckdb`, like `gdelt-forecast testset --month`, into
`<data_root>/testset/<month>/`.

Params (validated): `month` (`YYYY-MM`; default: the month before the run), `horizons`
(days, each at least 1), `subset_size`, `seed`; and `config`, `data_root`, `set` as on the
command line. A query whose history could reach past its cutoff fails the run.

Runs for different months run side by side (up to 4); a lock per month under
`<data_root>/locks/` makes two runs of one month take turns. An error no retry can mend (a
relative data root, no warehouse, a month without queries) fails the run at once, naming
the data root; other errors are retried once.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import Param, dag, task

from gdelt_forecast.dag_shared import MONTH, RUN


@dag(
    dag_id="build_testset",
    schedule=None,  # monthly_refresh builds each month once; this re-runs one stage
    start_date=datetime(2015, 3, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=4,
    params={
        **MONTH,
        "horizons": Param(
            None, type=["null", "array"], items={"type": "integer", "minimum": 1}, minItems=1
        ),
        "subset_size": Param(None, type=["null", "integer"], minimum=1),
        "seed": Param(None, type=["null", "integer"]),
        **RUN,
    },
    default_args={"retries": 1, "retry_delay": timedelta(minutes=5)},
    doc_md=__doc__,
    tags=["mirai", "testset"],
)
def build_testset():
    @task
    def build() -> dict:
        # Imported here: the DAG processor parses this file often, and must stay light.
        from gdelt_forecast.airflow_tasks import param_overrides, run_month, run_stage

        overrides = param_overrides("testset", ("horizons", "subset_size", "seed"))
        return run_stage("testset", run_month(), overrides=overrides)

    build()


build_testset()
