"""One politeness for every fetch process (issue 35): two processes fetching one host keep its
interval, the interval counts from when a request was sent, not from its slow answer's end,
a killed process's turn runs out with its lease, a dead host is cut short with its
URLs in the ledger, and robots.txt is read once for every process. Each with the SQLite
store and with a real Redis server on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import threading
import time
from collections import Counter

import pytest
from filelock import FileLock

from bench.harness import servers as local_servers
from gdelt_forecast.articles.fetch import fetch_urls
from gdelt_forecast.articles.ledger import read_ledger, settled_urls
from gdelt_forecast.articles.politeness import FileStore
from gdelt_forecast.articles.politeness_store import open_store
from gdelt_forecast.ground.config import Config
from tests.articles.sites import NOTED_LATE_S, articles_settings, child, html, slow, status

STORES = [
    "file",
    pytest.param(
        "redis",
        marks=pytest.mark.skipif(
            shutil.which("redis-server") is None,
            reason="redis-server not found: apt-get install redis-server",
        ),
    ),
]


@pytest.fixture(params=STORES)
def store_setting(request, tmp_path) -> list[str]:
    """The ``--set`` that picks the store: the data root's file, or a fresh Redis."""
    if request.param == "file":
        yield []
        return
    with local_servers.redis(tmp_path / "redis") as url:
        yield [f"articles.politeness_store={url}"]


_FETCH = """
import json, sys
from gdelt_forecast.articles.fetch import fetch_urls
from gdelt_forecast.ground.config import load_config
args = json.loads(sys.argv[1])
summary = fetch_urls(load_config(None, args["set"], args["data_root"]), args["urls"])
print(json.dumps(summary.to_dict()))
"""


def test_two_processes_fetch_one_host_at_the_configured_interval(site, make_cfg, store_setting):
    delay = 0.25
    cfg = make_cfg(f"articles.per_host_delay_s={delay}", "articles.concurrency=8",
                   "articles.per_host=4", *store_setting)  # fmt: skip
    runs = {
        name: [site.serve(f"/{name}/{i}", html(f"<p>{name} {i}</p>".encode())) for i in range(8)]
        for name in ("a", "b")
    }
    args = {"set": articles_settings(cfg), "data_root": str(cfg.data_root)}
    t0 = time.monotonic()
    children = [child(_FETCH, json.dumps({**args, "urls": urls})) for urls in runs.values()]
    results = [c.communicate(timeout=120) for c in children]
    took = time.monotonic() - t0
    assert [c.returncode for c in children] == [0, 0], [err[-2000:] for _, err in results]
    assert [json.loads(out)["fetched"] for out, _ in results] == [8, 8]

    # Both processes fetched at once: each one's first request came before the other's last
    # (under load one process may start a second or more after the other) ...
    order = [path.split("/")[1] for path in site.paths]
    first = {name: order.index(name) for name in runs}
    last = {name: len(order) - 1 - order[::-1].index(name) for name in runs}
    assert len(order) == 16 and first["a"] < last["b"] and first["b"] < last["a"], order
    # ... and the host saw one request per interval, not one per interval per process.
    gaps = [b - a for a, b in zip(site.starts, site.starts[1:], strict=False)]
    assert min(gaps) >= delay - NOTED_LATE_S, gaps
    assert took >= 15 * delay
    ledger = read_ledger(cfg.data_root)
    assert {row["status"] for row in ledger.values()} == {"fetched"} and len(ledger) == 16


