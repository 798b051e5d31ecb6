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
- **calls**: each function with typical arguments (the month's most active country pair,
  the last 30 days, first-level relation 04, keyword "trade", a text description), repeated
  ``--calls`` times or until 20 s have passed: p50 and p95 of the wall time per call (a
  call of less than a millisecond is timed as the mean of a batch that lasts about one);
- **peak RSS**: ru_maxrss after the calls that need no embedding model ("data"), and at the
  end, after the fuzzy look-ups have loaded all-MiniLM-L6-v2 ("all"), which both sides load
  alike (MIRAI's ``openai.Embedding.create`` answers with that model: the shims of
  tests/environment/mirai.py, which imports MIRAI's module for this bench and the tests).

Targets: every per-call p50 no slower than MIRAI's; open time and peak RSS (data) a fifth of
MIRAI's or less. MIRAI's code comes from ``--mirai`` or $MIRAI_REPO (a checkout of
yecchen/MIRAI, never part of this repository); without it, ours is measured alone.

Run: ``python -m bench.agents.environment [--workdir bench-data] [--mirai PATH] [--calls 20]``.
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
from gdelt_forecast.release.mirai_database import FILES, build

CUTOFF = date(2025, 8, 31)  # every day of the synthetic August is visible
BUDGET_S = 20.0
BATCH_S = 0.001


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
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _busiest_pair(release: Path) -> tuple[str, str]:
    import duckdb

    return duckdb.execute(
        f"SELECT head, tail FROM read_parquet('{release}/quads/*.parquet') "
        "GROUP BY ALL ORDER BY count(*) DESC, head, tail LIMIT 1"
    ).fetchone()


def _calls(api, t, pair: tuple[str, str], cutoff: date) -> list[tuple[str, bool, object]]:
    """(name, needs embeddings, zero-argument callable) for each function, typical args."""
    last = cutoff - timedelta(days=1)
    days = t.DateRange(
        start_date=t.Date((last - timedelta(days=29)).isoformat()),
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


def worker(side: str, release: Path, repo: Path | None, calls: int, cutoff: date = CUTOFF) -> dict:
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
        api = import_mirai(release, repo, end, folder, pytest.MonkeyPatch())
        types_ns = api
    opened = time.perf_counter() - t0
    result = {"side": side, "open_s": opened, "calls": {}, "pair": list(pair)}
    plan = _calls(api, types_ns, pair, cutoff)
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
    side: str, release: Path, repo: Path | None, calls: int, cutoff: date = CUTOFF
) -> dict:
    """One side's figures, measured in a fresh process (``cutoff``: the environment's)."""
    cmd = module("bench.agents.environment", "--worker", side, "--release", str(release),
                 "--calls", str(calls), "--cutoff", cutoff.isoformat())  # fmt: skip
    cmd += ["--mirai", str(repo)] if repo else []
    proc = subprocess.run(
        cmd, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, cwd=REPO
    )
    if proc.returncode:
        sys.exit(f"{side} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=REPO / "bench-data")
    parser.add_argument("--mirai", type=Path, default=os.environ.get("MIRAI_REPO"))
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rebuild", action="store_true", help="build a fresh release first")
    parser.add_argument("--worker", choices=("ours", "mirai"), help=argparse.SUPPRESS)
    parser.add_argument("--release", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--cutoff", type=date.fromisoformat, default=CUTOFF, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.release, args.mirai, args.calls, args.cutoff)))
        return 0
    release = release_path(args.workdir.resolve(), args.rebuild)
    ours = run_side("ours", release, None, args.calls)
    theirs = run_side("mirai", release, args.mirai, args.calls) if args.mirai else None
    print(
        f"release {release} (cutoff {CUTOFF}, pair {'->'.join(ours['pair'])}), "
        f"{args.calls} calls each after a warm-up (or {BUDGET_S:.0f} s)"
    )
    print(f"{'':42} {'ours p50':>9} {'p95':>8} {'MIRAI p50':>10} {'p95':>9}  ms")
    ok = True
    for name, mine in ours["calls"].items():
        other = theirs["calls"][name] if theirs else None
        line = f"{name:42} {_ms(mine['p50_ms'], 9)} {_ms(mine['p95_ms'], 8)}"
        if other:
            line += f" {_ms(other['p50_ms'], 10)} {_ms(other['p95_ms'], 9)}"
            ok &= mine["p50_ms"] <= other["p50_ms"]
        print(line)
    for key, label, unit in (
        ("open_s", "open", "s"),
        ("peak_rss_data_mib", "peak RSS (data)", "MiB"),
        ("peak_rss_all_mib", "peak RSS (all, with the embedding model)", "MiB"),
    ):
        other = f", MIRAI {theirs[key]:.2f} {unit}" if theirs else ""
        print(f"{label}: ours {ours[key]:.2f} {unit}{other}")
    if not theirs:
        print("MIRAI not measured: pass --mirai or set MIRAI_REPO to compare")
        return 0
    slower = [n for n, m in ours["calls"].items() if m["p50_ms"] > theirs["calls"][n]["p50_ms"]]
    open_ok = ours["open_s"] <= theirs["open_s"] / 5
    rss_ok = ours["peak_rss_data_mib"] <= theirs["peak_rss_data_mib"] / 5
    print(
        f"per-call p50 no slower than MIRAI's: {verdict(ok)}"
        + (f" (slower: {', '.join(slower)})" if slower else "")
    )
    open_ratio = ours["open_s"] / theirs["open_s"]
    rss_ratio = ours["peak_rss_data_mib"] / theirs["peak_rss_data_mib"]
    print(f"open time <= 1/5 of MIRAI's: {open_ratio:.3f}x {verdict(open_ok)}")
    print(f"peak RSS (data) <= 1/5 of MIRAI's: {rss_ratio:.3f}x {verdict(rss_ok)}")
    print(f"overall: {verdict(ok and open_ok and rss_ok)}")
    return 0 if ok and open_ok and rss_ok else 1


if __name__ == "__main__":
    sys.exit(main())
