"""Benchmark: normalize a synthetic month of bronze at real scale (wall time, peak memory).

It builds bronze straight from the real slot in tests/fixtures/gdelt (parsed once with
``parse_bytes``), in the layout and form ingest writes (``bronze.write_rows``): one zstd
Parquet per slot and table under <workdir>/normalize/bronze/{events,mentions}/date=D/
<slot>.parquet, plus ``_slot`` and ``_source_file``. Slot k (every 15 minutes from
2025-08-01 00:00, 96 a day) repeats every real export and mentions row with GLOBALEVENTID +
k * 10,000,000, DATEADDED /
MentionTimeDate set to the slot, SQLDATE / EventTimeDate moved by as many days as the slot
is from 2025-08-07 (so 895 of 909 rows keep SQLDATE == publish day, as in the real slot),
and "#k" appended to SOURCEURL and MentionIdentifier (real URLs repeat within a slot only;
without it the earliest-URL rule would drop every replicated row). 30 days are 2.6 million
export and 9.7 million mentions rows in 5,760 files. The bronze has its own data root, not
<workdir>/data, because the ingest bench writes other rows under the same file names there; it
is reused while its marker (written last) covers the days asked for.

Each run is ``gdelt_forecast.events.normalize.normalize`` over all the days with the default
config (configs/default.yaml; duckdb.memory_limit 3GB, all cores), in a fresh subprocess:
wall seconds of the call, and peak RSS as that child's ru_maxrss. DuckDB allocates outside
Python's heap, but in the same process, so ru_maxrss counts it. Runs: the default
(mentions_metric=distinct_sources, min_daily_mentions 50), the same with
mentions_metric=sum_num_mentions, and 1 day with the default for reference. Every slot
repeats the same 206 source names, so no quad reaches 50 distinct sources a day and the
default run keeps nothing; the sum_num_mentions run keeps 15% and so also measures silver.

Targets, for each run over all the days: wall < 120 s and peak RSS < 4 GiB. The exit
status is 1 when a target fails, or when records in differ from the export rows written.

Run: ``python -m bench.stages.normalize [--days 30] [--workdir bench-data]``. 30 days take
about 0.5 GB of disk and 15 s to generate the first time; a full run then takes under a
minute.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, timedelta
from pathlib import Path

from bench.harness import REPO, bench_parser, in_fresh_process, print_with_peak_rss, verdict

REAL = {t: REPO / f"tests/fixtures/gdelt/20250807220000.{t}.CSV" for t in ("export", "mentions")}
REAL_DAY = date(2025, 8, 7)
START = datetime(2025, 8, 1)
ID_STRIDE = 10_000_000  # a real slot's event IDs span ~1,000, so shifted slots never collide
WALL_TARGET_S, RSS_TARGET_MIB = 120.0, 4 * 1024
# Per table: bronze folder, the column set to the slot, the day-shifted one, the made-unique one.
TABLES = {
    "export": ("events", "DATEADDED", "SQLDATE", "SOURCEURL"),
    "mentions": ("mentions", "MentionTimeDate", "EventTimeDate", "MentionIdentifier"),
}
RUNS = {"default": [], "sum_num_mentions": ["events.mentions_metric=sum_num_mentions"]}


def data_root(workdir: Path) -> Path:
    return workdir / "normalize"


def shift_days(column, days: int):
    """YYYYMMDD or YYYYMMDDHHMMSS integers moved by ``days``, with pyarrow compute."""
    import pyarrow as pa
    import pyarrow.compute as pc

    fmt = "%Y%m%d" if pa.types.is_int32(column.type) else "%Y%m%d%H%M%S"
    ts = pc.strptime(pc.cast(column, pa.string()), format=fmt, unit="s")
    moved = pc.add(ts, pa.scalar(timedelta(days=days), pa.duration("s")))
    return pc.cast(pc.strftime(moved, format=fmt), column.type)


def slot_rows(day_rows, table: str, k: int, slot: str):
    """One day's shifted real rows as slot ``k``: unique IDs and URLs, the slot's time."""
    import pyarrow as pa
    import pyarrow.compute as pc

    _, slot_col, _, unique_col = TABLES[table]
    n, rows = day_rows.num_rows, day_rows
    at = rows.schema.get_field_index
    ids = pc.add(rows["GLOBALEVENTID"], pa.scalar(k * ID_STRIDE, pa.int64()))
    rows = rows.set_column(at("GLOBALEVENTID"), "GLOBALEVENTID", ids)
    rows = rows.set_column(at(slot_col), slot_col, pa.array([int(slot)] * n, pa.int64()))
    # A null URL stays null (emit_null), as the real one is.
    unique = pc.binary_join_element_wise(rows[unique_col], f"#{k}", "")
    rows = rows.set_column(at(unique_col), unique_col, unique)
    rows = rows.append_column("_slot", pa.array([int(slot)] * n, pa.int64()))
    return rows.append_column("_source_file", pa.array([f"{slot}.{table}.CSV.zip"] * n))


def day_slots(d: int) -> list[tuple[int, str, str]]:
    """(k, slot, bronze file name) of day ``d``'s 96 slots."""
    times = ((k, START + timedelta(minutes=15 * k)) for k in range(96 * d, 96 * (d + 1)))
    return [(k, f"{t:%Y%m%d%H%M%S}", f"{t:%Y%m%d%H%M%S}.parquet") for k, t in times]


