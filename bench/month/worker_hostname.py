"""The name Airflow records as the ``hostname`` of the tasks a bench's Celery worker ran
(``[core] hostname_callable = bench.month.worker_hostname.hostname``): the workers of
bench/month/cluster.py share one machine, and this tells them apart."""

import os


def hostname() -> str:
    return os.environ["GDELT_BENCH_WORKER"]
