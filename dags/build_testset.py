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

from airflow.sdk import dag

from gdelt_forecast.orchestration.dags import BY_HAND, dag_params, documented, stage_tasks
from gdelt_forecast.pipeline.stages import rebuilt

BUILT = rebuilt("testset")  # and nothing after it: the release is a new version
PARAMS = dag_params(*BUILT)


@dag(
    dag_id="build_testset",
    **BY_HAND,
    **documented(__doc__, PARAMS),
    tags=["mirai", "testset"],
)
def build_testset():
    stage_tasks(BUILT, PARAMS)


build_testset()
