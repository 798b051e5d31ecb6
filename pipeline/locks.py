"""Locks that keep two runs of the same partition apart while other partitions run alongside.

A lock is a file under ``<data_root>/locks/``, so it holds across processes and Airflow
workers that share the data root (not across machines without a shared file system).
"""

from __future__ import annotations

import re

from filelock import FileLock

from pipeline.config import Config
from pipeline.errors import StageError

# A partition names a file: a day or a month, never a path.
_PARTITION = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]*")
_MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])")


class LockError(StageError):
    """A lock asked for by a name that cannot name a file."""


def partition_lock(cfg: Config, stage: str, partition: str) -> FileLock:
    """The lock on one stage's partition: ``<data_root>/locks/<stage>-<partition>.lock``.
    Use it as a context manager; a second holder waits until the first releases it."""
    for value in (stage, partition):
        if not _PARTITION.fullmatch(value):
            raise LockError(f"lock: {value!r} is not a stage or partition name")
    folder = cfg.data_root / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    return FileLock(folder / f"{stage}-{partition}.lock")


def month_lock(cfg: Config, stage: str, month: str) -> FileLock:
    """The lock on one stage's month (``YYYY-MM``), e.g. ``with month_lock(cfg, "testset",
    month):`` around a month's test set, so two runs of one month never write it at once."""
    if not _MONTH.fullmatch(month):
        raise LockError(f"lock: month {month!r} is not YYYY-MM")
    return partition_lock(cfg, stage, month)
