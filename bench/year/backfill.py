"""Benchmark: months backfilled at once on Celery (issue 51): ``airflow backfill create`` of
``monthly_refresh`` over ``--months`` months, their runs side by side (``--max-active-runs``),
every fetch under the one politeness (the workers share Redis's store), each month's
warehouse after the days of the months before it (the DAG's ``history`` sensor); and what
ten years would take, projected from the figures.

1. The year bench's mirror of the months (``--days-per-month`` days from each 1st,
   ``--slots-per-day``, ``--pages``; or ``--mirror``, one built before) and news web,
   Redis, PostgreSQL, the S3 server holding the data root (``--storage s3``, the default)
   and Airflow with ``--workers`` Celery workers.
2. ``gdelt-forecast ingest`` of every day (timed), then ``airflow backfill create --dag-id
   monthly_refresh`` from the 2nd of the month after the first to that after the last (the
   schedule's ticks: each run's month is the one before it), the run conf naming the config,
   data root and settings (``partial``: a month of fewer days than it has). The runs are
   waited for.
3. Each release is pulled into a consumer's data root and verified.

The report (``--report FILE.json``): ``ingest``; per run its month, state, wall seconds from
the backfill's creation to its end, how long its ``history`` waited and each stage's
figures (the month bench's); ``side_by_side``: the most months whose day tasks ran at once,
and, per month, whether its ``database`` started after every earlier month's last
``process_day`` ended (it must); ``politeness``: the news web's shortest interval between two
requests to one host against ``articles.per_host_delay_s``; ``releases`` verified; and
``projection``: ten years (120 months) on this machine from the figures: the CPU seconds of
a month's tasks over the cores, against the fetch's politeness floor of a month at GDELT's
volume (``--fetch-floor-s``: the month bench's full-volume fetch, 1,479 s; a host's turns
are shared by every worker, so more machines do not shorten it). Checks: every run
succeeded, each database after the earlier months' days, the interval not below the delay,
every release sound. The exit status is 1 unless every check holds.

Run: ``python -m bench.year.backfill [--months 3] [--first-month 2025-01] [--days-per-month D]
[--slots-per-day K] [--pages P] [--hosts H] [--storage s3|local] [--workers W]
[--worker-slots S] [--max-active-runs M] [--fetch-floor-s S] [--mirror DIR --web-port P]
[--workdir DIR] [--set section.key=value ...] --report FILE.json``. A run smaller than a day
at full volume needs lower thresholds for its test set to have queries (``--set
testset.min_daily_mentions=10``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import time
from contextlib import ExitStack
from datetime import datetime, timedelta
from pathlib import Path

from bench.harness import REPO
from bench.harness import servers as local_servers
from bench.month import cluster as airflow_cluster
from bench.month import mirror as month_mirror
from bench.month import news_web
from bench.month.run import bench_overrides, run_cli, stage_figures, storage
from bench.year.run import (
    CONFIG,
    DAG,
    STAGE_FIGURES,
    month_days,
    months_from,
    next_first,
    year_arguments,
)

DAY_TASKS = ("normalize_day", "fetch_day", "process_day")
TEN_YEARS = 120  # months


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    year_arguments(parser, months=3)
    parser.add_argument("--max-active-runs", type=int, default=3)
    parser.add_argument(
        "--fetch-floor-s",
        type=float,
        default=1479.0,
        help="a month's fetch floor at GDELT's volume (the month bench's)",
    )
    parser.add_argument(
        "--mirror", type=Path,
        help="a mirror built before of these days at least, with the same --slots-per-day, "
        "--pages and --hosts (the year bench's WORKDIR/mirror): its news web listens again on "
        "the port its URLs hold, --web-port (a mirror of GDELT's volume takes 18 s a day)",
    )  # fmt: skip
    parser.add_argument("--web-port", type=int, default=0, help="the news web's (0: any free)")
    parser.add_argument("--timeout-s", type=float, default=6 * 3600)
    parser.add_argument("--workdir", type=Path, default=REPO / "bench-data" / "backfill")
    parser.add_argument("--report", type=Path, required=True)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    months = months_from(args.first_month, args.months)
    shutil.rmtree(args.workdir, ignore_errors=True)
    work = args.workdir.resolve()
    work.mkdir(parents=True)
    report: dict = {"args": {k: str(v) for k, v in vars(args).items()}}
    with ExitStack() as stack:
        web = stack.enter_context(news_web.NewsWeb(args.hosts, port=args.web_port))
        days = [d for m in months for d in month_days(m, args.days_per_month)]
        mirror = args.mirror.resolve() if args.mirror else work / "mirror"
        if not args.mirror:
            month_mirror.build(mirror, days, args.slots_per_day, hosts=args.hosts,
                               port=web.port, pages=args.pages, missing=0, corrupt=0)  # fmt: skip
        broker = stack.enter_context(local_servers.redis(work / "redis"))
        overrides = bench_overrides(mirror, web, broker, work, args.set)
        data_root, env, _ = storage(stack, args.storage, work)
        from gdelt_forecast.ground.config import load_config

        common = ["--config", str(CONFIG), "--data-root", data_root]
        common += [x for o in overrides for x in ("--set", o)]
        span = ["--start", f"{days[0]}T00:00", "--end", f"{days[-1]}T23:45"]
        ingest = run_cli("ingest", ["ingest", *span], common, work / "stages.log", env)
        report["ingest"] = {k: ingest.get(k) for k in ("code", "wall_s", "cpu_s")}
        database = stack.enter_context(local_servers.postgres())
        cluster = stack.enter_context(
            airflow_cluster.Cluster(work / "airflow", database, broker, env,
                                    workers=args.workers, concurrency=args.worker_slots)
        )  # fmt: skip
        cluster.start(init=tuple(common))
        conf = {"config": str(CONFIG), "data_root": data_root, "set": overrides, "partial": True}
        t0 = time.time()
        report["backfill"] = cluster.airflow(
            "backfill", "create", "--dag-id", DAG,
            # the schedule's ticks: 06:00 on the 2nd of the month after each month
            "--from-date", (next_first(months[0]) + timedelta(days=1)).isoformat(),
            "--to-date", (next_first(months[-1]) + timedelta(days=2)).isoformat(),
            "--max-active-runs", str(args.max_active_runs), "--dag-run-conf", json.dumps(conf),
        )  # fmt: skip
        runs = wait_for_backfill(cluster, len(months), args.timeout_s)
        report["wall_s"] = round(max(r["end"] for r in runs) - t0, 1)
        report["runs"] = [run_figures(cluster, r, t0) for r in runs]
        report["side_by_side"] = side_by_side(report["runs"])
        seen = web.min_interval
        report["politeness"] = {
            "min_host_interval_s": round(seen[0], 4) if seen else None,
            "host": seen[1] if seen else None,
            "per_host_delay_s": load_config(CONFIG, overrides, data_root).articles.per_host_delay_s,
        }
        report["releases"] = verified(data_root, work / "consumer")
    report["projection"] = projection(report, args.fetch_floor_s, os.cpu_count() or 1)
    checks = {
        "every run succeeded": len(report["runs"]) == len(months)
        and all(r["state"] == "success" for r in report["runs"]),
        "each database after the earlier months' days": report["side_by_side"]["in_order"],
        "politeness held": (report["politeness"]["min_host_interval_s"] or float("inf"))
        >= report["politeness"]["per_host_delay_s"],
        "every release sound": bool(report["releases"])
        and all(not p for p in report["releases"].values()),
    }
    report["checks"], report["ok"] = checks, all(checks.values())
    args.report.write_text(json.dumps(report, indent=2, default=str))
    for run in report["runs"]:
        print(f"{run['month']}: {run['state']} in {run['wall_s']} s "
              f"(history waited {run['history_wait_s']} s)")  # fmt: skip
    print(f"backfill of {len(months)} months: {report['wall_s']} s; side by side "
          f"{json.dumps(report['side_by_side'])}")  # fmt: skip
    print(f"projection: {json.dumps(report['projection'])}")
    for name, ok in checks.items():
        print(f"check {name}: {'PASS' if ok else 'FAIL'}")
    print(f"overall: {'PASS' if report['ok'] else 'FAIL'} (report {args.report})")
    return 0 if report["ok"] else 1


def wait_for_backfill(cluster: airflow_cluster.Cluster, n: int, timeout_s: float) -> list[dict]:
    """The backfill's ``n`` runs once each has ended: run id, logical date, state, end."""
    deadline = time.monotonic() + timeout_s
    while True:
        runs = cluster.query(
            "SELECT run_id, logical_date, state, extract(epoch from end_date) AS end "
            "FROM dag_run WHERE dag_id = :d AND run_type = 'backfill' ORDER BY logical_date",
            d=DAG,
        )
        if len(runs) == n and all(r["state"] in ("success", "failed") for r in runs):
            return [{**r, "end": float(r["end"])} for r in runs]
        if time.monotonic() > deadline:
            raise TimeoutError(f"the backfill's runs after {timeout_s:.0f} s: {runs}")
        time.sleep(5)


