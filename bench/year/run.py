"""Benchmark: a simulated year of monthly refreshes, one after another as the schedule runs
them, to show what month N costs against month 1 (issue 51).

1. One GDELT mirror for every month (bench/month/mirror.py: ``--days-per-month`` days from
   each month's 1st, ``--slots-per-day`` slots a day, ``--pages`` source URLs a day at most,
   no missing or corrupt file) and the month bench's news web (``--hosts`` simulated hosts).
2. The month bench's engine, started once: with ``--storage s3`` (the default) the S3 server
   holding the data root, and with ``--engine celery`` (the default) Redis (the broker and
   the fetchers' politeness store), PostgreSQL and Airflow with ``--workers`` Celery workers.
3. For each month, from ``--first-month`` (default 2025-01, so that a December release holds
   the year, as ``release.history_start`` gives it): ``ingest`` of its days from the command
   line, then ``monthly_refresh`` for the month (``partial``), or with ``--engine inline``
   the same stages as commands run in this process one after the other, ingest and the
   rounds too (what the small run's test uses: Airflow's own cost is the month bench's to
   measure; a stage's peak RSS is then this process's so far); the round that the month
   before opened is resolved (``round resolve``) and the month's own round opened on the 1st
   of the next month (``round open --replay``, horizon 1, no grace day, so that the next
   month's second day resolves it), each in a fresh process (inline with ``--engine
   inline``); the release pulled from its
   storage into a consumer's data root that holds the releases before it (``release pull``:
   what a consumer transfers); the agent environment opened on the pulled release and every
   MIRAI tool timed (bench/agents/environment.py, cutoff the next month's 1st); the site
   built from the consumer's releases.

The report (``--report FILE.json``) has per month: each stage's wall and task seconds, CPU
seconds, peak RSS and bytes read and written (``rchar``/``wchar`` of its task processes:
files, pipes and sockets, so a bucket's traffic too); the warehouse's bytes and each of its
month files' inode (a file written again is a new one); the release's bytes and the bytes
new to it (files whose sha256 the month before's manifest does not list);
what its pull fetched; the rounds' seconds; the site's seconds and bytes; the environment's
open time, peak RSS and per-tool p50/p95. Then ``growth`` (per stage, the last month's CPU
and wall seconds over the first's), ``storage`` (the consumer's releases together, each file
counted once however many releases link it, against the last release alone; and the bucket's
``releases/``), and ``checks``: every month's run succeeded, its round opened, the month
before's round resolved, the last release verifies as sound. The exit status is 1 unless
every check holds.

A run at GDELT's volume outlasts a working session: after each month the report so far is
kept in ``WORKDIR/progress.json``; with ``--stop-after-s S`` the run stops cleanly after the
month under way once S seconds have passed (its report saying so; 0: after one month); and
``--resume`` goes on in the same ``--workdir`` from the first month not done, with the
mirror, the data root, the consumer's releases and the news web's port (its URLs are in the
mirror) as they were; the arguments that shape the data must be the same. Each month records
the part of the run it was built in (``part``), when it started and the load average at its
end (what else ran). With ``--mirai DIR`` (a checkout of yecchen/MIRAI), ``tools_vs_mirai``:
our tools and MIRAI's ``api_implementation.py`` on the last release, asked about its whole
history, side by side with bench/agents/environment.py's targets (reported, not a check).

Run: ``python -m bench.year.run --months N [--days-per-month D] [--slots-per-day K]
[--pages P] [--hosts H] [--storage s3|local] [--engine celery|inline] [--workers W]
[--worker-slots S] [--first-month YYYY-MM] [--calls C] [--mirai DIR] [--web-port PORT]
[--stop-after-s S] [--resume] [--workdir DIR] [--set section.key=value ...] --report
FILE.json`` (defaults: 12 months of every day at full
volume, S3, two workers). A run smaller than a day at full volume needs lower thresholds for
its test set to have queries (``--set testset.min_daily_mentions=10``, for instance).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack, redirect_stderr, redirect_stdout
from datetime import date, timedelta
from functools import partial
from pathlib import Path
from typing import TextIO

from bench.agents import environment as environment_bench
from bench.harness import REPO
from bench.harness import servers as local_servers
from bench.month import cluster as airflow_cluster
from bench.month import mirror as month_mirror
from bench.month import news_web
from bench.month.run import BUCKET, bench_overrides, run_cli, stage_figures, storage

DAG = "monthly_refresh"
RUSAGE = (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
STAGE_FIGURES = ("wall_s", "task_s", "cpu_s", "peak_rss_mb", "read_mb", "written_mb", "tries",
                 "bucket")  # fmt: skip
CONFIG = REPO / "configs/default.yaml"
# The rounds the bench opens: decided by the next month's second day, which its refresh
# ingests, and asking about every relation (a few days of history settle few).
ROUNDS = ["rounds.horizons=[1]", "rounds.grace_days=0", "rounds.base_rate_range=[0.0,1.0]"]
# The arguments that shape the data: a resumed run must be given the ones it started with.
SHAPE = ("months", "first_month", "days_per_month", "slots_per_day", "pages", "hosts", "storage",
         "engine", "set")  # fmt: skip


def resumed(progress: Path, args: argparse.Namespace) -> dict:
    """The report so far of the run that ``progress`` keeps, to go on with; ValueError where
    there is none or ``args`` would shape the data otherwise."""
    if not progress.is_file():
        raise ValueError(f"--resume: no run to go on with in {progress.parent} (no progress.json)")
    report = json.loads(progress.read_text(encoding="utf-8"))
    now = {k: str(v) for k, v in vars(args).items()}
    if changed := [f"--{k.replace('_', '-')}" for k in SHAPE if report["args"][k] != now[k]]:
        raise ValueError(f"--resume: {', '.join(changed)} differ from the run's "
                         "(it must go on with the data it started)")  # fmt: skip
    return report


def months_from(first: str, n: int) -> list[str]:
    year, month = map(int, first.split("-"))
    return [f"{year + (month - 1 + k) // 12}-{(month - 1 + k) % 12 + 1:02d}" for k in range(n)]


def month_days(month: str, per_month: int) -> list[date]:
    first = date.fromisoformat(f"{month}-01")
    following = (first.replace(day=28) + timedelta(days=4)).replace(day=1)
    return month_mirror.span(first, min(per_month, (following - first).days))


def next_first(month: str) -> date:
    first = date.fromisoformat(f"{month}-01")
    return (first.replace(day=28) + timedelta(days=4)).replace(day=1)


def manifest_files(release: Path) -> dict[str, tuple[str, int]]:
    listed = json.loads((release / "manifest.json").read_text())["files"]
    return {f["path"]: (f["sha256"], f["bytes"]) for f in listed}


def folder_bytes(folder: Path, seen: set | None = None) -> int:
    """The bytes of the files under ``folder``, each inode once (``seen``: across calls)."""
    seen = set() if seen is None else seen
    total = 0
    for path in folder.rglob("*"):
        if path.is_file() and (key := (path.stat().st_dev, path.stat().st_ino)) not in seen:
            seen.add(key)
            total += path.stat().st_size
    return total


def growth(months: list[dict]) -> dict:
    """Per stage, the last month's CPU and wall seconds over the first's."""
    first, last = months[0]["stages"], months[-1]["stages"]
    found = {}
    for name, figures in last.items():
        base = first.get(name)
        if not base:
            continue
        found[name] = {
            key: round(figures[key] / base[key], 2) if base.get(key) else None
            for key in ("cpu_s", "wall_s")
        }
    return found


def consumer_month(url: str, consumer: Path, cutoff: date, calls: int) -> dict:
    """The release pulled into the consumer's data root, the environment timed on it and the
    site built from the consumer's releases."""
    from gdelt_forecast.ground.config import load_config
    from gdelt_forecast.release.pull import pull
    from gdelt_forecast.site.build import build_site

    local = load_config(CONFIG, [], consumer)  # a bucket is reached by the AWS_* variables
    t0 = time.perf_counter()
    pulled = pull(local, url)
    pull_s = time.perf_counter() - t0
    release = Path(pulled.path)
    env = environment_bench.run_side("ours", release, None, calls, cutoff)
    t0 = time.perf_counter()
    site = consumer / "site"
    build_site(local, site)
    return {
        "pull": {
            "s": round(pull_s, 2),
            "files": pulled.files,
            "linked": pulled.linked,
            "fetched": pulled.fetched,
            "fetched_bytes": pulled.fetched_bytes,
        },  # fmt: skip
        "environment": {
            "open_s": round(env["open_s"], 3),
            "peak_rss_data_mib": round(env["peak_rss_data_mib"], 1),
            # unrounded: a look-up takes microseconds
            "calls": {
                k: {"p50_ms": v["p50_ms"], "p95_ms": v["p95_ms"]} for k, v in env["calls"].items()
            },
        },
        "site": {"s": round(time.perf_counter() - t0, 2), "bytes": folder_bytes(site)},
        "release_path": str(release),
    }


