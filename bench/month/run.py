"""Benchmark: a simulated month at GDELT's real volume through Airflow on Celery workers, with
faults injected, then its audit (issues 25 and 35).

1. The month's mirror (bench/month/mirror.py: ``--slots-per-day`` slots a day, 96 at full
   volume, with missing and corrupt files; ``--pages`` caps a day's source URLs) served from
   a file:// URL, and the news web (bench/month/news_web.py: ``--hosts`` simulated hosts on
   127.0.0.1, reached through ``articles.resolve``).
2. The engine (bench/harness/servers.py, bench/month/cluster.py): PostgreSQL, Redis (the
   broker, and the fetchers' politeness store), with ``--storage s3`` the S3 server (the
   data root then in its bucket) and Airflow with ``--workers`` Celery workers of
   ``--worker-slots`` tasks each; the pools sized by the run's config (``--set
   articles.fetch_days=1`` fetches one day at a time).
3. ``ingest`` from the command line (the ``gdelt_ingest`` DAG runs per 15-minute slot, 2,976
   runs a month: its Airflow overhead would be the bench), then ``monthly_refresh`` for the
   month (``partial`` when it has fewer than 31 days).
4. The faults ``--faults`` names (all by default; ``--no-faults``: none), as the run reaches
   them (``Faults``): a worker SIGKILLed in the middle of a ``normalize_day``
   (``kill-normalize``) and of a ``fetch_day`` task (``kill-fetch``) and started again, the S3
   server restarted while the days are processed (``s3-restart``, with ``--storage s3``), and
   ``testset``'s month lock held by the bench while the task starts, so that it waits
   (``lock``). Then the same month is built again without faults from the command line,
   into another data root on the same storage (``--no-reference`` skips it).
5. The audit (bench/month/audit.py: ingest, funnel, URLs, pages, and the chain from silver
   events to quads to test queries), ``release verify``, and with faults, whether the release
   is byte-identical to the reference's (every file the manifests list, and the manifests
   less what names the build: its time, data root and runs), and with ``--compare-release
   DIR`` whether it is byte-identical to another run's (a serial one's, say: the manifests
   then also less the settings that name the run, ``RUN_SETTINGS``; the news web's port and
   the mirror's folder are in the release's URLs, so both runs need the same ``--web-port``
   and ``--mirror``).

The report (``--report FILE.json``): ``stages`` (per stage ``wall_s`` from its first task's
start to its last task's end, ``task_s``, ``cpu_s``, ``peak_rss_mb`` and per worker, tries,
bucket objects and bytes), ``workers`` (the Celery workers that ran tasks), ``tasks`` (every
try: ``{task, day, map_index, try, state, worker, start_s, end_s}``), ``overlap`` (the most
``fetch_day``s at once; whether a ``process_day`` started before the last ``fetch_day``
ended; per day, the seconds from its fetch's end to its ``process_day``'s start), ``faults``,
``release``, ``release_bytes`` (in all and per part), ``politeness`` (from the ledger: the
floor, the busiest host's requests times the delay plus its waits, and the fetch's wall time
over it; hosts cut short; ``min_host_interval_s``, the shortest
interval between two requests to one host that the news web saw), ``critical_path`` and
``audit`` (``ok`` and one entry per check, ``politeness`` among them: that interval not
below the delay); per stage also its ``throughput`` per second of its tasks' run time (rows,
events, URLs, pages). The exit status is 1 unless ``audit.ok``.

Run: ``python -m bench.month.run --days N [--slots-per-day K] [--pages P] [--hosts H]
[--web-port PORT] [--mirror DIR] [--storage s3|local] [--workers W] [--worker-slots S]
[--faults F,... | --no-faults] [--heartbeat-timeout-s S] [--retry-delay-s S] [--no-reference]
[--compare-release DIR] [--workdir DIR] [--set section.key=value ...] --report FILE.json``
(defaults: 31 days at full volume, S3, two workers, faults). A run smaller than a day at full
volume needs lower thresholds for its test set to have queries (``--set
testset.min_daily_mentions=10``, for instance).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import json
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from contextlib import ExitStack
from datetime import date, timedelta
from pathlib import Path

from bench.harness import REPO
from bench.harness import servers as local_servers
from bench.month import audit as month_audit
from bench.month import cluster as airflow_cluster
from bench.month import mirror as month_mirror
from bench.month import news_web

START = date(2025, 8, 1)
MONTH = "2025-08"
VERSION = "bench-month"
DAG, RUN_ID = "monthly_refresh", "bench-month"
BUCKET = "gdelt-forecast-bench"
CONFIG = REPO / "configs/default.yaml"
# The faults (``--faults``): a worker SIGKILLed once a task of it has run this long, the S3
# server restarted, testset's month lock held by the bench.
KILLS = {"kill-normalize": ("normalize_day", 0.5), "kill-fetch": ("fetch_day", 3.0)}
FAULTS = (*KILLS, "s3-restart", "lock")
TASK_STAGE = {"normalize_day": "normalize", "fetch_day": "fetch", "process_day": "process"}
# The manifest's fields that name a build, not what it built (a config's digest among them:
# the config itself is compared, less RUN_SETTINGS).
BUILD_FIELDS = ("created", "data_root", "run", "runs", "id", "config_sha256")
# The config's settings that say where and how a run ran, not what it built: the bench's
# scratch folder, its Redis port and how many days it fetched at once.
RUN_SETTINGS = {
    "articles": ("politeness_store", "fetch_days"),
    "storage": ("local_dir",),
}


def stage_commands(days: int) -> list[tuple[str, list[str]]]:
    """The month as the command line builds it: ``ingest`` first, then what
    ``monthly_refresh`` runs."""
    last = START + timedelta(days=days - 1)
    span = ["--start-date", START.isoformat(), "--end-date", last.isoformat()]
    return [
        ("ingest", ["ingest", "--start", f"{START}T00:00", "--end", f"{last}T23:45"]),
        ("normalize", ["normalize", *span]),
        ("fetch", ["articles", "fetch", *span]),
        ("process", ["articles", "process", *span]),
        ("database", ["database"]),
        ("testset", ["testset", "--month", MONTH]),
        ("timelines", ["timelines", "--month", MONTH]),
        ("tasks", ["tasks", "--month", MONTH]),
        ("reasoning", ["reasoning", "--month", MONTH]),
        ("release", ["release", "--month", MONTH, "--version", VERSION]),
    ]


# Run by each stage's process: the CLI as a user runs it, then one JSON line of its costs.
WORKER = """
import json, resource, sys, time
from gdelt_forecast.cli import main
from gdelt_forecast.orchestration.tasks import io_bytes
t0, (read, written) = time.perf_counter(), io_bytes()
code = main(sys.argv[1:])
usage, now = resource.getrusage(resource.RUSAGE_SELF), io_bytes()
print(json.dumps({"code": code, "wall_s": time.perf_counter() - t0,
                  "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024,
                  "read_bytes": now[0] - read, "written_bytes": now[1] - written}))