def run_figures(cluster: airflow_cluster.Cluster, run: dict, t0: float) -> dict:
    """A backfill run's month (the one before its logical date), state, wall seconds from the
    backfill's creation, its ``history`` wait, its stages and its day tasks' spans."""
    logical: datetime = run["logical_date"]
    month = (logical.date().replace(day=1) - timedelta(days=1)).strftime("%Y-%m")
    tasks = cluster.tasks(DAG, run["run_id"])
    ended = [t for t in tasks if t["end"]]
    history = [t for t in ended if t["task_id"] == "history"]
    spans = {
        name: [min(t["start"] for t in found), max(t["end"] for t in found)]
        for name in (*DAY_TASKS, "database")
        if (found := [t for t in ended if t["task_id"] == name and t["start"]])
    }
    return {
        "month": month,
        "run_id": run["run_id"],
        "state": run["state"],
        "wall_s": round(run["end"] - t0, 1),
        "history_wait_s": round(
            max(t["end"] for t in history) - min(t["start"] for t in history), 1
        )
        if history
        else None,  # fmt: skip
        "spans": spans,
        "stages": {s["name"]: {k: s[k] for k in STAGE_FIGURES} for s in stage_figures(tasks, {})},
    }


def side_by_side(runs: list[dict]) -> dict:
    """The most months whose day tasks ran at once, and whether each month's ``database``
    started after every earlier month's last ``process_day`` ended."""
    spans = [r["spans"] for r in runs]
    days = [(min(s[n][0] for n in DAY_TASKS if n in s), max(s[n][1] for n in DAY_TASKS if n in s))
            for s in spans if any(n in s for n in DAY_TASKS)]  # fmt: skip
    edges = sorted([(a, 1) for a, _ in days] + [(b, -1) for _, b in days])
    most, now = 0, 0
    for _, step in edges:
        now += step
        most = max(most, now)
    in_order = all(
        "database" in later and "process_day" in earlier
        and later["database"][0] >= earlier["process_day"][1]
        for n, later in enumerate(spans) for earlier in spans[:n]
    )  # fmt: skip
    return {"most_months_building_days_at_once": most, "in_order": in_order}