def tools_against_mirai(release: Path, repo: Path, calls: int, work: Path) -> dict:
    """Our tools and MIRAI's on ``release``, asked about its whole history, side by side
    (bench/agents/environment.py's targets)."""
    end = environment_bench.history_end(release)
    cutoff = end + timedelta(days=1)
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    span = (end - date.fromisoformat(manifest["history"]["start"])).days + 1
    layout = environment_bench.mirai_layout(release, work / "mirai-layout")
    ours = environment_bench.run_side("ours", release, None, calls, cutoff, span)
    theirs = environment_bench.run_side("mirai", release, repo, calls, cutoff, span, layout)
    return {
        "cutoff": cutoff.isoformat(),
        "days": span,
        "ours": ours,
        "mirai": theirs,
        "verdicts": environment_bench.compare(ours, theirs),
        "lines": environment_bench.report(ours, theirs),
    }


def year_arguments(parser: argparse.ArgumentParser, months: int) -> None:
    """The options of the simulated months, their storage and the Celery workers."""
    parser.add_argument("--months", type=int, default=months)
    parser.add_argument("--first-month", default="2025-01")
    parser.add_argument("--days-per-month", type=int, default=31, help="from each month's 1st")
    parser.add_argument("--slots-per-day", type=int, default=96)
    parser.add_argument("--pages", type=int, default=None, help="source URLs a day at most")
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--storage", choices=("s3", "local"), default="s3")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worker-slots", type=int, default=4)
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    year_arguments(parser, months=12)
    parser.add_argument("--engine", choices=("celery", "inline"), default="celery")
    parser.add_argument("--calls", type=int, default=10, help="timed calls per tool a month")
    parser.add_argument(
        "--mirai", type=Path,
        help="a checkout of yecchen/MIRAI: its tools against ours on the last release, over "
        "its whole history",
    )  # fmt: skip
    parser.add_argument("--timeout-s", type=float, default=4 * 3600, help="per month")
    parser.add_argument("--web-port", type=int, default=0, help="the news web's (0: any free)")
    parser.add_argument(
        "--stop-after-s", type=float,
        help="once this many seconds have passed, stop after the month under way (then "
        "--resume goes on)",
    )  # fmt: skip
    parser.add_argument(
        "--resume", action="store_true",
        help="go on with the run in --workdir from its first month not done",
    )  # fmt: skip
    parser.add_argument("--workdir", type=Path, default=REPO / "bench-data" / "year")
    parser.add_argument("--report", type=Path, required=True)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.months < 2:
        parser.error("--months: at least 2 (a month's round resolves in the next)")
    if args.days_per_month < 2:
        parser.error("--days-per-month: at least 2 (a round's target day is the next's 2nd)")
    months = months_from(args.first_month, args.months)
    started = time.monotonic()
    work = args.workdir.resolve()
    progress = work / "progress.json"
    if args.resume:
        try:
            report = resumed(progress, args)
        except ValueError as exc:
            parser.error(str(exc))
    else:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        report = {"args": {k: str(v) for k, v in vars(args).items()}, "months": [],
                  "checks": {}, "parts": 0}  # fmt: skip
    report["parts"] += 1
    checks: dict[str, bool] = report["checks"]
    log = work / "stages.log"
    with ExitStack() as stack:
        inline_log = stack.enter_context((work / "inline.log").open("a"))
        port = report.get("web_port", args.web_port)
        web = stack.enter_context(news_web.NewsWeb(args.hosts, port=port))
        report["web_port"] = web.port  # in the mirror's URLs: a resumed run listens on it again
        days = [d for m in months for d in month_days(m, args.days_per_month)]
        if not (work / "mirror.done").exists():  # written once the mirror is whole
            t0 = time.perf_counter()
            made = month_mirror.build(
                work / "mirror", days, args.slots_per_day, hosts=args.hosts, port=web.port,
                pages=args.pages, missing=0, corrupt=0,
            )  # fmt: skip
            (work / "mirror.done").touch()
            print(f"mirror: {len(made.slots)} slots of {len(days)} days "
                  f"({time.perf_counter() - t0:.1f} s)", flush=True)  # fmt: skip
        broker = None
        if args.engine == "celery":  # the broker, and the workers' shared politeness store
            broker = stack.enter_context(local_servers.redis(work / "redis"))
        overrides = bench_overrides(work / "mirror", web, broker, work, [*ROUNDS, *args.set])
        data_root, env, s3 = storage(stack, args.storage, work)  # the pulls call the bucket
        from gdelt_forecast.ground.config import load_config
        from gdelt_forecast.storage.working_copy import local_root

        cfg = load_config(CONFIG, overrides, data_root=data_root)
        machine = local_root(cfg) if cfg.remote else Path(data_root)  # the warehouse is here
        common = ["--config", str(CONFIG), "--data-root", data_root]
        common += [x for o in overrides for x in ("--set", o)]
        cluster = None
        if args.engine == "celery":
            database = stack.enter_context(local_servers.postgres())
            cluster = stack.enter_context(
                airflow_cluster.Cluster(work / "airflow", database, broker, env,
                                        workers=args.workers, concurrency=args.worker_slots)
            )  # fmt: skip
            t0 = time.perf_counter()
            cluster.start(init=tuple(common))
            report["airflow_start_s"] = round(time.perf_counter() - t0, 1)
        done = report["months"]
        before = manifest_files(Path(done[-1]["release_path"])) if done else {}
        for n, month in enumerate(months):
            if n < len(done):
                continue
            mine = month_days(month, args.days_per_month)
            figures: dict = {
                "month": month,
                "days": len(mine),
                "stages": {},
                "part": report["parts"],
                "started": time.strftime("%FT%T"),
            }
            span = ["--start", f"{mine[0]}T00:00", "--end", f"{mine[-1]}T23:45"]
            run = partial(_command, args.engine, common=common, log=log, env=env, out=inline_log)
            ingest = run("ingest", ["ingest", *span])
            figures["stages"]["ingest"] = _cli_figures(ingest)
            version = f"{month.replace('-', '.')}.0"
            run_id = f"year-{month}"
            conf = {"month": month, "partial": True, "version": version, "config": str(CONFIG),
                    "data_root": data_root, "set": overrides}  # fmt: skip
            t0 = time.perf_counter()
            if cluster:
                cluster.trigger(DAG, run_id, conf)
                state = cluster.wait(DAG, run_id, args.timeout_s, poll_s=0.5)
            else:
                state = _from_the_command_line(month, mine, version, run, figures)
            figures["refresh_s"] = round(time.perf_counter() - t0, 1)
            figures["state"] = state
            counts = s3.counts() if s3 else {}
            if cluster:
                tasks = cluster.tasks(DAG, run_id)
                for stage in stage_figures(tasks, _delta(counts, report.get("bucket", {}))):
                    figures["stages"][stage["name"]] = {k: stage[k] for k in STAGE_FIGURES}
            report["bucket"] = counts  # the server's counts so far: a month's are the difference
            checks[f"{month} refresh"] = state == "success"
            print(f"{month}: monthly_refresh {state} in {figures['refresh_s']} s", flush=True)
            if state != "success":
                report["failed"] = figures  # not kept as done: a resumed run builds it again
                break
            rounds = {}
            if n:
                due = ["round", "resolve", "--round", f"year-{months[n - 1]}"]
                resolved = run("resolve", due)
                rounds["resolve"] = _cli_figures(resolved)
                checks[f"{months[n - 1]} round resolved"] = resolved["code"] == 0
            opening = ["--round", run_id, "--open-date", next_first(month).isoformat()]
            opened = run("open", ["round", "open", *opening, "--replay"])
            rounds["open"] = _cli_figures(opened)
            checks[f"{month} round opened"] = opened["code"] == 0
            figures["rounds"] = rounds
            figures["warehouse_bytes"] = folder_bytes(machine / "warehouse") + (
                (machine / "warehouse.duckdb").stat().st_size
            )
            # Each month file's inode: one written again is a new one (renamed into place).
            figures["warehouse_files"] = {
                p.relative_to(machine).as_posix(): p.stat().st_ino
                for p in sorted((machine / "warehouse").rglob("*.parquet"))
            }
            url = (f"{data_root}/releases/{version}" if s3
                   else str(Path(data_root) / "releases" / version))  # fmt: skip
            figures |= consumer_month(url, work / "consumer", next_first(month), args.calls)
            files = manifest_files(Path(figures["release_path"]))
            shared = set(before.values())
            figures["release_bytes"] = sum(b for _, b in files.values())
            figures["release_new_bytes"] = sum(
                size for digest, size in files.values() if (digest, size) not in shared
            )
            before = files
            figures["load_avg"] = [round(x, 2) for x in os.getloadavg()]  # what else ran
            done.append(figures)
            report.pop("failed", None)
            progress.write_text(json.dumps(report, indent=2, default=str))
            _print_month(figures)
            late = args.stop_after_s is not None and time.monotonic() - started > args.stop_after_s
            if late and n + 1 < len(months):
                report["stopped_before"] = months[n + 1]
                break
        if len(done) < len(months):
            report["ok"] = False
            for path in (progress, args.report):
                path.write_text(json.dumps(report, indent=2, default=str))
            where = report.get("stopped_before") or report.get("failed", {}).get("month")
            print(f"stopped before {where}: {len(done)} of {len(months)} months done; "
                  f"go on with --resume (report so far in {args.report})")  # fmt: skip
            return 1
        last = Path(done[-1]["release_path"])
        from gdelt_forecast.release.verify import verify

        problems = verify(last) if last.is_dir() and last != work else ["no release"]
        checks["last release verifies"] = not problems
        if args.mirai and last.is_dir() and last != work:
            report["tools_vs_mirai"] = tools_against_mirai(last, args.mirai, args.calls, work)
            print("\n".join(report["tools_vs_mirai"].pop("lines")), flush=True)
        releases = work / "consumer" / "releases"
        seen: set = set()
        together = sum(folder_bytes(r, seen) for r in sorted(releases.iterdir()) if r.is_dir())
        alone = folder_bytes(last)
        report["storage"] = {
            "releases_together_bytes": together,
            "last_alone_bytes": alone,
            "together_over_last": round(together / alone, 3) if alone else None,
            "bucket_releases_bytes": _bucket_bytes("releases") if s3 else None,
        }
    report["growth"] = growth(report["months"]) if report["months"] else {}
    report["checks"] = checks
    report["problems"] = problems[:20]
    report["ok"] = all(checks.values()) and len(report["months"]) == args.months
    args.report.write_text(json.dumps(report, indent=2, default=str))
    print(f"growth (month {len(report['months'])} over month 1): {json.dumps(report['growth'])}")
    print(f"storage: {json.dumps(report['storage'])}")
    for name, ok in checks.items():
        print(f"check {name}: {'PASS' if ok else 'FAIL'}")
    print(f"overall: {'PASS' if report['ok'] else 'FAIL'} (report {args.report})")
    return 0 if report["ok"] else 1