"""


def run_cli(name: str, args: list[str], common: list[str], log: Path, env: dict) -> dict:
    """One stage from the command line in a fresh process; its exit code and costs."""
    with log.open("a") as out:
        done = subprocess.run(
            [sys.executable, "-c", WORKER, *args, *common],
            env=env,
            stdout=subprocess.PIPE,
            stderr=out,
            text=True,
            cwd=REPO,
        )
    lines = done.stdout.strip().splitlines()
    result = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {"code": -1}
    print(
        f"{name:<10} {result.get('wall_s', 0):8.1f} s wall {result.get('cpu_s', 0):8.1f} s CPU "
        f"{result.get('peak_rss_mb', 0):7.0f} MB  exit {result['code']}",
        flush=True,
    )
    return {"name": name, "workers": ["inline"], **result}


def s3_env(endpoint: str, workdir: Path) -> dict[str, str]:
    """The AWS variables that send every client to the bench's server and nowhere else."""
    empty = workdir / "aws-none"
    empty.write_text("")
    return {
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_CONFIG_FILE": str(empty),
        "AWS_SHARED_CREDENTIALS_FILE": str(empty),
        "AWS_EC2_METADATA_DISABLED": "true",
    }


def bench_overrides(mirror: Path, web: news_web.NewsWeb, broker: str | None, work: Path,
                    extra: list[str]) -> list[str]:  # fmt: skip
    """The settings a bench's stages run with: the mirror, the news web, the politeness store
    in the broker's Redis (database 1) where there is one, and the bucket's working copies in
    the bench's folder (every worker here shares it, as containers on one host share the
    compose file's `scratch` volume); then ``extra``."""
    return [
        f"gdelt.base_url={mirror.as_uri()}",
        *web.fetch_config(),
        *([f"articles.politeness_store={broker.removesuffix('/0')}/1"] if broker else []),
        f"storage.local_dir={work / 'scratch'}",
        *extra,
    ]


