"""A scripted HTTP server on a loopback address for the fetcher's tests (127.0.0.0/8 only):
each path answers with a list of replies, used in turn; it counts what it was asked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HOSTS = ("127.0.0.1", "127.0.0.3", "127.0.0.4")
REPO = Path(__file__).resolve().parents[2]

Reply = Callable[[BaseHTTPRequestHandler], None]


def _headers(given: dict[str, str | None]) -> dict[str, str | None]:
    return {name.replace("_", "-"): value for name, value in given.items()}


def html(body: bytes = b"<html><body><p>An article.</p></body></html>", **headers) -> Reply:
    """200 with ``body``; keyword arguments add headers (Content_Length=None leaves it out)."""
    headers = _headers({"Content-Type": "text/html; charset=utf-8", **headers})
    headers.setdefault("Content-Length", str(len(body)))

    def reply(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        for name, value in headers.items():
            if value is not None:
                h.send_header(name, value)
        h.end_headers()
        h.wfile.write(body)

    return reply


def status(code: int, body: bytes = b"", **headers) -> Reply:
    headers = _headers({**headers, "Content-Length": str(len(body))})

    def reply(h: BaseHTTPRequestHandler) -> None:
        h.send_response(code)
        for name, value in headers.items():
            h.send_header(name, value)
        h.end_headers()
        h.wfile.write(body)

    return reply


def slow(seconds: float, then: Reply) -> Reply:
    def reply(h: BaseHTTPRequestHandler) -> None:
        h.server.site.stopping.wait(seconds)
        then(h)

    return reply


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's naming)
        site: Site = self.server.site
        self._answered = False
        with site.lock:
            site.hits[self.path] += 1
            site.paths.append(self.path)
            site.headers.append(dict(self.headers))
            site.active += 1
            site.max_active = max(site.max_active, site.active)
            site.starts.append(time.monotonic())
            replies = site.routes.get(self.path) or [status(404)]
            reply = replies.pop(0) if len(replies) > 1 else replies[0]
        try:
            reply(self)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading, as it should for oversized bodies
        finally:
            self._answer()

    def end_headers(self):
        # A request counts as served once its headers go out: the client cannot start its
        # next request before that, so counts of requests at once never include a stale one.
        self._answer()
        super().end_headers()

    def _answer(self):
        if self._answered:
            return
        self._answered = True
        with self.server.site.lock:
            self.server.site.active -= 1
            self.server.site.ends.append(time.monotonic())

    def log_message(self, *args):
        pass


# How much earlier than it came a request can look in ``Site.starts``: the server notes a
# request once its handler thread has read it, which a loaded machine delays by tens of
# milliseconds (a gap of 0.583 s for a 0.6 s interval seen under `make test`'s three workers).
NOTED_LATE_S = 0.05


class Site:
    """An HTTP/1.0 server on one loopback address. ``routes[path]`` lists replies, used in
    turn, the last one for good; ``hits`` counts requests per path, ``max_active`` the most
    requests it served at once; ``starts`` when each came (up to ``NOTED_LATE_S`` late)."""

    def __init__(self, host: str):
        self.routes: dict[str, list[Reply]] = {}
        self.hits: Counter[str] = Counter()
        self.paths: list[str] = []  # in the order they came
        self.headers: list[dict] = []
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.active = self.max_active = 0
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.server = ThreadingHTTPServer((host, 0), _Handler)
        self.server.site = self
        self.base = f"http://{host}:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def serve(self, path: str, *replies: Reply) -> str:
        self.routes[path] = list(replies)
        return self.base + path

    def stop(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def articles_settings(cfg) -> list[str]:
    """``cfg``'s articles section as ``--set`` overrides, for a child process's config."""
    return [f"articles.{k}={json.dumps(v)}" for k, v in cfg.articles.model_dump().items()]


def child(script: str, *args: str) -> subprocess.Popen:
    """``python -c script args`` from the repository, its output piped."""
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