def _command(engine: str, name: str, command: list[str], *, common: list[str], log: Path,
             env: dict, out: TextIO) -> dict:  # fmt: skip
    """``gdelt-forecast COMMAND`` and its costs: in a fresh process, or in this one inline
    (printing into ``out``, the log kept open for the run: the CLI's logging handler, made at
    the first command, keeps writing to it)."""
    if engine != "inline":
        return run_cli(name, command, common, log, env)
    from gdelt_forecast.cli import main
    from gdelt_forecast.orchestration.tasks import io_bytes

    def used() -> float:
        return sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage, RUSAGE))

    t0, cpu, (read, written) = time.perf_counter(), used(), io_bytes()
    with redirect_stdout(out), redirect_stderr(out):
        try:
            code = main([*command, *common])
        except SystemExit as exc:  # a usage error
            code = exc.code if isinstance(exc.code, int) else 2
    now = io_bytes()
    result = {
        "code": code,
        "wall_s": time.perf_counter() - t0,
        "cpu_s": used() - cpu,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "read_bytes": now[0] - read,
        "written_bytes": now[1] - written,
    }
    print(f"{name:<10} {result['wall_s']:8.1f} s wall {result['cpu_s']:8.1f} s CPU  exit {code}")
    return result


def _from_the_command_line(
    month: str,
    days: list[date],
    version: str,
    run: Callable[[str, list[str]], dict],
    figures: dict,
) -> str:
    """The month's refresh as ``monthly_refresh`` runs it, stage by stage from the command
    line; "success", or "failed" at the first stage that fails."""
    span = ["--start-date", days[0].isoformat(), "--end-date", days[-1].isoformat()]
    month_args = ["--month", month]
    for name, command in (
        ("normalize", ["normalize", *span]),
        ("fetch", ["articles", "fetch", *span]),
        ("process", ["articles", "process", *span]),
        ("database", ["database"]),
        ("testset", ["testset", *month_args]),
        ("timelines", ["timelines", *month_args]),
        ("tasks", ["tasks", *month_args]),
        ("reasoning", ["reasoning", *month_args]),
        ("release", ["release", *month_args, "--version", version]),
    ):
        figures["stages"][name] = _cli_figures(run(name, command))
        if figures["stages"][name]["code"] != 0:
            return "failed"
    return "success"