def storage(
    stack: ExitStack, kind: str, work: Path
) -> tuple[str, dict[str, str], local_servers.S3Server | None]:
    """The data root on ``kind`` storage: ``work/data``, or with "s3" the bucket of an S3
    server started in ``stack`` (its AWS variables set in this process too, for the bench's
    own bucket calls); with the environment the stages run in, and the server."""
    env = dict(os.environ)
    if kind != "s3":
        return str(work / "data"), env, None
    s3 = stack.enter_context(local_servers.S3Server(work / "s3"))
    env.update(s3_env(s3.url, work))
    os.environ.update(env)
    import s3fs

    with contextlib.suppress(FileExistsError):  # a resumed run's bucket is still there
        s3fs.S3FileSystem(skip_instance_cache=True).mkdir(BUCKET)
    return f"s3://{BUCKET}/data", env, s3


class Faults:
    """Issue 25's faults, each once, as the run reaches it: :meth:`tick` is called at every
    poll of the run. ``events`` says what was done when (seconds since the trigger)."""

    def __init__(
        self,
        cluster: airflow_cluster.Cluster,
        s3: local_servers.S3Server | None,
        cfg,
        chosen: list[str],
        lock_hold_s: float = 10.0,
    ):
        self.cluster, self.s3, self.cfg = cluster, s3, cfg
        self.pending_kills = [KILLS[f] for f in chosen if f in KILLS]
        self.lock_hold_s = lock_hold_s
        self.t0 = time.monotonic()
        self.events: list[dict] = []
        self.lock: ExitStack | None = None
        self.s3_restarted = s3 is None or "s3-restart" not in chosen
        self.lock_done = "lock" not in chosen

    def _event(self, fault: str, **detail) -> None:
        self.events.append({"fault": fault, "at_s": round(time.monotonic() - self.t0, 1), **detail})
        print(f"fault: {fault} {detail}", flush=True)

    def _running_for(self, task_id: str) -> tuple[dict, float] | None:
        for ti in self.cluster.running(DAG, RUN_ID, task_id):
            if ti["start_date"] is not None and ti["hostname"]:
                return ti, time.time() - ti["start_date"].timestamp()
        return None

    def tick(self) -> None:
        if self.pending_kills:
            task_id, after_s = self.pending_kills[0]
            found = self._running_for(task_id)
            if found and found[1] >= after_s:
                ti, running_s = found
                self.cluster.kill_worker(ti["hostname"])
                self._event(
                    "worker SIGKILLed",
                    worker=ti["hostname"],
                    task=task_id,
                    map_index=ti["map_index"],
                    running_s=round(running_s, 1),
                )
                self.cluster.start_worker(ti["hostname"])  # the machine is back
                self.pending_kills.pop(0)
            return
        if not self.s3_restarted and self._running_for("process_day"):
            self._event("S3 server restart", down_s=round(self.s3.restart(), 1))
            self.s3_restarted = True
        if not self.lock_done and self.lock is None and self._running_for("database"):
            self.lock = ExitStack()
            self.lock.enter_context(_month_lock(self.cfg))
            self._event("testset month lock taken by the bench")
        if self.lock is not None:
            found = self._running_for("testset")
            if found and found[1] >= self.lock_hold_s:
                self.lock.close()
                self.lock, self.lock_done = None, True
                self._event("testset month lock released", testset_waited_s=round(found[1], 1))

    def report(self, tasks: list[dict]) -> dict:
        retried = sorted({(t["task_id"], t["map_index"]) for t in tasks if t["try_number"] > 1})
        return {
            "events": self.events,
            "retried_tasks": [f"{t}[{i}]" for t, i in retried],
            "all_done": not self.pending_kills and self.s3_restarted and self.lock_done,
        }


