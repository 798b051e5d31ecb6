"""Benchmark: a simulated month at GDELT's real volume through every stage, then its audit
(issue 25; a first version).

It builds the month's mirror (bench/month_mirror.py: ``--slots-per-day`` slots a day, 96 at
full volume, with missing and corrupt files) and serves it from a file:// URL, starts the
news web (bench/news_web.py: ``--hosts`` simulated news hosts on 127.0.0.1, reached through
``articles.resolve``), then runs the month's stages in order as the command line runs them,
each in a fresh process: ``ingest``, ``normalize``, ``articles fetch`` (with the default
politeness), ``articles process``, ``database``, ``testset``, ``timelines``, ``tasks``,
``reasoning`` and ``release``; per stage its wall and CPU seconds and peak RSS. Then
bench/month_audit.py's audit and ``release verify``. The report (``--report FILE.json``)
holds ``stages``, ``workers``, ``release`` and ``audit``; the exit status is 1 when the audit
or the release fails.

Not yet here (issue 25): Airflow on Celery workers with Redis and PostgreSQL, the data root
in a bucket, and the faults; ``workers`` is ``["inline"]``: the stages run one after another
on this machine.

Run: ``python bench/bench_month.py --days 1 [--slots-per-day 96] [--hosts 200]
[--workdir bench-data/month] [--set section.key=value ...] --report month.json``. A run
smaller than a day at full volume needs lower thresholds for the test set to have queries
(``--set testset.min_daily_mentions=10``, for instance).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import month_audit
import month_mirror
import news_web

REPO = Path(__file__).resolve().parents[1]
START = date(2025, 8, 1)
MONTH = "2025-08"


def stage_commands(days: int) -> list[tuple[str, list[str]]]:
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
        ("release", ["release", "--month", MONTH, "--version", "bench-month"]),
    ]


# Run by each stage's process: the CLI as a user runs it, then one JSON line of its costs.
WORKER = """
import json, resource, sys, time
from gdelt_forecast.cli import main
t0 = time.perf_counter()
code = main(sys.argv[1:])
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"code": code, "wall_s": time.perf_counter() - t0,
                  "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024}))
"""


def run_stage(name: str, args: list[str], common: list[str], log: Path) -> dict:
    with log.open("a") as out:
        done = subprocess.run([sys.executable, "-c", WORKER, *args, *common],
                              stdout=subprocess.PIPE, stderr=out, text=True, cwd=REPO)  # fmt: skip
    lines = done.stdout.strip().splitlines()
    result = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {"code": -1}
    result["name"] = name
    result["summary"] = lines[-2] if len(lines) > 1 else ""
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=1)
    parser.add_argument("--slots-per-day", type=int, default=96)
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--workdir", type=Path, default=REPO / "bench-data" / "month")
    parser.add_argument("--report", type=Path, required=True)
    parser.add_argument(
        "--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
        help="a config override for every stage (a smaller run's thresholds, say)",
    )  # fmt: skip
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    log = args.workdir / "stages.log"
    with news_web.NewsWeb(args.hosts) as web:
        t0 = time.perf_counter()
        made = month_mirror.build(args.workdir / "mirror", START, args.days, args.slots_per_day,
                                  hosts=args.hosts, port=web.port)  # fmt: skip
        rows = f"{made.rows['export']:,} export and {made.rows['mentions']:,} mention rows"
        print(f"mirror: {len(made.slots)} slots, {rows} ({time.perf_counter() - t0:.1f} s)")
        common = ["--config", str(REPO / "configs/default.yaml"),
                  "--data-root", str(args.workdir / "data"),
                  "--set", f"gdelt.base_url={(args.workdir / 'mirror').as_uri()}"]  # fmt: skip
        for override in [*web.fetch_config(), *args.set]:
            common += ["--set", override]
        stages = []
        for name, command in stage_commands(args.days):
            result = run_stage(name, command, common, log)
            stages.append(result)
            print(f"{name:<10} {result.get('wall_s', 0):8.1f} s wall {result.get('cpu_s', 0):8.1f}"
                  f" s CPU {result.get('peak_rss_mb', 0):7.0f} MB  exit {result['code']}  "
                  f"{result['summary'][:120]}")  # fmt: skip
        requests = dict(web.counts)
    release = args.workdir / "data" / "releases" / "bench-month"
    audit = month_audit.audit(args.workdir / "mirror", args.workdir / "data", made.missing,
                              made.corrupt)  # fmt: skip
    from gdelt_forecast.release.verify import verify

    problems = verify(release) if release.exists() else ["no release"]
    audit["release"] = {"ok": not problems, "problems": problems[:20]}
    audit["stages"] = {"ok": all(s["code"] == 0 for s in stages)}
    audit["ok"] = all(v["ok"] for k, v in audit.items() if k != "ok")
    report = {"days": args.days, "slots_per_day": args.slots_per_day, "hosts": args.hosts,
              "stages": stages, "workers": ["inline"], "release": str(release),
              "news_web": requests, "audit": audit}  # fmt: skip
    args.report.write_text(json.dumps(report, indent=2, default=str))
    for name, check in audit.items():
        if name != "ok":
            print(f"audit {name}: {'PASS' if check['ok'] else 'FAIL'} "
                  + json.dumps({k: v for k, v in check.items() if k != "ok"})[:300])  # fmt: skip
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"overall: {'PASS' if audit['ok'] else 'FAIL'} (report {args.report}; this process's "
          f"peak RSS {peak:.0f} MB)")  # fmt: skip
    return 0 if audit["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
