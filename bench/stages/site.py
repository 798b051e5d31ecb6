"""Benchmark: the static site of a month of real volume: how long ``gdelt-forecast site`` takes,
how big the site is, and how fast the first page of each kind opens in Chromium from a local
server.

Input: a data root with releases, by default the release bench's (``<workdir>/release``, written
by ``python -m bench.stages.release --workdir <workdir>``: the synthetic month of 60,000
quads, 52,658 news articles and the test set, timelines, OpenForecast and EV2 records built
from them). The site is built ``--repeat`` times into ``<workdir>/site`` by the command line in
a fresh process (wall seconds, the child's peak RSS); the build re-verifies every release
(``release verify``), which is part of its time. Then Debian's Chromium (Playwright driving it
by its path, every host but 127.0.0.1 unresolvable) opens the first page of each kind from a
``python -m http.server``-like server on 127.0.0.1, three times each with a fresh cache; the
figure is the median time from navigation start to the load event (``performance``'s
navigation entry: the page, its stylesheet, script and images all in).

Target: every page kind's first page loads in under 1 s. The exit status is 1 when one does
not, or when a page logs a console error or a request fails.

Run: ``python -m bench.stages.site [--workdir bench-data] [--data-root DIR] [--repeat 2]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from bench.harness import REPO, verdict
from bench.harness.servers import CHROMIUM_FLAGS, chromium_path, static_files

TARGET_S = 1.0
LOADS = 3
LOADED = "performance.getEntriesByType('navigation')[0].loadEventEnd"  # ms from the start


def build(data_root: Path, out: Path) -> dict:
    """``gdelt-forecast site`` in a fresh process: its summary, wall seconds and peak RSS."""
    started = time.monotonic()
    cli = [sys.executable, "-m", "gdelt_forecast.cli", "site", "--data-root", str(data_root)]
    done = subprocess.run([*cli, "--out", str(out), "--json"], capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"site failed:\n{done.stderr}")
    summary = json.loads(done.stdout)
    summary["wall_s"] = time.monotonic() - started
    summary["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return summary


def kinds(site: Path) -> dict[str, str]:
    """The first page of each kind of the newest release, relative to the site."""
    version = sorted(p.name for p in site.iterdir() if (p / "index.html").is_file())[-1]
    first = {
        "releases": "index.html",
        "release": f"{version}/index.html",
        "leaderboard": f"{version}/leaderboard.html",
        "queries (test)": f"{version}/queries/test.html",
        "records": f"{version}/records/index.html",
        "stories, page 1": f"{version}/records/stories-1.html",
        "MCNC test, page 1": f"{version}/records/MCNC-test-1.html",
        "I-CRR, page 1": f"{version}/records/I-CRR-1.html",
    }
    stories = sorted((site / version / "stories").glob("*.html"), key=lambda p: -p.stat().st_size)
    if stories:
        first["story (the largest)"] = stories[0].relative_to(site).as_posix()
    runs = sorted((site / version / "runs").glob("*/index.html"))
    if runs:
        first["agent run"] = runs[0].relative_to(site).as_posix()
    return first


def load_times(site: Path, pages: dict[str, str]) -> tuple[dict[str, float], list[str]]:
    from playwright.sync_api import sync_playwright

    if not (executable := chromium_path()):
        sys.exit("no chromium: apt-get install chromium (Debian's package), or set CHROMIUM")
    problems: list[str] = []
    times: dict[str, float] = {}
    with static_files(site) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        for kind, path in pages.items():
            seconds = []
            for _ in range(LOADS):
                context = browser.new_context()  # a fresh cache each time
                page = context.new_page()
                page.on("console", lambda m: m.type == "error" and problems.append(m.text))
                page.on("requestfailed", lambda r: problems.append(f"failed {r.url}"))
                page.goto(base + path, wait_until="load")
                seconds.append(page.evaluate(LOADED) / 1000)
                context.close()
            times[kind] = statistics.median(seconds)
        browser.close()
    return times, problems


def by_folder(site: Path) -> Counter:
    sizes: Counter = Counter()
    for path in site.rglob("*"):
        if path.is_file():
            parts = path.relative_to(site).parts
            sizes[parts[1] if len(parts) > 2 else parts[-1]] += path.stat().st_size
    return sizes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=REPO / "bench-data")
    parser.add_argument("--data-root", type=Path, help="default: <workdir>/release")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    data_root = args.data_root or args.workdir / "release"
    if not (data_root / "releases").is_dir():
        sys.exit(f"no releases under {data_root}: run bench/stages/release.py --workdir ... first")
    out = args.workdir / "site"
    print(f"run  {'s':>7}  {'peak RSS MiB':>12}  {'pages':>7}  {'MB':>7}")
    builds = []
    for n in range(1, args.repeat + 1):
        summary = build(data_root, out)
        builds.append(summary)
        print(f"{n:<4} {summary['wall_s']:>7.2f}  {summary['peak_rss_mib']:>12.0f}  "
              f"{summary['pages']:>7,}  {summary['bytes'] / 1e6:>7.1f}")  # fmt: skip
    last = builds[-1]
    print(f"releases {last['releases']}, stories {last['stories']:,}, agent runs {last['runs']}")
    sizes = by_folder(out)
    print("site size by folder: " + ", ".join(
        f"{name} {size / 1e6:.1f} MB" for name, size in sizes.most_common()))  # fmt: skip
    times, problems = load_times(out, pages := kinds(out))
    print(f"\n{'first page of':<24}{'KB':>9}{'load s':>9}")
    for kind, seconds in times.items():
        kb = (out / pages[kind]).stat().st_size / 1e3
        print(f"{kind:<24}{kb:>9.1f}{seconds:>9.3f}")
    slowest = max(times.values())
    passed = slowest < TARGET_S and not problems
    for problem in problems[:10]:
        print(f"problem: {problem}")
    print(f"slowest first page {slowest:.3f} s (target < {TARGET_S:.0f} s), "
          f"{len(problems)} console error(s) or failed request(s): {verdict(passed)}")  # fmt: skip
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