def _month_lock(cfg):
    from gdelt_forecast.storage import leases, locks
    from gdelt_forecast.storage.bucket import bucket

    if cfg.remote:
        store = bucket(cfg)
        return leases.bucket_lock(store, f"testset-{MONTH}", cfg.storage.lock_ttl_s)
    return locks.month_lock(cfg, "testset", MONTH)


def stage_figures(tasks: list[dict], bucket: dict) -> list[dict]:
    """Per stage, from its tasks' tries: wall span, task seconds, CPU, peak RSS (overall and
    per worker), tries, and the bucket traffic its requests were counted under."""
    by_stage: dict[str, list[dict]] = defaultdict(list)
    for t in tasks:
        by_stage[TASK_STAGE.get(t["task_id"], t["task_id"])].append(t)
    stages = []
    for name, tries in by_stage.items():
        done = [t for t in tries if t["start"] and t["end"]]
        ok = [t for t in done if t["state"] == "success" and t["usage"]]
        per_worker: dict[str, float] = {}
        for t in ok:
            per_worker[t["hostname"]] = max(
                per_worker.get(t["hostname"], 0), t["usage"]["peak_rss_mb"]
            )
        stages.append(
            {
                "name": name,
                "wall_s": round(max(t["end"] for t in done) - min(t["start"] for t in done), 1)
                if done
                else 0.0,
                "task_s": round(sum(t["end"] - t["start"] for t in done), 1),
                "cpu_s": round(sum(t["usage"]["cpu_s"] for t in ok), 1),
                "read_mb": round(sum(t["usage"].get("read_bytes", 0) for t in ok) / 1e6, 1),
                "written_mb": round(sum(t["usage"].get("written_bytes", 0) for t in ok) / 1e6, 1),
                "peak_rss_mb": max(per_worker.values(), default=0.0),
                "peak_rss_mb_per_worker": per_worker,
                "tasks": len({t["map_index"] for t in tries}),
                "tries": len(tries),
                "workers": sorted({t["hostname"] for t in tries if t["hostname"]}),
                "bucket": bucket.get(f"gdelt-forecast.{name}", {}),
            }
        )
    return stages


def throughput(stages: list[dict], audit: dict, polite: dict) -> None:
    """Add ``throughput`` to the stages that have a unit of work: how many per second of
    their tasks' own run time (``task_s``; ``wall_s`` for the command line's ingest)."""
    work = {
        "ingest": ("rows", audit["ingest"]["lines"]),
        "normalize": ("bronze events", audit["funnel"]["bronze_events"]),
        "fetch": ("URLs", polite.get("urls", 0)),
        "process": ("pages", audit["pages"]["fetched"]),
        "database": ("silver events", audit["funnel"]["silver_events"]),
    }
    for s in stages:
        if s["name"] in work:
            unit, n = work[s["name"]]
            seconds = s.get("task_s") or s.get("wall_s") or 0
            s["throughput"] = {
                "unit": unit,
                "n": n,
                "per_s": round(n / seconds, 1) if seconds else None,
            }