def _cli_figures(result: dict) -> dict:
    return {
        "wall_s": round(result.get("wall_s", 0), 2),
        "cpu_s": round(result.get("cpu_s", 0), 2),
        "peak_rss_mb": round(result.get("peak_rss_mb", 0), 1),
        "read_mb": round(result.get("read_bytes", 0) / 1e6, 1),
        "written_mb": round(result.get("written_bytes", 0) / 1e6, 1),
        "code": result["code"],
    }


def _delta(now: dict, before: dict) -> dict:
    """The bucket's counts of this month: each stage's objects and bytes since the last."""
    found = {}
    for stage, counts in now.items():
        old = before.get(stage, {})
        found[stage] = {k: v - old.get(k, 0) for k, v in counts.items() if isinstance(v, int)}
    return found


def _bucket_bytes(prefix: str) -> int:
    """The bytes of the bucket's objects under the data root's ``prefix`` (copies count)."""
    import s3fs

    return s3fs.S3FileSystem(skip_instance_cache=True).du(f"{BUCKET}/data/{prefix}")


def _print_month(m: dict) -> None:
    stages = "  ".join(
        f"{name} {s['wall_s']:.1f}s/{s['cpu_s']:.1f}cpu" for name, s in m["stages"].items()
    )
    env = m["environment"]
    slowest = max(env["calls"].items(), key=lambda kv: kv[1]["p95_ms"])
    print(
        f"{m['month']}: {stages}\n  warehouse {m['warehouse_bytes'] / 1e6:.1f} MB, release "
        f"{m['release_bytes'] / 1e6:.1f} MB ({m['release_new_bytes'] / 1e6:.1f} MB new), pull "
        f"fetched {m['pull']['fetched_bytes'] / 1e6:.1f} MB ({m['pull']['linked']} files "
        f"linked), site {m['site']['s']:.1f} s, environment open {env['open_s']:.2f} s, "
        f"slowest p95 {slowest[0]} {slowest[1]['p95_ms']:.1f} ms",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
