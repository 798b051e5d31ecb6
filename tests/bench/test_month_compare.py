"""bench/month/run.py's byte-identity of two runs of one month (issue 35): a serial run and a
parallel one differ in where and how they ran (the bench's scratch folder, the Redis port,
how many days fetched at once), never in what they built; the news web listens where it is
told and the mirror lies where it is told, so both runs' URLs, and so their releases, can
be the same."""

from __future__ import annotations

import copy
import json
import socket
from pathlib import Path

import pytest

from bench.month import news_web
from bench.month import run as bench_month

MANIFEST = {
    "created": "2026-11-27T14:11:43Z",
    "config": {
        "data_root": "s3://bench/data",
        "gdelt": {"base_url": "file:///tmp/parallel/mirror", "tables": ["export", "mentions"]},
        "articles": {
            "politeness_store": "redis://127.0.0.1:6001/1",
            "fetch_days": 8,
            "per_host_delay_s": 1.0,
        },
        "storage": {"local_dir": "/tmp/parallel/scratch"},
    },
    "stages": {"fetch": {"config_sha256": "aa", "inputs": {"events": "11"}}},
}


def _release(folder: Path, manifest: dict, events: bytes = b"events") -> Path:
    folder.mkdir(parents=True)
    (folder / "events.parquet").write_bytes(events)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def test_two_runs_differing_only_in_where_and_how_they_ran_are_identical(tmp_path):
    serial = copy.deepcopy(MANIFEST)
    serial["created"] = "2026-11-28T09:00:00Z"
    serial["config"]["articles"] |= {"politeness_store": "redis://127.0.0.1:7002/1",
                                     "fetch_days": 1}  # fmt: skip
    serial["config"]["storage"]["local_dir"] = "/tmp/serial/scratch"
    serial["stages"]["fetch"]["config_sha256"] = "bb"
    parallel = _release(tmp_path / "parallel", MANIFEST)
    same = bench_month.identical(_release(tmp_path / "serial", serial), parallel)
    assert same == {"ok": True, "files": 1, "differ": []}


def test_a_different_setting_of_what_was_built_or_a_different_file_is_not(tmp_path):
    reference = _release(tmp_path / "ref", MANIFEST)
    slower = copy.deepcopy(MANIFEST)
    slower["config"]["articles"]["per_host_delay_s"] = 2.0
    assert bench_month.identical(_release(tmp_path / "a", slower), reference)["differ"] == [
        "manifest.json (beyond its build fields)"
    ]
    elsewhere = copy.deepcopy(MANIFEST)  # another mirror: its slots' URLs differ too
    elsewhere["config"]["gdelt"]["base_url"] = "file:///tmp/serial/mirror"
    assert not bench_month.identical(_release(tmp_path / "d", elsewhere), reference)["ok"]
    other = bench_month.identical(_release(tmp_path / "b", MANIFEST, b"other events"), reference)
    assert other == {"ok": False, "files": 1, "differ": ["events.parquet"]}
    other_inputs = copy.deepcopy(MANIFEST)
    other_inputs["stages"]["fetch"]["inputs"]["events"] = "22"
    assert not bench_month.identical(_release(tmp_path / "c", other_inputs), reference)["ok"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_news_web_listens_on_the_port_it_is_given_and_says_when_it_cannot(tmp_path):
    port = _free_port()
    with news_web.NewsWeb(4, port=port) as web:
        assert web.port == port
        taken = news_web.NewsWeb(4, port=port)
        with pytest.raises(RuntimeError, match=f"could not listen on 127.0.0.1:{port}"):
            taken.__enter__()