def test_the_interval_counts_from_when_a_request_was_sent(make_cfg, store_setting):
    delay, jitter = 0.6, 0.05
    cfg = make_cfg(f"articles.per_host_delay_s={delay}", f"articles.host_jitter_s={jitter}",
                   "articles.per_host=1", *store_setting)  # fmt: skip
    store = open_store(cfg)
    try:
        answer = store.take("news.example")
        time.sleep(0.2)  # the answer took 0.2 s after the request was sent
        store.done("news.example", answer.token, sent_s_ago=0.2)
        waited = _seconds_until_a_turn(store, "news.example", limit_s=5)
        assert delay + jitter - 0.2 - 0.05 <= waited <= delay + jitter - 0.2 + 0.1, waited
        # Not knowing when it was sent (it failed midway), the store counts from the hand-back.
        answer = store.take("news.example")
        assert answer.token is None and answer.wait_s > delay - 0.2
        time.sleep(answer.wait_s)
        answer = store.take("news.example")
        store.done("news.example", answer.token)
        waited = _seconds_until_a_turn(store, "news.example", limit_s=5)
        assert delay - 0.05 <= waited <= delay + 0.1, waited
    finally:
        store.close()


def test_a_slow_hosts_answer_time_is_not_owed_again_as_delay(site, make_cfg, store_setting):
    delay, answer_s = 0.6, 0.3
    cfg = make_cfg(f"articles.per_host_delay_s={delay}", "articles.per_host=1", *store_setting)
    urls = [site.serve(f"/slow/{i}", slow(answer_s, html(b"<p>late</p>"))) for i in range(6)]
    summary = fetch_urls(cfg, urls)
    assert summary.fetched == 6
    gaps = sorted(b - a for a, b in zip(site.starts, site.starts[1:], strict=False))
    # The host saw the interval, and no more than the interval and the jitter (about 0.65 s),
    # where counting from each answer's end would have spaced them 0.9 s.
    assert gaps[0] >= delay - NOTED_LATE_S, gaps
    assert gaps[len(gaps) // 2] < delay + answer_s - 0.1, gaps


_HOLD = """
import json, sys, time
from gdelt_forecast.articles.politeness_store import open_store
from gdelt_forecast.ground.config import load_config
args = json.loads(sys.argv[1])
store = open_store(load_config(None, args["set"], args["data_root"]))
answer = store.take("news.example")
print(json.dumps({"token": answer.token}), flush=True)
time.sleep(args["hold_s"])
store.done("news.example", answer.token)
print("released", flush=True)
"""


def _holder(cfg, hold_s: float) -> subprocess.Popen:
    args = {"set": articles_settings(cfg), "data_root": str(cfg.data_root), "hold_s": hold_s}
    holder = child(_HOLD, json.dumps(args))
    took = json.loads(holder.stdout.readline())
    if not took["token"]:
        holder.kill()
        pytest.fail(f"the holder got no turn: {took}")
    return holder


def _seconds_until_a_turn(store, host: str, limit_s: float) -> float:
    """How long until ``store`` gives a turn on ``host``; the turn is handed back."""
    t0 = time.monotonic()
    while not (answer := store.take(host)).token:
        assert time.monotonic() - t0 < limit_s, f"no turn on {host} in {limit_s} s"
        time.sleep(0.02)
    waited = time.monotonic() - t0
    store.done(host, answer.token)
    return waited


def test_a_killed_holder_blocks_its_host_no_longer_than_its_lease(make_cfg, store_setting):
    lease = 1.5
    cfg = make_cfg("articles.per_host=1", f"articles.host_lease_s={lease}", *store_setting)
    store = open_store(cfg)
    try:
        # A live holder keeps its turn past the lease: its process renews it ...
        holder = _holder(cfg, hold_s=3 * lease)
        waited = _seconds_until_a_turn(store, "news.example", limit_s=10 * lease)
        assert waited >= 2.5 * lease
        assert holder.stdout.readline().strip() == "released"
        holder.wait(30)
        # ... and a killed one holds it until its lease runs out, no longer.
        holder = _holder(cfg, hold_s=3600)
        killed_at = time.monotonic()
        holder.send_signal(signal.SIGKILL)
        holder.wait(30)
        assert holder.returncode == -signal.SIGKILL
        _seconds_until_a_turn(store, "news.example", limit_s=10 * lease)
        freed = time.monotonic() - killed_at
        assert 0.5 * lease <= freed <= lease + 0.5, freed
    finally:
        store.close()


def test_a_dead_host_is_cut_short_and_its_urls_stay_in_the_ledger(site_at, make_cfg,
                                                                  store_setting):  # fmt: skip
    dead, alive = site_at("127.0.0.3"), site_at("127.0.0.4")
    dead_urls = [dead.serve(f"/{i}", status(503)) for i in range(20)]
    alive_urls = [alive.serve(f"/{i}", html()) for i in range(5)]
    cfg = make_cfg("articles.host_down_after=3", "articles.retries=3", "articles.backoff_s=0.2",
                   "articles.per_host=1", "articles.host_down_s=2", *store_setting)  # fmt: skip
    t0 = time.monotonic()
    summary = fetch_urls(cfg, dead_urls + alive_urls)
    took = time.monotonic() - t0

    # Three failures in a row, then none: not 20 URLs times four tries and their backoffs.
    assert sum(dead.hits.values()) == 3 and took < 3
    assert (summary.host_down, summary.hosts_down, summary.fetched) == (20, 1, 5)
    ledger = read_ledger(cfg.data_root)
    assert Counter(ledger[u]["status"] for u in dead_urls) == {"host_down": 20}
    assert "3 failures in a row; HTTP 503" in ledger[dead_urls[0]]["error"]
    assert sum(ledger[u]["requests"] for u in dead_urls) == 3
    assert ledger[dead_urls[0]]["waited_s"] == pytest.approx(0.2 + 0.4)
    # Nothing lost: host_down is not settled, so the next run asks again ...
    assert settled_urls(cfg.data_root) == set(alive_urls)
    again = fetch_urls(cfg, dead_urls)  # ... but not while the host is down,
    assert (again.host_down, again.requests, sum(dead.hits.values())) == (20, 0, 3)
    time.sleep(2)  # ... and once it is up again, its pages come.
    for i in range(20):
        dead.serve(f"/{i}", html())
    healed = fetch_urls(cfg, dead_urls)
    assert (healed.fetched, healed.hosts_down) == (20, 0)
    assert Counter(r["status"] for r in read_ledger(cfg.data_root).values()) == {"fetched": 25}


def test_robots_txt_is_read_once_for_every_process(site, make_cfg, store_setting):
    site.serve("/robots.txt", html(b"User-agent: *\nDisallow: /private\n",
                                   Content_Type="text/plain"))  # fmt: skip
    cfg = make_cfg("articles.robots=true", *store_setting)
    first = fetch_urls(cfg, [site.serve("/a", html()), site.serve("/private/a", html())])
    args = {"set": articles_settings(cfg), "data_root": str(cfg.data_root),
            "urls": [site.serve("/b", html()), site.serve("/private/b", html())]}  # fmt: skip
    run = child(_FETCH, json.dumps(args))
    out, err = run.communicate(timeout=120)
    assert run.returncode == 0, err[-2000:]
    second = json.loads(out)
    assert (first.robots_fetches, second["robots_fetches"]) == (1, 0)
    assert (first.robots, second["robots"], second["fetched"]) == (1, 1, 1)
    assert site.hits["/robots.txt"] == 1


def test_a_new_file_store_is_set_up_by_one_process_at_a_time(tmp_path):
    """Two processes switching a new SQLite file to WAL at once may get "database is locked"
    at once, whatever the busy timeout (seen in two fetches started side by side): a store
    sets its file up under the lock beside it, so one opening while another holds that lock
    waits for it and then opens."""
    path = tmp_path / "politeness.sqlite"
    opened: list[FileStore] = []
    opening = threading.Thread(target=lambda: opened.append(FileStore(Config().articles, path)))
    with FileLock(f"{path}.lock"):  # a process setting the file up
        opening.start()
        opening.join(timeout=1.0)
        assert opening.is_alive() and not opened  # waiting on the lock, not failing
    opening.join(timeout=30)
    assert len(opened) == 1
    opened[0].close()
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone() == ("wal",)
