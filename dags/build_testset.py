"""
### Build a month's test set

By hand, to build one month's test set again (`monthly_refresh` builds it each month):
`airflow dags trigger build_testset --conf '{"month": "2023-11"}'`. Builds the month's
MIRAI relation queries, the balanced subset and the `mirai_compat/` files from
`warehouse.duckdb`, like `gdelt-forecast testset --month`, into
`<data_root>/testset/<month>/`.

Params: `gdelt-forecast testset`'s options (`month` defaults to the month before the run).
A query whose history could reach past its cutoff fails the run.

Runs for different months run side by side (up to 4); a lock per month under
`<data_root>/locks/` makes two runs of one month take turns. An error no retry can mend (a
relative data root, no warehouse, a month without queries) fails the run at once, naming
the data root; other errors are retried once.
"""

from __future__ import annotations

from airflow.sdk import dag, task

from gdelt_forecast.dag_shared import BY_HAND, documented


@dag(
    dag_id="build_testset",
    **BY_HAND,
    **documented(__doc__, "testset"),
    tags=["mirai", "testset"],
)
def build_testset():
    @task
    def build() -> dict:
        # Imported here: the DAG processor parses this file often, and must stay light.
        from gdelt_forecast.airflow_tasks import run_month, run_stage

        return run_stage("testset", run_month())

    build()


build_testset()
