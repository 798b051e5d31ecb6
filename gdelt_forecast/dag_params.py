"""The params the DAGs in ``dags/`` share, defined once: the run's ``config``, ``data_root``
and ``set`` overrides, as on the command line, and the ``month`` of the monthly ones.

The DAG files import this module while Airflow parses them, so it imports nothing but
Airflow's ``Param`` (the package's ``__init__`` is a docstring and a version): parsing stays
light, and the stages are imported inside the tasks only."""

from __future__ import annotations

from airflow.sdk import Param

RUN = {
    "config": Param(None, type=["null", "string"], description="YAML config file"),
    "data_root": Param(None, type=["null", "string"], description="data root override"),
    "set": Param([], type="array", description="section.key=value overrides"),
}
MONTH = {
    "month": Param(None, type=["null", "string"], pattern=r"^\d{4}-(0[1-9]|1[0-2])$"),
}