def critical_path(stages: list[dict], tasks: list[dict]) -> dict:
    """The run's wall time and the stage span that holds most of it."""
    done = [t for t in tasks if t["start"] and t["end"]]
    total = max(t["end"] for t in done) - min(t["start"] for t in done) if done else 0.0
    longest = max(stages, key=lambda s: s["wall_s"], default={"name": None, "wall_s": 0})
    return {
        "run_wall_s": round(total, 1),
        "longest_stage": longest["name"],
        "longest_stage_s": longest["wall_s"],
    }


def politeness(root: Path, cfg, fetch_wall_s: float, web: news_web.NewsWeb) -> dict:
    """What the fetch owed to politeness, from the month's ledger: per host, its requests
    times ``per_host_delay_s`` plus its retries' waits (backoffs and Retry-After); the busiest
    host's total is the month's floor, which no number of workers can beat, against the
    fetch's wall time. Also the hosts cut short (down), and the shortest interval between
    two requests to one host as the news web saw them arrive."""
    import pyarrow.parquet as pq

    ledger_path = root / "articles/fetch_ledger.parquet"
    if not ledger_path.exists():
        return {}
    a = cfg.articles
    columns = ["url", "status", "attempts", "requests", "waited_s"]
    rows = pq.read_table(ledger_path, columns=columns).to_pylist()
    from gdelt_forecast.articles.safety import split_url

    owed: Counter = Counter()
    for r in rows:
        host = split_url(r["url"])[1]
        owed[host] += (r["requests"] or 0) * a.per_host_delay_s + (r["waited_s"] or 0.0)
    busiest, floor = max(owed.items(), key=lambda kv: kv[1], default=(None, 0.0))
    seen = web.min_interval
    return {
        "urls": len(rows),
        "hosts": len(owed),
        "attempts": sum(r["attempts"] or 1 for r in rows),
        "requests": sum(r["requests"] or 0 for r in rows),
        "host_down_urls": sum(r["status"] == "host_down" for r in rows),
        "hosts_cut_short": len(
            {split_url(r["url"])[1] for r in rows if r["status"] == "host_down"}
        ),
        "floor_s": round(floor, 1),
        "floor_host": busiest,
        "fetch_wall_s": fetch_wall_s,
        "fetch_over_floor": round(fetch_wall_s / floor, 3) if floor else None,
        "per_host_delay_s": a.per_host_delay_s,
        "min_host_interval_s": round(seen[0], 4) if seen else None,
        "min_host_interval_host": seen[1] if seen else None,
        "shortest_intervals": [
            {"s": round(g, 4), "host": h, "paths": [a, b], "at_s": round(t, 1)}
            for g, h, a, b, t in web.shortest
        ],
    }


def task_timeline(tasks: list[dict]) -> dict:
    """Every try of every task as ``{task, day, map_index, try, state, worker, start_s,
    end_s}`` (seconds from the run's first start; a mapped day task's day is the month's
    ``map_index``-th, as ``days`` lists every day of the bench's mirror), and what ran side by
    side: the most ``fetch_day``s at once, whether a ``process_day`` started before the
    last ``fetch_day`` ended, and per day the seconds from its fetch's end to its first
    ``process_day``'s start."""
    t0 = min((t["start"] for t in tasks if t["start"]), default=0.0)
    timeline = [
        {
            "task": t["task_id"],
            "day": (START + timedelta(days=t["map_index"])).isoformat()
            if t["map_index"] >= 0
            else None,
            "map_index": t["map_index"],
            "try": t["try_number"],
            "state": t["state"],
            "worker": t["hostname"],
            "start_s": round(t["start"] - t0, 1) if t["start"] else None,
            "end_s": round(t["end"] - t0, 1) if t["end"] else None,
        }
        for t in sorted(tasks, key=lambda t: (t["start"] or math.inf, t["task_id"]))
    ]
    fetches = [t for t in timeline if t["task"] == "fetch_day" and t["end_s"] is not None]
    edges = sorted([(t["start_s"], 1) for t in fetches] + [(t["end_s"], -1) for t in fetches])
    at_once = max(itertools.accumulate(step for _, step in edges), default=0)
    last_fetch_end = max((t["end_s"] for t in fetches), default=None)
    processed: dict[str, float] = {}  # each day's first process_day start
    for t in timeline:
        if t["task"] == "process_day" and t["start_s"] is not None:
            processed[t["day"]] = min(processed.get(t["day"], t["start_s"]), t["start_s"])
    first_process = min(processed.values(), default=None)
    fetched = {t["day"]: t["end_s"] for t in fetches if t["state"] == "success"}
    return {
        "tasks": timeline,
        "overlap": {
            "fetch_days_at_once": at_once,
            "first_process_day_start_s": first_process,
            "last_fetch_day_end_s": last_fetch_end,
            "process_before_last_fetch_ends": first_process is not None
            and last_fetch_end is not None
            and first_process < last_fetch_end,
            "process_after_own_fetch_s": {
                day: round(processed[day] - end, 1) if day in processed else None
                for day, end in sorted(fetched.items())
            },
        },
    }


