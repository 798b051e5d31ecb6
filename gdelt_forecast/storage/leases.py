"""A lease on an object of a bucket, held across machines: created only if absent (S3's
conditional ``If-None-Match`` write, which AWS, MinIO and moto honour), renewed by its
holder while it works (through a short outage of the bucket too), taken over when it expired
or its holder was a process of this host that no longer runs. :mod:`gdelt_forecast.storage.locks`
makes a partition's lock of it, :func:`gdelt_forecast.storage.working_copy.shared_file` a
shared file's, and the release's publisher the releases' index's. The conditional writes are
the bucket's (:class:`gdelt_forecast.storage.bucket.Bucket`).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime

from gdelt_forecast.storage.bucket import Bucket

log = logging.getLogger(__name__)

_POLL_S = 1.0
_RETRY_S = 2.0  # between tries of a renewal that failed


@contextmanager
def bucket_lock(store: Bucket, name: str, ttl_s: float) -> Iterator[None]:
    """Hold ``locks/<name>.lock`` in the bucket: wait while another holder's lease is live,
    take over one that expired, renew ours every third of ``ttl_s`` until released."""
    rel = f"locks/{name}.lock"
    owner = f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"

    def lease() -> bytes:
        return json.dumps({"owner": owner, "expires": time.time() + ttl_s}).encode()

    waited = False
    while True:
        try:
            etag = store.create(rel, lease())
            break
        except FileExistsError:
            pass
        try:
            held_etag, holder = _lease(store, rel)
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
                store.delete(rel, held_etag)
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
                current["etag"] = store.replace(rel, lease(), current["etag"])
                expires, wait = time.time() + ttl_s, ttl_s / 3
            except (OSError, BotoCoreError) as exc:
                if isinstance(exc, FileExistsError) or time.time() + _RETRY_S >= expires:
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
            store.delete(rel, current["etag"])
        except (FileNotFoundError, OSError) as exc:
            log.warning("lock %s: not ours any more at release (%s)", name, exc)


def _lease(store: Bucket, rel: str) -> tuple[str, dict]:
    """The lease's ETag and holder from one read, so a takeover deletes only what it read."""
    etag, data = store.read(rel)
    try:
        return etag, json.loads(data)
    except ValueError:
        return etag, {}  # not ours to read: treat as expired


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


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")