def verified(data_root: str, consumer: Path) -> dict[str, list[str]]:
    """Each release of the data root pulled into ``consumer`` and verified: its problems."""
    from gdelt_forecast.ground.config import load_config
    from gdelt_forecast.release.pull import pull
    from gdelt_forecast.release.verify import verify
    from gdelt_forecast.storage.working_copy import listed

    cfg = load_config(CONFIG, [], data_root)
    versions = sorted({r.split("/")[1] for r in listed(cfg, "releases") if r.count("/") > 1})
    local = load_config(CONFIG, [], consumer)
    found = {}
    for version in versions:
        pulled = pull(local, f"{data_root}/releases/{version}")
        found[version] = verify(Path(pulled.path))[:20]
    return found


def projection(report: dict, fetch_floor_s: float, cores: int) -> dict:
    """Ten years on this machine: a month's task CPU seconds (the runs' mean) over the cores,
    against the fetch's politeness floor of a month at GDELT's volume, times 120."""
    runs = [r for r in report["runs"] if r["state"] == "success"]
    if not runs:
        return {}
    cpu = sum(s["cpu_s"] or 0 for r in runs for s in r["stages"].values()) / len(runs)
    cpu += report["ingest"]["cpu_s"] / len(runs)
    return {
        "month_cpu_s": round(cpu, 1),
        "cpu_bound_h": round(TEN_YEARS * cpu / cores / 3600, 1),
        "fetch_floor_h": round(TEN_YEARS * fetch_floor_s / 3600, 1),
        "measured_months_s": report["wall_s"],
        "cores": cores,
    }


if __name__ == "__main__":
    sys.exit(main())