def release_bytes(release: Path) -> dict:
    """The release's bytes in all, and per top-level part (a folder or a file)."""
    parts: Counter = Counter()
    for path in release.rglob("*"):
        if path.is_file():
            parts[path.relative_to(release).parts[0]] += path.stat().st_size
    return {"total": sum(parts.values()), "parts": dict(parts.most_common())}


def here(data_root: str, local: Path) -> Path:
    """``data_root`` as a folder on this machine: a bucket's brought into ``local``."""
    if not data_root.startswith("s3://"):
        return Path(data_root)
    import s3fs

    s3fs.S3FileSystem(skip_instance_cache=True).get(
        data_root.removeprefix("s3://") + "/", str(local), recursive=True
    )
    return local


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _without_build(value):
    if isinstance(value, dict):
        return {k: _without_build(v) for k, v in value.items() if k not in BUILD_FIELDS}
    if isinstance(value, list):
        return [_without_build(v) for v in value]
    return value


def _what_it_built(manifest: dict) -> dict:
    for section, keys in RUN_SETTINGS.items():
        for key in keys:
            manifest["config"][section].pop(key, None)
    return _without_build(manifest)


def identical(release: Path, reference: Path) -> dict:
    """Whether two releases hold the same bytes: every file but the manifest, and the
    manifests less the fields that name the build and the settings that name the run."""
    mine, theirs = _digest(release), _digest(reference)
    for files in (mine, theirs):
        files.pop("manifest.json", None)
    differ = sorted(p for p in set(mine) | set(theirs) if mine.get(p) != theirs.get(p))
    manifests = [
        _what_it_built(json.loads((r / "manifest.json").read_text())) for r in (release, reference)
    ]
    if manifests[0] != manifests[1]:
        differ.append("manifest.json (beyond its build fields)")
    return {"ok": not differ, "files": len(mine), "differ": differ[:20]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=31)
    parser.add_argument("--slots-per-day", type=int, default=96)
    parser.add_argument("--pages", type=int, default=None, help="source URLs a day at most")
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument(
        "--web-port",
        type=int,
        default=0,
        help="the news web's port (0: any free one); its URLs, and so the release, hold it, so "
        "two runs compared with --compare-release need the same",
    )
    parser.add_argument("--storage", choices=("s3", "local"), default="s3")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--worker-slots",
        type=int,
        default=4,
        help="tasks a worker runs at once (a fetching day mostly waits on its hosts)",
    )
    parser.add_argument(
        "--compare-release",
        type=Path,
        help="another run's release of the same month (a serial one, say): the audit checks "
        "this run's is byte-identical to it",
    )
    parser.add_argument(
        "--faults", default=",".join(FAULTS), help=f"which faults, of {', '.join(FAULTS)}"
    )
    parser.add_argument("--no-faults", action="store_const", const="", dest="faults")
    parser.add_argument(
        "--no-reference",
        action="store_true",
        help="skip the build without faults (and the byte-identity check)",
    )
    parser.add_argument(
        "--mirror",
        type=Path,
        help="the GDELT mirror's folder (default: WORKDIR/mirror); the slots' URLs, and so the "
        "release, name it, so two runs compared with --compare-release need the same",
    )
    parser.add_argument(
        "--heartbeat-timeout-s",
        type=int,
        default=30,
        help="how long a task's silence makes Airflow give it up (a killed worker's task)",
    )
    parser.add_argument(
        "--retry-delay-s", type=int, default=10, help="how long a failed task waits for its retry"
    )
    parser.add_argument("--timeout-s", type=float, default=4 * 3600)
    parser.add_argument("--workdir", type=Path, default=REPO / "bench-data" / "month")
    parser.add_argument("--report", type=Path, required=True)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="a config override for every stage (a smaller run's thresholds, say)",
    )
    args = parser.parse_args()
    # A stopped bench still stops the servers it started (they run in sessions of their own).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if not 1 <= args.days <= 31:
        parser.error("--days: 1 to 31 (one month)")
    chosen = [f for f in args.faults.split(",") if f]
    if unknown := set(chosen) - set(FAULTS):
        parser.error(f"--faults: unknown {', '.join(sorted(unknown))} (of {', '.join(FAULTS)})")
    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    work = args.workdir
    mirror = (args.mirror or work / "mirror").resolve()
    log = work / "stages.log"
    report: dict = {
        "days": args.days,
        "slots_per_day": args.slots_per_day,
        "pages": args.pages,
        "hosts": args.hosts,
        "storage": args.storage,
        "workers_asked": args.workers,
    }
    with ExitStack() as stack:
        web = stack.enter_context(news_web.NewsWeb(args.hosts, port=args.web_port))
        t0 = time.perf_counter()
        made = month_mirror.build(
            mirror,
            month_mirror.span(START, args.days),
            args.slots_per_day,
            hosts=args.hosts,
            port=web.port,
            pages=args.pages,
        )
        print(
            f"mirror: {len(made.slots)} slots, {made.rows['export']:,} export and "
            f"{made.rows['mentions']:,} mention rows ({time.perf_counter() - t0:.1f} s)"
        )
        # Redis is the Celery broker (database 0) and the fetchers' politeness (database 1).
        broker = stack.enter_context(local_servers.redis(work / "redis"))
        overrides = bench_overrides(mirror, web, broker, work, args.set)
        data_root, env, s3 = storage(stack, args.storage, work)
        from gdelt_forecast.ground.config import load_config

        cfg = load_config(CONFIG, overrides, data_root=data_root)
        common = ["--config", str(CONFIG), "--data-root", data_root]
        common += [x for o in overrides for x in ("--set", o)]
        ingest_cmd = stage_commands(args.days)[0][1]
        stages = [run_cli("ingest", ingest_cmd, common, log, env)]
        database = stack.enter_context(local_servers.postgres())
        cluster = stack.enter_context(
            airflow_cluster.Cluster(work / "airflow", database, broker, env,
                                    workers=args.workers, concurrency=args.worker_slots,
                                    heartbeat_timeout_s=args.heartbeat_timeout_s,
                                    retry_delay_s=args.retry_delay_s)
        )  # fmt: skip
        t0 = time.perf_counter()
        cluster.start(init=tuple(common))  # the pools sized by the run's config
        report["airflow_start_s"] = round(time.perf_counter() - t0, 1)
        faults = Faults(cluster, s3, cfg, chosen) if chosen else None
        conf = {
            "month": MONTH,
            "partial": args.days < 31,
            "version": VERSION,
            "config": str(CONFIG),
            "data_root": data_root,
            "set": overrides,
        }
        cluster.trigger(DAG, RUN_ID, conf)
        state = cluster.wait(
            DAG, RUN_ID, args.timeout_s, poll_s=0.5, tick=faults.tick if faults else None
        )
        print(f"{DAG}: {state}", flush=True)
        tasks = cluster.tasks(DAG, RUN_ID)
        bucket = s3.counts() if s3 else {}
        stages += stage_figures(tasks, bucket)
        if s3:
            stages[0]["bucket"] = bucket.get("gdelt-forecast.ingest", {})
        report["stages"] = stages
        report["critical_path"] = critical_path(stages[1:], tasks)
        report["workers"] = sorted({t["hostname"] for t in tasks if t["hostname"]})
        report |= task_timeline(tasks)
        report["faults"] = faults.report(tasks) if faults else None
        root = here(data_root, work / "data")  # the audit reads files
        reference = None
        if faults and not args.no_reference:
            # On the same storage: a bucket's stage records fingerprint files by ETag, a
            # disk's by sha256, so only the same storage can give the same manifest.
            ref_root = f"s3://{BUCKET}/reference" if s3 else str(work / "reference")
            ref_common = ["--config", str(CONFIG), "--data-root", ref_root]
            ref_common += [x for o in overrides for x in ("--set", o)]
            report["reference_stages"] = [
                run_cli(n, c, ref_common, log, env) for n, c in stage_commands(args.days)
            ]
            reference = here(ref_root, work / "reference") / "releases" / VERSION
        report["news_web"] = dict(web.counts)
    release = root / "releases" / VERSION
    report["release"] = str(release)
    report["politeness"] = politeness(
        root, cfg, next((s["wall_s"] for s in stages if s["name"] == "fetch"), 0.0), web
    )
    report["release_bytes"] = release_bytes(release) if release.exists() else None
    audit = month_audit.audit(
        mirror,
        root,
        made.missing,
        made.corrupt,
        release if release.exists() else None,
        MONTH,
    )
    throughput(stages, audit, report["politeness"])
    from gdelt_forecast.release.verify import verify

    problems = verify(release) if release.exists() else ["no release"]
    audit["release"] = {"ok": not problems, "problems": problems[:20]}
    audit["run"] = {
        "ok": state == "success" and all(s.get("code", 0) == 0 for s in stages),
        "state": state,
    }
    polite = report["politeness"]
    audit["politeness"] = {
        "ok": (polite.get("min_host_interval_s") or math.inf) >= cfg.articles.per_host_delay_s,
        "min_host_interval_s": polite.get("min_host_interval_s"),
        "per_host_delay_s": cfg.articles.per_host_delay_s,
    }
    if faults:
        audit["faults"] = {"ok": report["faults"]["all_done"], **report["faults"]}
    for name, other in (("identical", reference), ("identical_to_compared", args.compare_release)):
        if other is not None:
            audit[name] = (
                identical(release, other)
                if other.exists()
                else {"ok": False, "differ": [f"no release at {other}"]}
            )
    audit["ok"] = all(v["ok"] for k, v in audit.items() if k != "ok")
    report["audit"] = audit
    args.report.write_text(json.dumps(report, indent=2, default=str))
    for s in stages:
        print(
            f"{s['name']:<10} {s.get('wall_s', 0):8.1f} s wall {s.get('cpu_s', 0):8.1f} s CPU "
            f"{s.get('peak_rss_mb', 0):7.0f} MB peak  workers {','.join(s['workers'])}  "
            f"{s.get('tries', 1)} tries  {json.dumps(s.get('throughput', {}))}  "
            f"bucket {json.dumps(s.get('bucket', {}))}"
        )
    print(
        f"critical path: {json.dumps(report['critical_path'])}; politeness: "
        f"{json.dumps(report['politeness'])}"
    )
    for name, check in audit.items():
        if name != "ok":
            print(
                f"audit {name}: {'PASS' if check['ok'] else 'FAIL'} "
                + json.dumps({k: v for k, v in check.items() if k != "ok"})[:300]
            )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"overall: {'PASS' if audit['ok'] else 'FAIL'} (report {args.report}; this process's "
        f"peak RSS {peak:.0f} MB)"
    )
    return 0 if audit["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
