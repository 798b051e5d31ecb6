"""Locks in the bucket: one holder at a time across machines, renewed while held (also across
a restart of the S3 server), taken over once a crashed holder's lease has expired or at once
when the holder was a process of this host that is gone; and a shared ledger updated from two
machines at once keeps both machines' rows."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time

import s3fs

from bench.harness import servers as local_servers
from gdelt_forecast.gdelt import ledger
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.storage.bucket import bucket
from gdelt_forecast.storage.leases import bucket_lock
from gdelt_forecast.storage.locks import month_lock
from gdelt_forecast.storage.working_copy import staged


def _cfg(root: str, machine, ttl: float = 600.0):
    return load_config(None, [f"storage.local_dir={machine}", f"storage.lock_ttl_s={ttl}"], root)


def test_a_month_lock_admits_one_machine_at_a_time(bucket_url, tmp_path):
    events: list[str] = []
    entered = threading.Event()  # b asks only once a holds the lock, however busy the machine

    def hold(machine: str, seconds: float) -> None:
        with (
            staged(_cfg(bucket_url, tmp_path / machine), []) as local,
            month_lock(local, "testset", "2025-08"),
        ):
            events.append(f"{machine} in")
            entered.set()
            time.sleep(seconds)
            events.append(f"{machine} out")

    first = threading.Thread(target=hold, args=("a", 1.0))
    first.start()
    assert entered.wait(60)
    hold("b", 0)
    first.join()
    assert events == ["a in", "a out", "b in", "b out"]
    assert not bucket(_cfg(bucket_url, tmp_path / "a")).listing("locks")  # released


def test_a_held_lock_is_renewed_and_an_expired_one_taken_over(bucket_url, tmp_path, caplog):
    store = bucket(_cfg(bucket_url, tmp_path))
    acquired = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with bucket_lock(store, "release-2025-08", ttl_s=0.6):
            acquired.set()
            release.wait()

    thread = threading.Thread(target=holder)
    thread.start()
    acquired.wait()
    time.sleep(1.5)  # two and a half leases: only renewal keeps it
    lease = json.loads(store.fs.cat_file(store.key("locks/release-2025-08.lock")))
    assert lease["expires"] > time.time()
    waited = threading.Event()

    def contender() -> None:
        with bucket_lock(store, "release-2025-08", ttl_s=0.6):
            waited.set()

    second = threading.Thread(target=contender)
    second.start()
    time.sleep(0.8)
    assert not waited.is_set()  # the renewed lease holds it off
    release.set()
    thread.join()
    second.join(timeout=10)
    assert waited.is_set()

    # A crashed holder's lease: left in the bucket, expired an hour ago.
    crashed = json.dumps({"owner": "gone:1:1", "expires": time.time() - 3600})
    store.fs.pipe_file(store.key("locks/normalize-2025-08-07.lock"), crashed.encode())
    t0 = time.monotonic()
    with bucket_lock(store, "normalize-2025-08-07", ttl_s=60):
        assert time.monotonic() - t0 < 5
    assert "taking over from gone:1:1" in caplog.text


def test_two_machines_updating_the_ledger_at_once_keep_all_rows(bucket_url, tmp_path):
    def rows(machine: str) -> list[dict]:
        return [
            {
                "slot": f"2025080722{15 * i:02d}00",
                "stream": "english",
                "table": machine,
                "url": f"http://x/{machine}/{i}",
                "size": 1,
                "md5": "m",
                "status": "ingested",
                "rows": 1,
                "rejected": 0,
                "partitions": ["2025-08-07"],
                "detail": "",
            }
            for i in range(3)
        ]

    def ingest_like(machine: str) -> None:
        with staged(_cfg(bucket_url, tmp_path / machine), ["bronze/slots.parquet"]) as local:
            for row in rows(machine):  # one update per slot, as the stage records them
                ledger.update(local.data_root / "bronze" / "slots.parquet", [row])

    threads = [threading.Thread(target=ingest_like, args=(m,)) for m in ("export", "mentions")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    reader = tmp_path / "reader"
    with staged(_cfg(bucket_url, reader), ["bronze/slots.parquet"]) as local:
        book = ledger.read(local.data_root / "bronze" / "slots.parquet")
    assert sorted(book) == sorted(
        (row["slot"], row["stream"], row["table"])
        for m in ("export", "mentions")
        for row in rows(m)
    )


def test_a_dead_holder_of_this_host_is_taken_over_at_once(bucket_url, tmp_path, caplog):
    store = bucket(_cfg(bucket_url, tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # its pid names no process now
    key = store.key("locks/fetch-2025-08-01.lock")
    lease = {"owner": f"{socket.gethostname()}:{dead.pid}:1", "expires": time.time() + 600}
    store.fs.pipe_file(key, json.dumps(lease).encode())
    t0 = time.monotonic()
    with bucket_lock(store, "fetch-2025-08-01", ttl_s=600):
        assert time.monotonic() - t0 < 5  # not the 600 s of its lease
    assert "a process of this host that no longer runs" in caplog.text

    # A live holder of this host (this process) and one of another host are waited for.
    for owner in (f"{socket.gethostname()}:{os.getpid()}:1", f"elsewhere:{dead.pid}:1"):
        lease = {"owner": owner, "expires": time.time() + 600}
        store.fs.pipe_file(key, json.dumps(lease).encode())
        got = threading.Event()

        def contender(got: threading.Event = got) -> None:
            with bucket_lock(store, "fetch-2025-08-01", ttl_s=600):
                got.set()

        thread = threading.Thread(target=contender, daemon=True)
        thread.start()
        time.sleep(2.5)
        assert not got.is_set(), owner
        store.fs.rm_file(key)  # the holder releases it
        thread.join(timeout=10)
        assert got.is_set()


def test_a_held_lock_is_renewed_across_a_restart_of_the_bucket(
    s3_endpoint, tmp_path, caplog, monkeypatch
):
    # botocore's own retries would hide a short outage from the lock: a renewal must fail.
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    with local_servers.S3Server(tmp_path / "s3") as server:
        overrides = [f"storage.local_dir={tmp_path}", f"storage.endpoint_url={server.url}"]
        cfg = load_config(None, overrides, "s3://restarted/data")
        s3fs.S3FileSystem(skip_instance_cache=True, endpoint_url=server.url).mkdir("restarted")
        store = bucket(cfg)
        key = store.key("locks/testset-2025-08.lock")
        release = threading.Event()
        acquired = threading.Event()

        def holder() -> None:
            with bucket_lock(store, "testset-2025-08", ttl_s=9):  # renewed every 3 s
                acquired.set()
                release.wait()

        thread = threading.Thread(target=holder)
        thread.start()
        acquired.wait()
        server.restart(down_s=4)  # a renewal falls in the outage
        time.sleep(4)
        lease = json.loads(store.fs.cat_file(key))
        assert lease["expires"] > time.time() + 5  # renewed after the restart
        assert "could not renew" in caplog.text and "trying again" in caplog.text
        release.set()
        thread.join()
        assert not store.listing("locks")
