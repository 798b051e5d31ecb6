"""Benchmark: the agent environment (``gdelt_forecast.environment``) against MIRAI's own
``APIs/api_implementation.py`` on the same release, in the same run.

The release is the release bench's synthetic month (60,000 quads over 2025-08, with its news,
quad_docs, and MIRAI's data_kg.csv / data_news.csv built from them by ``release mirai``); it
is built with ``python -m bench.stages.release --repeat 2`` (its least) when
<workdir>/release/releases has none (or with ``--rebuild``). Each side runs in a fresh
process:

- **open**: ours is ``open_environment(release, cutoff)``; MIRAI's is importing its module,
  which reads the two CSVs into pandas and the info folder, from a folder laid out as its
  ``./../data`` expects, with ``DEFAULT_END_DATE`` set to the day before our cutoff;
- **calls**: each function with typical arguments (the most active country pair, the
  ``--days`` before the cutoff, first-level relation 04, keyword "trade", a text
  description), repeated ``--calls`` times or until 20 s have passed: p50 and p95 of the
  wall time per call (a call of less than a millisecond is timed as the mean of a batch
  that lasts about one);
- **peak RSS**: VmHWM after the calls that need no embedding model ("data"), and at the
  end, after the fuzzy look-ups have loaded all-MiniLM-L6-v2 ("all"), which both sides load
  alike (MIRAI's ``openai.Embedding.create`` answers with that model: the shims of
  tests/environment/mirai.py, which imports MIRAI's module for this bench and the tests).

Any release can be measured instead (``--release DIR``, the cutoff the day after its
history unless ``--cutoff``; ``--days N``: the span the calls ask about, 30 by default). A
release that lacks MIRAI's two CSVs (every release since they are built on demand) gets them
built by ``release mirai`` into <workdir>/mirai-layout/<version>, checked against its
manifest, for MIRAI's side alone. The year bench (bench/year/run.py) measures its December
release so, over its eleven months.

Targets (issue 51's, for a year): every function that reads the data (``DATA``) at least 10x
faster than MIRAI's at p50; the code and name look-ups level (ours within 1.2x of MIRAI's);
every p95 of ours under 200 ms; open time and peak RSS (data) a tenth of MIRAI's or less.
MIRAI's code comes from ``--mirai`` or $MIRAI_REPO (a checkout of yecchen/MIRAI, never part of
this repository); without it, ours is measured alone.

Run: ``python -m bench.agents.environment [--workdir bench-data] [--mirai PATH] [--calls 20]
[--release DIR [--cutoff DATE] [--days N]]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import types
from datetime import date, timedelta
from pathlib import Path

from bench.harness import REPO, module, verdict
from gdelt_forecast.contract.names import MANIFEST
from gdelt_forecast.release.mirai_database import FILES, build

CUTOFF = date(2025, 8, 31)  # every day of the synthetic August is visible
BUDGET_S = 20.0
BATCH_S = 0.001
SPAN_DAYS = 30
# The functions that read the data; the others are the code and name look-ups (dictionary
# reads on both sides, and the fuzzy ones one embedding each).
DATA = (
    "count_events", "get_events", "get_events(text)", "get_entity_distribution",
    "get_relation_distribution", "count_news_articles", "get_news_articles",
    "get_news_articles(text)", "browse_news_article",
)  # fmt: skip
FASTER = 10.0  # a data function's p50, MIRAI's over ours, at least
LEVEL = 1.2  # a look-up's p50, ours over MIRAI's, at most
P95_MS = 200.0
SHARE = 0.1  # open time and peak RSS (data), ours over MIRAI's, at most


def release_path(workdir: Path, rebuild: bool) -> Path:
    releases = workdir / "release" / "releases"
    if rebuild or not (releases / "LATEST").exists():
        cmd = module("bench.stages.release", "--repeat", "2", "--workdir", str(workdir))
        # Its own targets are its business (bench/stages/release.py); a release is what
        # counts here.
        subprocess.run(cmd, stdout=subprocess.DEVNULL, cwd=REPO)
    release = releases / (releases / "LATEST").read_text().strip()
    if not (release / FILES["data_kg"]).exists():  # MIRAI's module reads them: built once
        build(release)
    return release


def _rss_mib() -> float:
    """This process's peak RSS: Linux's VmHWM, which an exec resets (``ru_maxrss`` keeps the
    parent's peak across fork and exec: a worker started by a large bench process would
    report the bench's), else ru_maxrss."""
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _busiest_pair(release: Path) -> tuple[str, str]:
    import duckdb

    return duckdb.execute(
        f"SELECT head, tail FROM read_parquet('{release}/quads/*.parquet') "
        "GROUP BY ALL ORDER BY count(*) DESC, head, tail LIMIT 1"
    ).fetchone()


def _calls(
    api, t, pair: tuple[str, str], cutoff: date, span: int = SPAN_DAYS
) -> list[tuple[str, bool, object]]:
    """(name, needs embeddings, zero-argument callable) for each function, typical args; the
    date range, the ``span`` days before ``cutoff``."""
    last = cutoff - timedelta(days=1)
    days = t.DateRange(
        start_date=t.Date((last - timedelta(days=span - 1)).isoformat()),
        end_date=t.Date(last.isoformat()),
    )
    head, tail = [t.ISOCode(pair[0])], [t.ISOCode(pair[1])]
    rel = [t.CAMEOCode("04")]
    title = api.get_news_articles(date_range=days, head_entities=head)[0]
    return [
        (
            "count_events",
            False,
            lambda: api.count_events(date_range=days, head_entities=head, relations=list(rel)),
        ),
        (
            "get_events",
            False,
            lambda: api.get_events(date_range=days, head_entities=head, tail_entities=tail),
        ),
        (
            "get_events(text)",
            False,
            lambda: api.get_events(
                date_range=days, head_entities=head, text_description="trade agreement talks"
            ),
        ),
        (
            "get_entity_distribution",
            False,
            lambda: api.get_entity_distribution(
                date_range=days, involved_relations=list(rel), interacted_entities=head
            ),
        ),
        (
            "get_relation_distribution",
            False,
            lambda: api.get_relation_distribution(
                date_range=days, head_entities=head, tail_entities=tail
            ),
        ),
        (
            "count_news_articles",
            False,
            lambda: api.count_news_articles(
                date_range=days, head_entities=head, keywords=["trade"]
            ),
        ),
        (
            "get_news_articles",
            False,
            lambda: api.get_news_articles(date_range=days, head_entities=head, tail_entities=tail),
        ),
        (
            "get_news_articles(text)",
            False,
            lambda: api.get_news_articles(
                date_range=days, head_entities=head, text_description="trade agreement talks"
            ),
        ),
        ("browse_news_article", False, lambda: api.browse_news_article(*title)),
        ("map_iso_to_country_name", False, lambda: api.map_iso_to_country_name(head[0])),
        ("map_cameo_to_relation", False, lambda: api.map_cameo_to_relation(t.CAMEOCode("042"))),
        ("get_child_relations", False, lambda: api.get_child_relations(t.CAMEOCode("04"))),
        ("get_sibling_relations", False, lambda: api.get_sibling_relations(t.CAMEOCode("042"))),
        ("map_country_name_to_iso(fuzzy)", True, lambda: api.map_country_name_to_iso("Korea")),
        (
            "map_relation_description_to_cameo(fuzzy)",
            True,
            lambda: api.map_relation_description_to_cameo("Fight with guns"),
        ),
    ]


def mirai_layout(release: Path, scratch: Path) -> Path:
    """A folder laid out as MIRAI's module reads a release (``mirai/MIRAI/data_kg.csv`` and
    ``data_news.csv``, ``mirai/info``): the release itself when it holds them, else
    ``scratch`` with them built by ``release mirai`` (checked against the manifest) and the
    release's info folder linked."""
    if (release / FILES["data_kg"]).exists():
        return release
    if not (scratch / FILES["data_kg"]).exists():
        build(release, scratch)
        (scratch / "mirai" / "info").symlink_to(release / "mirai" / "info")
    return scratch


def worker(args: argparse.Namespace) -> dict:
    """One side's figures, measured in this process on the command line :func:`run_side`
    gives it (``--worker`` the side, ``--mirai`` MIRAI's code, ``--layout`` its files)."""
    side, release, calls, cutoff = args.worker, args.release, args.calls, args.cutoff
    pair = _busiest_pair(release)
    t0 = time.perf_counter()
    if side == "ours":
        from gdelt_forecast import environment as api_types
        from gdelt_forecast.environment import open_environment

        api = open_environment(release, cutoff)
        types_ns = types.SimpleNamespace(
            Date=api_types.Date,
            DateRange=api_types.DateRange,
            ISOCode=api_types.ISOCode,
            CAMEOCode=api_types.CAMEOCode,
        )
    else:
        import tempfile

        import pytest

        from tests.environment.mirai import import_mirai

        folder = Path(tempfile.mkdtemp(prefix="mirai-"))
        end = (cutoff - timedelta(days=1)).isoformat()
        api = import_mirai(args.layout or release, args.mirai, end, folder, pytest.MonkeyPatch())
        types_ns = api
    opened = time.perf_counter() - t0
    result = {"side": side, "open_s": opened, "calls": {}, "pair": list(pair)}
    plan = _calls(api, types_ns, pair, cutoff, args.days)
    for phase_fuzzy in (False, True):
        for name, fuzzy, call in plan:
            if fuzzy != phase_fuzzy:
                continue
            call()  # the first call is a warm-up, as an agent's session would have had one
            t = time.perf_counter()
            call()
            # A sample of a call under a millisecond is the mean of a batch that fills one:
            # one clock reading around a microsecond's call measures the clock.
            batch = min(10_000, max(1, int(BATCH_S / max(time.perf_counter() - t, 1e-7))))
            times, start = [], time.perf_counter()
            while len(times) < calls and time.perf_counter() - start < BUDGET_S:
                t = time.perf_counter()
                for _ in range(batch):
                    call()
                times.append((time.perf_counter() - t) / batch)
            times.sort()
            p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
            result["calls"][name] = {
                "n": len(times),
                "p50_ms": 1000 * statistics.median(times),
                "p95_ms": 1000 * p95,
            }
        if not phase_fuzzy:
            result["peak_rss_data_mib"] = _rss_mib()
    result["peak_rss_all_mib"] = _rss_mib()
    return result


def _ms(value: float, width: int) -> str:
    """Milliseconds to two decimals, or four below a tenth (microsecond calls)."""
    return f"{value:{width}.{2 if value >= 0.1 else 4}f}"


def run_side(
    side: str,
    release: Path,
    repo: Path | None,
    calls: int,
    cutoff: date = CUTOFF,
    span: int = SPAN_DAYS,
    layout: Path | None = None,
) -> dict:
    """One side's figures, measured in a fresh process (``cutoff``: the environment's;
    ``span``: the days the calls ask about; ``layout``: MIRAI's files, :func:`mirai_layout`)."""
    cmd = module("bench.agents.environment", "--worker", side, "--release", str(release),
                 "--calls", str(calls), "--cutoff", cutoff.isoformat(),
                 "--days", str(span))  # fmt: skip
    cmd += ["--mirai", str(repo)] if repo else []
    cmd += ["--layout", str(layout)] if layout else []
    proc = subprocess.run(
        cmd, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, cwd=REPO
    )
    if proc.returncode:
        sys.exit(f"{side} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def compare(ours: dict, theirs: dict) -> dict:
    """Issue 51's targets, ours against MIRAI's: each data function's p50 at least
    ``FASTER`` times faster, each look-up's level (within ``LEVEL``), every p95 of ours under
    ``P95_MS``, open time and peak RSS (data) at most ``SHARE`` of MIRAI's."""
    ratio = {n: theirs["calls"][n]["p50_ms"] / m["p50_ms"] for n, m in ours["calls"].items()}
    slow = [n for n, r in ratio.items() if (r < FASTER if n in DATA else r < 1 / LEVEL)]
    over = [n for n, m in ours["calls"].items() if m["p95_ms"] >= P95_MS]
    shares = {key: ours[key] / theirs[key] for key in ("open_s", "peak_rss_data_mib")}
    return {
        "speedup_p50": ratio,
        "short_of_target": slow,
        "p95_over_target": over,
        "shares": shares,
        "ok": not slow and not over and all(v <= SHARE for v in shares.values()),
    }


def report(ours: dict, theirs: dict | None) -> list[str]:
    """The side-by-side table and, with MIRAI's side, the verdict of each target."""
    lines = [f"{'':42} {'ours p50':>9} {'p95':>8} {'MIRAI p50':>10} {'p95':>9} {'x':>7}  ms"]
    verdicts = compare(ours, theirs) if theirs else None
    for name, mine in ours["calls"].items():
        line = f"{name:42} {_ms(mine['p50_ms'], 9)} {_ms(mine['p95_ms'], 8)}"
        if theirs:
            other = theirs["calls"][name]
            line += f" {_ms(other['p50_ms'], 10)} {_ms(other['p95_ms'], 9)}"
            line += f" {verdicts['speedup_p50'][name]:7.1f}"
        lines.append(line)
    for key, label, unit in (
        ("open_s", "open", "s"),
        ("peak_rss_data_mib", "peak RSS (data)", "MiB"),
        ("peak_rss_all_mib", "peak RSS (all, with the embedding model)", "MiB"),
    ):
        other = f", MIRAI {theirs[key]:.2f} {unit}" if theirs else ""
        lines.append(f"{label}: ours {ours[key]:.2f} {unit}{other}")
    if not verdicts:
        return [*lines, "MIRAI not measured: pass --mirai or set MIRAI_REPO to compare"]
    short = verdicts["short_of_target"]
    over = verdicts["p95_over_target"]
    shares = verdicts["shares"]
    return [
        *lines,
        f"data functions >= {FASTER:.0f}x MIRAI's p50, look-ups level (within {LEVEL}x): "
        + verdict(not short)
        + (f" (short: {', '.join(short)})" if short else ""),
        f"every p95 under {P95_MS:.0f} ms: {verdict(not over)}"
        + (f" (over: {', '.join(over)})" if over else ""),
        f"open time <= {SHARE} of MIRAI's: {shares['open_s']:.3f}x "
        + verdict(shares["open_s"] <= SHARE),
        f"peak RSS (data) <= {SHARE} of MIRAI's: {shares['peak_rss_data_mib']:.3f}x "
        + verdict(shares["peak_rss_data_mib"] <= SHARE),
        f"overall: {verdict(verdicts['ok'])}",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=REPO / "bench-data")
    parser.add_argument("--mirai", type=Path, default=os.environ.get("MIRAI_REPO"))
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rebuild", action="store_true", help="build a fresh release first")
    parser.add_argument(
        "--release", type=Path, help="measure this release folder instead of the bench's month"
    )
    parser.add_argument(
        "--cutoff", type=date.fromisoformat, help="the environment's (default: the day after "
        "the release's history; the bench's month: 2025-08-31)",
    )  # fmt: skip
    parser.add_argument("--days", type=int, default=SPAN_DAYS, help="the days the calls ask about")
    parser.add_argument("--worker", choices=("ours", "mirai"), help=argparse.SUPPRESS)
    parser.add_argument("--layout", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args)))
        return 0
    release = (args.release or release_path(args.workdir.resolve(), args.rebuild)).resolve()
    cutoff = args.cutoff or (history_end(release) + timedelta(days=1) if args.release else CUTOFF)
    ours = run_side("ours", release, None, args.calls, cutoff, args.days)
    theirs = None
    if args.mirai:
        layout = mirai_layout(release, args.workdir.resolve() / "mirai-layout" / release.name)
        theirs = run_side("mirai", release, args.mirai, args.calls, cutoff, args.days, layout)
    print(
        f"release {release} (cutoff {cutoff}, the {args.days} days before it, pair "
        f"{'->'.join(ours['pair'])}), {args.calls} calls each after a warm-up (or {BUDGET_S:.0f} s)"
    )
    print("\n".join(report(ours, theirs)))
    return 0 if theirs is None or compare(ours, theirs)["ok"] else 1


def history_end(release: Path) -> date:
    """The last day of a release's history, as its manifest says."""
    manifest = json.loads((release / MANIFEST).read_text(encoding="utf-8"))
    return date.fromisoformat(manifest["history"]["end"])


if __name__ == "__main__":
    sys.exit(main())
