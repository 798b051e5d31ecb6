"""
### Build a month's complex events, timelines, OpenForecast tasks and reasoning tasks

By hand, to build one month's timelines again, and what is made from them (`monthly_refresh`
builds them each month): `airflow dags trigger build_timelines_and_tasks --conf '{"month":
"2023-11"}'`. Groups the month's kept news (with its history) into complex events and writes
each one's timeline of atomic events, like `gdelt-forecast timelines --month`, into
`<data_root>/timelines/<month>/`; then every stage that reads them, since their records name
the timelines they were built from and a release refuses them once the timelines change: the
six tasks, like `gdelt-forecast tasks --month`, into `<data_root>/tasks/<month>/`, and EV2's
reasoning tasks, like `gdelt-forecast reasoning --month`, into
`<data_root>/reasoning/<month>/`.

Params: `gdelt-forecast timelines`'s options (`month` defaults to the month before the run;
`method` is the timelines' and the tasks', while `reasoning.method` is set with `set`). The
three tasks run in the pool `llm_server`, so runs of several months never flood the LLM
server together; **pools** first fails at once when `gdelt-forecast airflow init` has not
made it. A month without documents fails at once, naming the data root.
"""

from __future__ import annotations

from airflow.sdk import dag

from gdelt_forecast.orchestration.dags import BY_HAND, dag_params, documented, pools, stage_tasks
from gdelt_forecast.pipeline.stages import rebuilt

BUILT = rebuilt("timelines")  # the timelines, the tasks and the reasoning tasks
PARAMS = dag_params(*BUILT)


@dag(
    dag_id="build_timelines_and_tasks",
    **BY_HAND,
    **documented(__doc__, PARAMS),
    tags=["openforecast", "ev2", "timelines", "tasks", "reasoning"],
)
def build_timelines_and_tasks():
    stage_tasks(BUILT, PARAMS, upstream=pools())


build_timelines_and_tasks()