def build_bronze(workdir: Path, days: int) -> dict[str, int]:
    """Write the bronze unless one covering this many days exists; return rows per table."""
    from gdelt_forecast.gdelt.bronze import write_rows
    from gdelt_forecast.gdelt.parse import parse_bytes

    root = data_root(workdir)
    marker = root / "bench.json"  # written last, so half-built bronze is never reused
    if marker.exists() and json.loads(marker.read_text())["days"] >= days:
        return {t: n * days for t, n in json.loads(marker.read_text())["rows_per_day"].items()}
    shutil.rmtree(root, ignore_errors=True)
    real = {t: parse_bytes(p.read_bytes(), t, p.name).rows for t, p in REAL.items()}
    # pyarrow's zstd writer releases the GIL, so both cores write.
    with ThreadPoolExecutor(max_workers=2) as pool:
        for d in range(days):
            day = START + timedelta(days=d)
            offset = (day.date() - REAL_DAY).days
            for table, rows in real.items():
                folder, _, dated, _ = TABLES[table]
                at = rows.schema.get_field_index(dated)
                day_rows = rows.set_column(at, dated, shift_days(rows[dated], offset))
                out = root / "bronze" / folder / f"date={day:%Y-%m-%d}"
                writes = [
                    pool.submit(write_rows, slot_rows(day_rows, table, k, slot), out / name, "zstd")
                    for k, slot, name in day_slots(d)
                ]
                for w in writes:  # a day at a time bounds memory; result() raises a failure
                    w.result()
            print(f"bronze: day {d + 1}/{days} written", file=sys.stderr)
    per_day = {t: rows.num_rows * 96 for t, rows in real.items()}
    marker.write_text(json.dumps({"days": days, "rows_per_day": per_day}))
    os.sync()  # else writeback of the new files competes with the first measured run
    return {t: n * days for t, n in per_day.items()}


# --- worker: runs in its own process and reports one JSON line -----------------------------


def work(workdir: Path, days: int, run: str) -> dict:
    from gdelt_forecast.events.normalize import normalize
    from gdelt_forecast.ground.config import REPO_DEFAULT, load_config

    cfg = load_config(REPO_DEFAULT, overrides=RUNS[run], data_root=data_root(workdir))
    first = START.date()
    t0 = time.perf_counter()
    summary = normalize(cfg, first, first + timedelta(days=days - 1))
    return {"seconds": time.perf_counter() - t0, "summary": summary.to_dict()}


# --- report ----------------------------------------------------------------------------------


def report(results: dict[tuple[str, int], dict], days: int, export_rows: int) -> bool:
    print(f"{'run':<18}{'days':>5}{'records in':>12}{'kept':>11}{'quads':>8}{'s':>8}", end="")
    print(f"{'peak RSS MiB':>14}")
    for (run, d), r in results.items():
        s = r["summary"]
        print(
            f"{run:<18}{d:>5}{s['records_in']:>12,}{s['records_kept']:>11,}{s['quads']:>8,}"
            f"{r['seconds']:>8.1f}{r['peak_rss_mib']:>14.0f}"
        )
    print()
    for (run, d), r in results.items():
        removed = ", ".join(f"{rule} -{n:,}" for rule, n in r["summary"]["removed"].items())
        print(f"{run}, {d} day(s) removed: {removed}")
    print()
    ok = True
    for run in RUNS:
        r = results[run, days]
        rows_ok = r["summary"]["records_in"] == export_rows
        wall_ok, rss_ok = r["seconds"] < WALL_TARGET_S, r["peak_rss_mib"] < RSS_TARGET_MIB
        ok &= rows_ok and wall_ok and rss_ok
        print(
            f"{run}, {days} day(s): records in = export rows written ({export_rows:,})"
            f" {verdict(rows_ok)}; wall {r['seconds']:.1f} s (target < {WALL_TARGET_S:.0f} s)"
            f" {verdict(wall_ok)}; peak RSS {r['peak_rss_mib']:,.0f} MiB"
            f" (target < {RSS_TARGET_MIB:,} MiB) {verdict(rss_ok)}"
        )
    print(f"overall: {verdict(ok)}")
    return ok


def main() -> int:
    parser = bench_parser(__doc__, RUNS)
    parser.add_argument("--days", type=int, default=30, help="days from 2025-08-01 (default 30)")
    args = parser.parse_args()
    if args.worker:
        result = work(args.workdir, args.days, args.worker)
        print_with_peak_rss(result)
        return 0
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows = build_bronze(args.workdir, args.days)
    print(
        f"bronze: {rows['export']:,} export and {rows['mentions']:,} mentions rows"
        f" in {2 * 96 * args.days:,} files, {args.days} day(s) from {START:%Y-%m-%d}\n"
    )
    plan = [(run, args.days) for run in RUNS] + ([("default", 1)] if args.days > 1 else [])
    results = {}
    for run, d in plan:
        print(f"measuring {run}, {d} day(s)", file=sys.stderr)
        results[run, d] = in_fresh_process(__spec__.name, run, args.workdir, d)
    return 0 if report(results, args.days, rows["export"]) else 1


if __name__ == "__main__":
    sys.exit(main())
