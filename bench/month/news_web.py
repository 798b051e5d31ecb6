"""The news web of bench/month/run.py (issue 25): one HTTP server on 127.0.0.1 that answers
for every simulated news host of bench/month/mirror.py (``articles.resolve`` sends them all
to it, ``articles.allow_hosts`` lets the fetcher in), as the web answers a month's sources.

Each page's text is real: paragraphs of the real article bodies in tests/fixtures/articles
(their ground truth), a seeded choice and order per URL, so no two URLs share a text (a
shared text would be one document) and the cleaning stage meets real prose. The template
around them is ours. What each host does is drawn from ``seed``:

- ``robots``: robots.txt disallows ``/private/``, where a share of its URLs sit;
- ``limited``: a page's first request answers 429 with ``Retry-After: 1``, the next ones the
  page (a rate limit the fetcher must wait out; by page, not by the clock, so that two
  builds from one mirror meet the same answers and can be compared byte for byte);
- ``slow``: every answer waits ``slow_s`` first;
- ``dead``: every answer is 503;
- ``redirect``: a page answers 301 to the same page under ``/moved``;
- ``binary``: a page answers as a PDF (not HTML: the fetcher drops it).

``counts`` keeps the requests and answers per kind, so the bench can tell how many requests
politeness and faults cost, and ``min_interval`` the shortest time between two requests to
one host, as this server saw them arrive (the politeness the fetchers kept, together).

The server runs in a process of its own, at real-time priority where the OS allows it: a web
host is another machine, and an observer that shares two busy cores with the workers (and,
before, the bench's own threads) stamps a backlog of requests at once when it is scheduled
again, which reads as intervals of microseconds that no fetcher sent (docs/benchmarks.md,
the second full month of issue 35).
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import random
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from bench.harness import REPO

GROUND_TRUTH = REPO / "tests/fixtures/articles/ground-truth.json"
KINDS = ("robots", "limited", "slow", "dead", "redirect", "binary")


def paragraphs() -> list[str]:
    bodies = json.loads(GROUND_TRUTH.read_text(encoding="utf-8")).values()
    return [p.strip() for b in bodies for p in b["articleBody"].split("\n") if len(p.strip()) > 60]


def host_kinds(hosts: int, seed: int, shares: dict[str, float]) -> dict[str, set[str]]:
    rng = random.Random(seed)
    return {
        f"news-{n}.sim.test": {
            k for k in ("robots", "limited", "slow", "dead") if rng.random() < shares[k]
        }  # fmt: skip
        for n in range(hosts)
    }


class NewsWeb:
    """The handle the bench and tests hold: the hosts' kinds and port here, the server in a
    child process, its counts and intervals read over a pipe (live, or as it stopped)."""

    def __init__(self, hosts: int, *, seed: int = 0, shares: dict[str, float] | None = None,
                 slow_s: float = 1.0, port: int = 0):  # fmt: skip
        shares = {"robots": 0.1, "limited": 0.1, "slow": 0.05, "dead": 0.02, **(shares or {})}
        self.kinds = host_kinds(hosts, seed, shares)
        self.args = (hosts, seed, shares, slow_s, port)
        self.port: int | None = None
        self.final: dict | None = None
        self.lock = threading.Lock()

    def __enter__(self) -> NewsWeb:
        ctx = multiprocessing.get_context("spawn")  # not a fork of the bench's threads
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(*self.args, child), daemon=True)
        self.process.start()
        child.close()
        try:
            self.port = self.conn.recv()
        except EOFError:  # the child died before listening: its traceback is on stderr
            port = self.args[-1]
            raise RuntimeError(f"the news web could not listen on 127.0.0.1:{port}") from None
        return self

    def __exit__(self, *exc) -> None:
        self.final = self._ask("stop")
        self.process.join(timeout=10)

    def _ask(self, what: str) -> dict:
        with self.lock:
            self.conn.send(what)
            return self.conn.recv()

    def stats(self) -> dict:
        return self.final if self.final is not None else self._ask("stats")

    @property
    def counts(self) -> Counter[str]:
        return Counter(self.stats()["counts"])

    @property
    def min_interval(self) -> tuple[float, str] | None:
        return self.stats()["min_interval"]

    @property
    def shortest(self) -> list[tuple[float, str, str, str, float]]:
        return self.stats()["shortest"]

    def fetch_config(self) -> list[str]:
        """The ``--set`` overrides that send the fetcher here."""
        hosts = sorted(self.kinds)
        return [
            "articles.resolve={" + ", ".join(f"{h}: 127.0.0.1" for h in hosts) + "}",
            f"articles.allow_hosts=[{', '.join(hosts)}]",
        ]


def _serve(hosts: int, seed: int, shares: dict[str, float], slow_s: float, port: int,
           conn) -> None:  # fmt: skip
    # Threads started after this inherit the policy; as root it is allowed.
    with contextlib.suppress(PermissionError, AttributeError):
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    web = _Web(host_kinds(hosts, seed, shares), shares, slow_s, seed, port)
    thread = threading.Thread(target=web.server.serve_forever, daemon=True)
    thread.start()
    conn.send(web.port)
    parent = os.getppid()
    while True:  # until stopped, or the bench is killed (the pipe closed, or kept open by
        # a process that inherited it: then the parent is gone)
        if not conn.poll(1.0):
            if os.getppid() != parent:
                return
            continue
        try:
            what = conn.recv()
        except EOFError:
            return
        if what == "stop":
            web.server.shutdown()
            web.server.server_close()
        with web.lock:
            conn.send({"counts": dict(web.counts), "min_interval": web.min_interval,
                       "shortest": list(web.shortest)})  # fmt: skip
        if what == "stop":
            return


class _Web:
    """The server's side: what each host answers, and what arrived when."""

    def __init__(self, kinds: dict[str, set[str]], shares: dict[str, float], slow_s: float,
                 seed: int, port: int):  # fmt: skip
        self.kinds = kinds
        self.redirect_share = shares.get("redirect", 0.03)
        self.binary_share = shares.get("binary", 0.02)
        self.slow_s, self.seed = slow_s, seed
        self.pool = paragraphs()
        self.counts: Counter[str] = Counter()
        self.refused: set[tuple[str, str]] = set()  # (host, path) answered 429 once
        self.last: dict[str, tuple[float, str]] = {}  # host -> when its last request came, path
        self.min_interval: tuple[float, str] | None = None  # (seconds, host)
        self.shortest: list[tuple[float, str, str, str, float]] = []  # the 10 shortest, with
        # host, both paths and when (seconds since start), to tell what sent them
        self.lock = threading.Lock()
        self.t0 = time.monotonic()
        self.server = _Server(("127.0.0.1", port), _Handler)
        self.server.web = self
        self.port = self.server.server_address[1]

    def arrived(self, host: str, path: str) -> None:
        """Note a request to ``host`` now, and the interval since its last one."""
        now = time.monotonic()
        with self.lock:
            if host in self.last:
                before, before_path = self.last[host]
                gap = (now - before, host)
                self.min_interval = min(self.min_interval or gap, gap)
                self.shortest = sorted(
                    [*self.shortest, (now - before, host, before_path, path, now - self.t0)]
                )[:10]
            self.last[host] = (now, path)

    def draw(self, url: str) -> random.Random:
        return random.Random(f"{self.seed}:{urlsplit(url).path.removeprefix('/moved')}")

    def page(self, host: str, path: str) -> tuple[int, dict[str, str], bytes]:
        """The answer to ``GET path`` on ``host``: status, headers, body."""
        kinds = self.kinds.get(host)
        if kinds is None:
            return 404, {}, b""
        if "slow" in kinds:
            time.sleep(self.slow_s)
        if "dead" in kinds:
            return 503, {}, b""
        if "limited" in kinds and path != "/robots.txt":
            with self.lock:
                first = (host, path) not in self.refused
                self.refused.add((host, path))
            if first:
                return 429, {"Retry-After": "1"}, b""
        if path == "/robots.txt":
            if "robots" in kinds:
                return 200, {"Content-Type": "text/plain"}, b"User-agent: *\nDisallow: /private/\n"
            return 404, {}, b""
        draw = self.draw(path)  # the same draws for a page and its moved copy
        redirect, binary = draw.random(), draw.random()
        if not path.startswith("/moved") and redirect < self.redirect_share:
            return 301, {"Location": f"/moved{path}"}, b""
        if binary < self.binary_share:
            return 200, {"Content-Type": "application/pdf"}, b"%PDF-1.4 simulated\n"
        chosen = draw.sample(self.pool, k=min(len(self.pool), draw.randint(4, 8)))
        title = chosen[0][:70]
        body = "".join(f"<p>{p}</p>\n" for p in chosen)
        html = (
            f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}'
            f"</title></head><body><article><h1>{title}</h1>\n{body}</article></body></html>"
        )
        return 200, {"Content-Type": "text/html; charset=utf-8"}, html.encode()


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client that gave up (a read timeout on a slow host) resets its connection: counted,
        # not printed as a traceback.
        with self.web.lock:
            self.web.counts["reset"] += 1


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 (http.server's naming)
        web: _Web = self.server.web
        host = (self.headers.get("Host") or "").split(":")[0].lower()
        web.arrived(host, self.path)
        status, headers, body = web.page(host, self.path)
        with web.lock:
            web.counts["requests"] += 1
            web.counts[str(status)] += 1
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass
