"""Benchmark: ingest of cached GDELT days against the pandas way and the pyarrow floor.

It builds synthetic days from the real slot in tests/fixtures/gdelt: slot k (every 15
minutes from 2025-08-01 00:00, 96 a day) repeats every real export and mentions row with
GLOBALEVENTID + k * 10,000,000 and DATEADDED / MentionTimeDate set to the slot; all other
fields stay byte for byte. The zips and masterfilelist.txt go to <workdir>/mirror and are
reused by later runs.

For each number of days it then measures, each in a fresh subprocess (peak RSS is that
child's ru_maxrss; each figure is the median-time run of --repeat, default 3), over the
same zips; times cover the work, not the interpreter's start-up or the worker's imports:

- ingest: ``gdelt_forecast.gdelt.ingest.ingest`` on files already in the raw cache (md5 check,
  parse, validate, type, write bronze Parquet); an unmeasured first ingest fills the cache;
- pandas: ``pd.read_csv(sep="\\t", header=None, dtype=str, quoting=3).to_parquet()`` per file;
- floor: unzip (zipfile, zlib's inflate: the floor the targets were set against, though
  ingest now inflates with ISA-L) plus pyarrow's CSV reader (its default threads) with every
  column a string, nothing written.

Targets: ingest throughput >= 3x pandas, ingest time <= 1.5x the floor, and ingest peak
RSS for the most days within 1.25x of that for the fewest (it must not grow with the
range). The exit status is 1 when a target fails.

Run: ``make bench``, or ``python -m bench.stages.ingest [--days 1,7] [--workdir bench-data]
[--repeat 3]``. 7 days take about 0.5 GB of disk (zips, raw cache, outputs).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

from bench.harness import REPO, bench_parser, in_fresh_process, print_with_peak_rss, verdict

REAL = {t: REPO / f"tests/fixtures/gdelt/20250807220000.{t}.CSV" for t in ("export", "mentions")}
FIELDS = {"export": 61, "mentions": 16}
SLOT_FIELD = {"export": 59, "mentions": 2}  # 0-based: DATEADDED, MentionTimeDate
START = datetime(2025, 8, 1)
ID_STRIDE = 10_000_000  # a real slot's event IDs span ~1,000, so shifted slots never collide
TARGET_VS_PANDAS, TARGET_VS_FLOOR, MEMORY_TOLERANCE = 3.0, 1.5, 1.25  # issue 51's


def slots(days: int) -> list[str]:
    return [(START + timedelta(minutes=15 * k)).strftime("%Y%m%d%H%M%S") for k in range(96 * days)]


def zips(workdir: Path, days: int) -> list[Path]:
    return [workdir / "mirror" / f"{s}.{t}.CSV.zip" for s in slots(days) for t in REAL]


def shifted(data: bytes, table: str, k: int, slot: str) -> bytes:
    """The real rows as slot ``k``: unique event IDs, and the slot time so rows land on its day."""
    out = []
    for line in data.splitlines():
        fields = line.split(b"\t")
        fields[0] = b"%d" % (int(fields[0]) + k * ID_STRIDE)
        fields[SLOT_FIELD[table]] = slot.encode()
        out.append(b"\t".join(fields))
    return b"\n".join(out) + b"\n"


def build_mirror(workdir: Path, days: int) -> None:
    """Write the mirror unless one with at least this many slots exists."""
    from gdelt_forecast.gdelt.mirror import add_file, write_masterfile

    mirror, wanted = workdir / "mirror", slots(days)
    marker = mirror / "bench.json"  # written last, so a half-built mirror is never reused
    if marker.exists() and json.loads(marker.read_text())["slots"] >= len(wanted):
        return
    # The raw cache and outputs belong to the old mirror (other md5s): start afresh.
    for name in ("mirror", "data", "pandas-out"):
        shutil.rmtree(workdir / name, ignore_errors=True)
    real = {t: p.read_bytes() for t, p in REAL.items()}
    entries = []
    for k, slot in enumerate(wanted):
        for table, data in real.items():
            entries.append(add_file(mirror, f"{slot}.{table}.CSV", shifted(data, table, k, slot)))
        if (k + 1) % 96 == 0:
            print(f"mirror: day {(k + 1) // 96}/{days} written", file=sys.stderr)
    write_masterfile(mirror, entries)
    marker.write_text(json.dumps({"slots": len(wanted)}))


def csv_bytes(paths: list[Path]) -> int:
    total = 0
    for path in paths:
        with zipfile.ZipFile(path) as zf:
            total += sum(info.file_size for info in zf.infolist())
    return total


# --- workers: each runs in its own process and reports one JSON line ----------------------


def work_ingest(workdir: Path, days: int) -> dict:
    from gdelt_forecast.gdelt.ingest import ingest
    from gdelt_forecast.ground.config import load_config

    base_url = f"gdelt.base_url={(workdir / 'mirror').resolve().as_uri()}"
    cfg = load_config(overrides=[base_url], data_root=workdir / "data")
    wanted = slots(days)
    first, last = (datetime.strptime(s, "%Y%m%d%H%M%S") for s in (wanted[0], wanted[-1]))
    t0 = time.perf_counter()
    summary = ingest(cfg, first, last, list(REAL))
    seconds = time.perf_counter() - t0
    extra = {"files": summary.files, "cached": summary.cached, "rejected": summary.rows_rejected}
    return {"rows": summary.lines_read, "seconds": seconds, **extra}


def work_pandas(workdir: Path, days: int) -> dict:
    import pandas as pd

    out = workdir / "pandas-out"
    out.mkdir(exist_ok=True)
    rows, t0 = 0, time.perf_counter()
    for path in zips(workdir, days):
        df = pd.read_csv(path, sep="\t", header=None, dtype=str, quoting=3)
        df.to_parquet(out / path.name.replace(".CSV.zip", ".parquet"))
        rows += len(df)
    return {"rows": rows, "seconds": time.perf_counter() - t0}


def work_floor(workdir: Path, days: int) -> dict:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rows, t0 = 0, time.perf_counter()
    for path in zips(workdir, days):
        with zipfile.ZipFile(path) as zf:
            data = zf.read(zf.namelist()[0])
        n = FIELDS[path.name.split(".")[1]]
        table = pacsv.read_csv(
            pa.py_buffer(data),
            read_options=pacsv.ReadOptions(autogenerate_column_names=True),
            parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False),
            convert_options=pacsv.ConvertOptions(
                column_types={f"f{i}": pa.string() for i in range(n)}
            ),
        )
        rows += table.num_rows
    return {"rows": rows, "seconds": time.perf_counter() - t0}


WORKERS = {"ingest": work_ingest, "pandas": work_pandas, "floor": work_floor}


def median_run(kind: str, workdir: Path, days: int, repeat: int) -> dict:
    """The run with the median time out of ``repeat`` fresh processes (1-day runs are short)."""
    runs = sorted(
        (in_fresh_process(__spec__.name, kind, workdir, days) for _ in range(repeat)),
        key=lambda r: r["seconds"],
    )
    return runs[len(runs) // 2]


def warm_cache(workdir: Path, days: int) -> None:
    """Fill the raw cache with one ingest so the measured ingests find every file cached."""
    if len(list((workdir / "data/raw/gdelt").rglob("*.zip"))) >= len(zips(workdir, days)):
        return
    print(f"warm-up: first ingest of {days} day(s) fills the raw cache", file=sys.stderr)
    in_fresh_process(__spec__.name, "ingest", workdir, days)


# --- report ----------------------------------------------------------------------------------


def report(results: dict[tuple[str, int], dict], days: list[int]) -> bool:
    head = f"{'run':<7}{'days':>5}{'rows':>12}{'CSV MB':>9}{'s':>8}{'rows/s':>11}{'MB/s':>8}"
    print(f"{head}{'peak RSS MiB':>14}")
    for (kind, d), r in results.items():
        mb = r["csv_bytes"] / 1e6
        print(
            f"{kind:<7}{d:>5}{r['rows']:>12,}{mb:>9.1f}{r['seconds']:>8.1f}"
            f"{r['rows'] / r['seconds']:>11,.0f}{mb / r['seconds']:>8.1f}{r['peak_rss_mib']:>14.0f}"
        )
    print()
    ok = True
    for d in days:
        ing, pan, flo = (results[k, d]["seconds"] for k in ("ingest", "pandas", "floor"))
        vs_pandas, vs_floor = pan / ing, ing / flo  # same rows, so a time ratio is a rate ratio
        ok &= vs_pandas >= TARGET_VS_PANDAS and vs_floor <= TARGET_VS_FLOOR
        print(
            f"{d} day(s): ingest/pandas throughput {vs_pandas:.2f}x (target >= {TARGET_VS_PANDAS}x)"
            f" {verdict(vs_pandas >= TARGET_VS_PANDAS)}; ingest/floor time {vs_floor:.2f}x"
            f" (target <= {TARGET_VS_FLOOR}x) {verdict(vs_floor <= TARGET_VS_FLOOR)}"
        )
    if len(days) > 1:
        lo, hi = (results["ingest", d]["peak_rss_mib"] for d in (days[0], days[-1]))
        growth = hi / lo
        ok &= growth <= MEMORY_TOLERANCE
        print(
            f"ingest peak RSS {days[-1]} days vs {days[0]}: {hi:.0f} / {lo:.0f} MiB = {growth:.2f}x"
            f" (target <= {MEMORY_TOLERANCE}x) {verdict(growth <= MEMORY_TOLERANCE)}"
        )
    print(f"overall: {verdict(ok)}")
    return ok


def main() -> int:
    parser = bench_parser(__doc__, WORKERS, "runs per figure, median kept")
    parser.add_argument("--days", default="1,7", help="comma-separated day counts (default 1,7)")
    args = parser.parse_args()
    days = sorted({int(d) for d in args.days.split(",")})
    if args.worker:
        result = WORKERS[args.worker](args.workdir, days[0])
        print_with_peak_rss(result)
        return 0
    args.workdir.mkdir(parents=True, exist_ok=True)
    build_mirror(args.workdir, days[-1])
    warm_cache(args.workdir, days[-1])
    results = {}
    for d in days:
        size = csv_bytes(zips(args.workdir, d))
        for kind in WORKERS:
            print(f"measuring {kind}, {d} day(s)", file=sys.stderr)
            run = median_run(kind, args.workdir, d, args.repeat)
            results[kind, d] = {**run, "csv_bytes": size}
        ing = results["ingest", d]
        if ing["cached"] != ing["files"] or ing["rejected"]:
            sys.exit(f"ingest of {d} day(s): not all cached, or rows rejected: {ing}")
        if len({results[k, d]["rows"] for k in WORKERS}) != 1:
            sys.exit(f"{d} day(s): the runs read different row counts")
    return 0 if report(results, days) else 1


if __name__ == "__main__":
    sys.exit(main())
