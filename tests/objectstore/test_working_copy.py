"""Two machines (two local folders) on one bucket: what a pull brings, what a push sends
and deletes, and what neither touches."""

from __future__ import annotations

import os
import time

import pytest

from gdelt_forecast.ground.config import load_config
from gdelt_forecast.storage.bucket import StorageError, bucket
from gdelt_forecast.storage.working_copy import WorkingCopy, staged


def _copy(root: str, machine) -> WorkingCopy:
    cfg = load_config(None, [f"storage.local_dir={machine}"], root)
    return WorkingCopy(cfg, bucket(cfg))


def _write(path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    # Two writes within one mtime tick of a coarse file system would look unchanged.
    os.utime(path, ns=(time.time_ns(), time.time_ns()))


def test_a_file_travels_between_machines_and_so_does_its_deletion(bucket_url, tmp_path):
    a, b = _copy(bucket_url + "/root", tmp_path / "a"), _copy(bucket_url + "/root", tmp_path / "b")
    _write(a.path / "silver/events/date=2025-08-07/part-0.parquet", "v1")
    assert a.push() == 1
    assert b.pull(["silver"]) == 1
    assert (b.path / "silver/events/date=2025-08-07/part-0.parquet").read_text() == "v1"
    assert b.pull(["silver"]) == 0  # unchanged: nothing downloaded again

    _write(b.path / "silver/events/date=2025-08-07/part-0.parquet", "v2")
    assert b.push() == 1
    assert a.pull(["silver"]) == 1
    assert (a.path / "silver/events/date=2025-08-07/part-0.parquet").read_text() == "v2"

    (a.path / "silver/events/date=2025-08-07/part-0.parquet").unlink()
    assert a.push() == 1  # the deletion
    assert not a.bucket.listing("silver")
    b.pull(["silver"])
    assert not (b.path / "silver/events/date=2025-08-07/part-0.parquet").exists()


def test_a_pull_keeps_what_this_machine_changed_and_pulls_only_what_is_asked(bucket_url, tmp_path):
    a, b = _copy(bucket_url, tmp_path / "a"), _copy(bucket_url, tmp_path / "b")
    _write(a.path / "timelines/2025-08/timelines.parquet", "a's")
    _write(a.path / "tasks/2025-08/STF.parquet", "a's")
    a.push()
    b.pull(["timelines", "tasks"])
    _write(b.path / "timelines/2025-08/timelines.parquet", "b's, not pushed yet")
    _write(a.path / "timelines/2025-08/timelines.parquet", "a's second")
    a.push()
    b.pull(["timelines"])
    assert (b.path / "timelines/2025-08/timelines.parquet").read_text() == "b's, not pushed yet"

    c = _copy(bucket_url, tmp_path / "c")
    assert c.pull(["tasks/*/STF.parquet"]) == 1
    assert not (c.path / "timelines").exists()


def test_a_file_another_process_settles_during_a_push_is_not_an_error(bucket_url, tmp_path,
                                                                       monkeypatch):  # fmt: skip
    """Fetch runs side by side share a working copy: one folds its journal into the ledger and
    deletes it while another pushes (the month bench's failure before this was mended)."""
    a = _copy(bucket_url, tmp_path / "a")
    journal = a.path / "articles/fetch_journal/run-1.jsonl"
    _write(journal, '{"url": "x"}\n')
    _write(a.path / "articles/fetch_ledger.parquet", "ledger")
    real_listing = WorkingCopy._pushed_files

    def settled_meanwhile(copy, only):
        found = real_listing(copy, only)
        journal.unlink(missing_ok=True)  # the other run settles between listing and upload
        return found

    monkeypatch.setattr(WorkingCopy, "_pushed_files", settled_meanwhile)
    assert a.push() == 1
    assert set(a.bucket.listing("articles")) == {"articles/fetch_ledger.parquet"}


def test_a_refreshed_ledger_is_never_missing_or_half_there(bucket_url, tmp_path, monkeypatch):
    """A fetch reads the ledger without the lock while another refreshes it: the old file
    stays whole until the new one is renamed over it."""
    a, b = _copy(bucket_url, tmp_path / "a"), _copy(bucket_url, tmp_path / "b")
    ledger = "articles/fetch_ledger.parquet"
    _write(a.path / ledger, "v1")
    a.push()
    b.pull(["articles"])
    _write(a.path / ledger, "v2, longer")
    a.push()
    seen = []
    real_get = b.bucket.fs.get

    def get(rpath, lpath, *args, **kwargs):
        seen.append((b.path / ledger).read_text())  # what a reader sees mid-download
        return real_get(rpath, lpath, *args, **kwargs)

    monkeypatch.setattr(b.bucket.fs, "get", get)
    b.refresh(ledger)
    assert seen == ["v1"] and (b.path / ledger).read_text() == "v2, longer"
    assert not list((b.path / "articles").glob(".*.pull"))


def test_local_only_files_never_reach_the_bucket(bucket_url, tmp_path):
    a = _copy(bucket_url, tmp_path / "a")
    for rel in [
        "warehouse.duckdb",
        "tmp/duckdb/spill.bin",
        "locks/testset-2025-08.lock",
        "bronze/slots.parquet.lock",
        "bronze/.slots.parquet.x.tmp",
        "releases/2025.08.0/manifest.json",
        "bronze/slots.parquet",
    ]:
        _write(a.path / rel, "x")
    assert a.push() == 1
    assert list(a.bucket.listing()) == ["bronze/slots.parquet"]


def test_a_stage_that_fails_still_pushes_its_finished_files(bucket_url, tmp_path):
    cfg = load_config(None, [f"storage.local_dir={tmp_path}"], bucket_url)
    with pytest.raises(RuntimeError), staged(cfg, []) as local:
        _write(local.data_root / "bronze/events/date=2025-08-07/20250807220000.parquet", "x")
        raise RuntimeError("the stage fails after one slot")
    assert list(bucket(cfg).listing()) == ["bronze/events/date=2025-08-07/20250807220000.parquet"]


def test_an_unreachable_endpoint_is_one_clear_error(tmp_path, s3_endpoint, monkeypatch):
    import socket

    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    cfg = load_config(None, [f"storage.endpoint_url=http://127.0.0.1:{port}"], "s3://gdelt-data")
    with pytest.raises(StorageError, match=f"bucket gdelt-data at http://127.0.0.1:{port}: "):
        bucket(cfg)
