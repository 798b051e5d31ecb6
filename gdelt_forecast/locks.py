"""Locks that keep two runs of the same partition apart while other partitions run alongside.

On a local data root a lock is a file under ``<data_root>/locks/``, so it holds across the
processes and Airflow workers that share the disk. On an s3:// data root it is an object
under the bucket's ``locks/``, created only if absent (S3's conditional ``If-None-Match``
write, which AWS, MinIO and moto honour), so it holds across machines; its holder renews it
while it works (through a short outage of the bucket too), and one left by a crashed holder
expires after ``storage.lock_ttl_s``, or is taken over at once when its holder was a process
of this host that no longer runs.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock

from gdelt_forecast.config import Config
from gdelt_forecast.data_root import DataRoot
from gdelt_forecast.errors import StageError
from gdelt_forecast.objectstore import Bucket, working_copy_of

log = logging.getLogger(__name__)

# A partition names a file: a day or a month, never a path.
_PARTITION = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]*")
_MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])")
_POLL_S = 1.0
_RETRY_S = 2.0  # between tries of a renewal that failed


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


@contextmanager
def shared_file(path: Path) -> Iterator[None]:
    """Around a read-modify-write of a file every run shares (a ledger): on a local disk its
    ``.lock`` file; in a working copy a bucket lock, with the file pulled fresh first and
    pushed before the lock is let go, so no machine's rows overwrite another's."""
    found = working_copy_of(path)
    if not found:
        with FileLock(f"{path}.lock"):
            yield
        return
    copy, rel = found
    with bucket_lock(copy.bucket, rel.replace("/", "-"), copy.ttl_s):
        copy.refresh(rel)
        yield
        copy.push(rel)


@contextmanager
def bucket_lock(store: Bucket, name: str, ttl_s: float) -> Iterator[None]:
    """Hold ``locks/<name>.lock`` in the bucket: wait while another holder's lease is live,
    take over one that expired, renew ours every third of ``ttl_s`` until released."""
    from fsspec.asyn import sync

    key = store.key(f"locks/{name}.lock")
    bucket_name, _, object_key = key.partition("/")
    owner = f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"

    def call(method: str, **kwargs):
        return sync(
            store.fs.loop, store.fs._call_s3, method, Bucket=bucket_name, Key=object_key, **kwargs
        )

    def lease() -> bytes:
        return json.dumps({"owner": owner, "expires": time.time() + ttl_s}).encode()

    waited = False
    while True:
        try:
            etag = call("put_object", Body=lease(), IfNoneMatch="*")["ETag"]
            break
        except (FileExistsError, OSError) as exc:
            if not _precondition(exc):
                raise
        try:
            held_etag, holder = sync(store.fs.loop, _read_lease, store, bucket_name, object_key)
        except FileNotFoundError:
            continue  # released meanwhile
        expired = holder.get("expires", 0) < time.time()
        if expired or _gone(holder.get("owner")):
            log.warning(
                "lock %s: taking over from %s, %s",
                name,
                holder.get("owner"),
                f"whose lease expired at {_when(holder.get('expires', 0))}"
                if expired
                else "a process of this host that no longer runs",
            )
            with suppress(OSError):  # someone else took it over first: wait for them
                call("delete_object", IfMatch=held_etag)
            continue
        if not waited:
            log.info("lock %s: waiting for %s", name, holder.get("owner"))
            waited = True
        time.sleep(_POLL_S)

    current = {"etag": etag}
    stop = threading.Event()

    def renew() -> None:
        # A renewal that fails because the bucket is away for a while (a restart) is tried
        # again until our lease would run out; one refused because another holder took over
        # ends the renewals.
        from botocore.exceptions import BotoCoreError

        expires, wait = time.time() + ttl_s, ttl_s / 3
        while not stop.wait(wait):
            try:
                current["etag"] = call("put_object", Body=lease(), IfMatch=current["etag"])["ETag"]
                expires, wait = time.time() + ttl_s, ttl_s / 3
            except (OSError, BotoCoreError) as exc:
                if _precondition(exc) or time.time() + _RETRY_S >= expires:
                    log.error("lock %s: could not renew (%s); another run may take it", name, exc)
                    return
                log.warning("lock %s: could not renew (%s); trying again", name, exc)
                wait = _RETRY_S

    renewer = threading.Thread(target=renew, name=f"lock-{name}", daemon=True)
    renewer.start()
    try:
        yield
    finally:
        stop.set()
        renewer.join()
        try:
            call("delete_object", IfMatch=current["etag"])
        except (FileNotFoundError, OSError) as exc:
            log.warning("lock %s: not ours any more at release (%s)", name, exc)


async def _read_lease(store: Bucket, bucket_name: str, object_key: str) -> tuple[str, dict]:
    """The lease's ETag and body from one GET, so a takeover deletes only what it read."""
    out = await store.fs._call_s3("get_object", Bucket=bucket_name, Key=object_key)
    async with out["Body"] as body:
        data = await body.read()
    try:
        return out["ETag"], json.loads(data)
    except ValueError:
        return out["ETag"], {}  # not ours to read: treat as expired


def _gone(owner: str | None) -> bool:
    """Whether a lease's ``owner`` (``host:pid:thread``) is a process of this host that no
    longer runs (a SIGKILLed task): its lease need not be waited out. A pid reused since only
    makes us wait for the lease to expire."""
    host, _, rest = (owner or "").partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # alive, another user's
    return False


def _precondition(exc: Exception) -> bool:
    return isinstance(exc, FileExistsError) or "pre-condition" in str(exc)


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")
