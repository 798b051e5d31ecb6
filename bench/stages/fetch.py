"""Benchmark: article fetch throughput against the ideal the concurrency limits allow.

A server process listens on many loopback addresses (127.0.1.1, 127.0.1.2, ...: one "host"
each, all in allow_hosts) and answers every page after a fixed delay ``d`` with a 20 KB
HTML body (robots.txt: 404 at once). ``gdelt_forecast.articles.fetch.fetch_urls`` then fetches
``k`` pages from each of ``H`` hosts with robots.txt on, a fresh data root, and
``concurrency`` C, ``per_host`` P, ``per_host_delay_s`` p. Wall time covers the whole call
(ledger, WARC writing and all).

The ideal is the shortest time the limits allow, with zero cost per request besides ``d``:
a host's slot is busy ``d`` then waits ``p``, so its k pages take at least
ceil(k / P) * (d + p) - p (no wait after the last); C requests in flight take at least
ceil(H * k / C) * d for all of them. Ideal time = the larger of the two, and the figure is
ideal time / measured time (equivalently measured / ideal throughput). One scenario is
bound by the per-host limit, one by the global limit. Target: >= 80% in each.

Run: ``python -m bench.stages.fetch`` (about 12 s; 2 cores are enough: client and server
are separate processes).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench.harness import REPO, module, verdict

TARGET = 0.80
BODY = (
    b"<html><body>" + b"<p>Lorem ipsum dolor sit amet, consectetur.</p>\n" * 430 + b"</body></html>"
)


@dataclass(frozen=True)
class Scenario:
    name: str
    hosts: int
    per_host_pages: int
    per_host: int
    per_host_delay_s: float
    concurrency: int
    delay_s: float

    @property
    def requests(self) -> int:
        return self.hosts * self.per_host_pages

    def ideal_seconds(self) -> float:
        cycle = self.delay_s + self.per_host_delay_s
        host_bound = math.ceil(self.per_host_pages / self.per_host) * cycle - self.per_host_delay_s
        global_bound = math.ceil(self.requests / self.concurrency) * self.delay_s
        return max(host_bound, global_bound)


SCENARIOS = (
    Scenario("per-host bound", 50, 40, 2, 0.2, 64, 0.1),
    Scenario("global bound", 50, 12, 2, 0.2, 16, 0.1),
)


# --- server process ---------------------------------------------------------------------------


class _Page(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real news sites answer
    # TCP_NODELAY, as web servers set it: otherwise Nagle's algorithm and the client's
    # delayed ACK can hold a response's last segment for 40 ms.
    disable_nagle_algorithm = True
    delay_s = 0.1

    def do_GET(self):  # noqa: N802 (http.server's naming)
        if self.path == "/robots.txt":
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        time.sleep(self.delay_s)
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass


def serve(hosts: int, delay_s: float) -> None:
    """Serve on 127.0.1.1..N and print their base URLs as one JSON line; stop when stdin closes."""
    _Page.delay_s = delay_s
    servers = [ThreadingHTTPServer((f"127.0.1.{i}", 0), _Page) for i in range(1, hosts + 1)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps([f"http://{s.server_address[0]}:{s.server_address[1]}" for s in servers]))
    sys.stdout.flush()
    sys.stdin.read()


# --- client -----------------------------------------------------------------------------------


def measure(scenario: Scenario, workdir: Path) -> dict:
    from gdelt_forecast.articles.fetch import fetch_urls
    from gdelt_forecast.ground.config import load_config

    server = subprocess.Popen(
        module(__spec__.name, "--serve", str(scenario.hosts), str(scenario.delay_s)),
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        bases = json.loads(server.stdout.readline())
        urls = [f"{b}/article/{i}" for i in range(scenario.per_host_pages) for b in bases]
        hosts = ", ".join(b.split("//")[1].split(":")[0] for b in bases)
        cfg = load_config(
            None,
            [
                f"articles.allow_hosts=[{hosts}]",
                f"articles.concurrency={scenario.concurrency}",
                f"articles.per_host={scenario.per_host}",
                f"articles.per_host_delay_s={scenario.per_host_delay_s}",
                "articles.robots=true",
            ],
            Path(tempfile.mkdtemp(dir=workdir)),
        )
        t0 = time.perf_counter()
        summary = fetch_urls(cfg, urls)
        seconds = time.perf_counter() - t0
    finally:
        server.stdin.close()
        server.wait(10)
    if summary.fetched != len(urls):
        sys.exit(f"{scenario.name}: fetched {summary.fetched} of {len(urls)}: {summary.line()}")
    return {"seconds": seconds, "robots": summary.robots_fetches, "bytes": summary.bytes}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--serve", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), float(args.serve[1]))
        return 0
    print(
        f"{'scenario':<16}{'H':>4}{'k':>4}{'P':>3}{'p s':>6}{'C':>4}{'d s':>6}{'pages':>7}"
        f"{'s':>7}{'pages/s':>9}{'ideal s':>9}{'ideal/s':>9}{'of ideal':>10}"
    )
    ok = True
    verdicts = []
    for sc in SCENARIOS:
        run = measure(sc, args.workdir)
        ideal = sc.ideal_seconds()
        fraction = ideal / run["seconds"]
        ok &= fraction >= TARGET
        print(
            f"{sc.name:<16}{sc.hosts:>4}{sc.per_host_pages:>4}{sc.per_host:>3}"
            f"{sc.per_host_delay_s:>6.2f}{sc.concurrency:>4}{sc.delay_s:>6.2f}{sc.requests:>7}"
            f"{run['seconds']:>7.2f}{sc.requests / run['seconds']:>9.1f}{ideal:>9.2f}"
            f"{sc.requests / ideal:>9.1f}{fraction:>9.0%} "
        )
        verdicts.append(
            f"{sc.name}: {fraction:.0%} of ideal (target >= {TARGET:.0%}) "
            f"{verdict(fraction >= TARGET)}; {run['robots']} robots.txt fetches, "
            f"{run['bytes'] / 1e6:.1f} MB stored"
        )
    print()
    print("\n".join(verdicts))
    print(f"overall: {verdict(ok)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
