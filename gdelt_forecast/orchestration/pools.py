"""The Airflow pools the DAGs run in, defined once, and ``gdelt-forecast airflow init``, which
migrates Airflow's database and creates them (the tests and ``docker/compose.yaml`` use it).

A task whose pool does not exist waits in ``scheduled`` for ever, with nothing but a
scheduler warning to say why, so the pools are made by the one command docs/airflow.md names,
and every DAG that uses them starts with a task that fails at once, naming the pools, when
they were not made (:func:`gdelt_forecast.orchestration.tasks.require_pools`). That task cannot
list Airflow's pools (Airflow 3 keeps task code out of its database), so ``init`` leaves
the Variable ``MARK``, the pools it made, which a task may read. The DAG files name their
pools as strings (importing this package while Airflow parses them would make parsing
heavy); ``tests/dags`` keeps them within ``POOLS``.
"""

from __future__ import annotations

import json

from gdelt_forecast.ground.config import Config
from gdelt_forecast.orchestration.airflow_cli import airflow

POOLS = {  # name -> description
    "warehouse_writer": "one writer to warehouse.duckdb",
    "article_fetch": "days fetched at once (articles.fetch_days), under one politeness",
    "llm_server": "one month's LLM work at a time",
}
MARK = "gdelt_forecast_pools"  # the Variable init leaves: the names of the pools it made


def slots(cfg: Config) -> dict[str, int]:
    """Each pool's slots: one but for the days fetched at once."""
    return {name: 1 for name in POOLS} | {"article_fetch": cfg.articles.fetch_days}


def init(cfg: Config) -> list[str]:
    """Migrate Airflow's database, create (or reset) every pool with ``slots(cfg)``, leave
    ``MARK`` and store the DAGs of Airflow's DAGs folder (so that they can be unpaused and
    triggered before the DAG processor has parsed them); one line per step."""
    steps = [["db", "migrate"]]
    steps += [["pools", "set", name, str(n), POOLS[name]] for name, n in slots(cfg).items()]
    steps += [["variables", "set", MARK, json.dumps(sorted(POOLS))], ["dags", "reserialize"]]
    done = []
    for step in steps:
        airflow(*step)
        done.append(f"airflow {' '.join(step[:4])}: done")
    return done
