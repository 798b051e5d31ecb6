"""Locks that keep two runs of the same partition apart while other partitions run alongside.

On a local data root a lock is a file under ``<data_root>/locks/``, so it holds across the
processes and Airflow workers that share the disk. On an s3:// data root it is a lease on an
object under the bucket's ``locks/`` (:mod:`gdelt_forecast.storage.leases`), so it holds across
machines; one left by a crashed holder expires after ``storage.lock_ttl_s``.
"""

from __future__ import annotations

import re
from contextlib import AbstractContextManager

from filelock import FileLock

from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.storage.leases import bucket_lock
from gdelt_forecast.storage.working_copy import working_copy_of

# A partition names a file: a day or a month, never a path.
_PARTITION = re.compile(r"[0-9A-Za-z][0-9A-Za-z._-]*")  # a round's id may hold dots
_MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])")


class LockError(StageError):
    """A lock asked for by a name that cannot name a file."""


def partition_lock(cfg: Config, stage: str, partition: str) -> AbstractContextManager:
    """The lock on one stage's partition, ``locks/<stage>-<partition>.lock`` in the data root.
    Use it as a context manager; a second holder waits until the first releases it."""
    for value in (stage, partition):
        if not _PARTITION.fullmatch(value):
            raise LockError(f"lock: {value!r} is not a stage or partition name")
    copy = working_copy_of(cfg.data_root)
    if copy:
        return bucket_lock(copy[0].bucket, f"{stage}-{partition}", copy[0].ttl_s)
    folder = DataRoot(cfg.data_root).locks
    folder.mkdir(parents=True, exist_ok=True)
    return FileLock(folder / f"{stage}-{partition}.lock")


def month_lock(cfg: Config, stage: str, month: str) -> AbstractContextManager:
    """The lock on one stage's month (``YYYY-MM``), e.g. ``with month_lock(cfg, "testset",
    month):`` around a month's test set, so two runs of one month never write it at once."""
    if not _MONTH.fullmatch(month):
        raise LockError(f"lock: month {month!r} is not YYYY-MM")
    return partition_lock(cfg, stage, month)
