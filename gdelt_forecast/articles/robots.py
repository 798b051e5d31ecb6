"""robots.txt per origin, read once a day for every fetch process, as RFC 9309 says.

Fetch outcomes (RFC 9309 section 2.3.1): 2xx is parsed; 4xx means no rules (allow all);
5xx, 429 and network errors mean "unreachable": everything is disallowed for now and the
URL is retried later (``RobotsUnreachable``, not kept, so a later URL asks again). 429 is
a 4xx, but it says the server is overloaded, so it is treated like 5xx. Up to five redirects
are followed, each hop checked like any other URL; more, or a hop the address check
refuses, counts as unavailable (allow all). At most 500 KiB of the file is parsed. The text
read is kept in the politeness store for a day (section 2.4), so other processes read it
from there; each request for it goes through the caller's ``get``, which waits its turn on
the host like any other request.

Matching: urllib.robotparser groups the lines and picks the group for our product token,
but it only knows prefix rules where the first match wins; RFC 9309 has ``*`` and ``$``
wildcards and the longest match wins (allow on a tie), so the rules are matched here.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Collection, Mapping
from urllib.parse import quote, unquote, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import urllib3

from gdelt_forecast.articles.politeness import Store
from gdelt_forecast.articles.safety import (
    Refused,
    Target,
    Undecodable,
    Unresolvable,
    read_capped,
    release,
    resolve_and_check,
)

MAX_BYTES = 500 * 1024
MAX_REDIRECTS = 5
# robotparser percent-encodes rule paths, so the wildcards arrive encoded.
_STAR, _DOLLAR = quote("*"), quote("$")

Origin = tuple[str, str, int]


class RobotsUnreachable(Exception):
    """robots.txt could not be read (5xx, 429, network): disallow for now, retry later.
    ``failure``: the host failed (not a 429, which says it is alive but busy)."""

    def __init__(self, message: str, failure: bool = True):
        super().__init__(message)
        self.failure = failure


def product_token(user_agent: str) -> str:
    """The name robots.txt groups address: ``gdelt-forecast`` of ``gdelt-forecast/0.1 (...)``."""
    match = re.match(r"[A-Za-z_-]+", user_agent)
    return match.group(0) if match else user_agent


def _encoded(path: str) -> str:
    """A request path in the encoding robotparser gives rule paths."""
    return quote(unquote(path)) or "/"


class Rules:
    """The allow / disallow rules of one robots.txt that apply to our product token."""

    def __init__(self, text: str, token: str):
        parser = RobotFileParser()
        parser.parse(text.splitlines())
        entry = next((e for e in parser.entries if e.applies_to(token)), parser.default_entry)
        self._rules = [
            (self._regex(line.path), len(line.path), line.allowance)
            for line in (entry.rulelines if entry else [])
        ]

    @staticmethod
    def _regex(path: str) -> re.Pattern[str]:
        anchored = path.endswith(_DOLLAR)
        body = path[: -len(_DOLLAR)] if anchored else path
        pattern = ".*".join(re.escape(part) for part in body.split(_STAR))
        return re.compile(pattern + ("$" if anchored else ""))

    def allows(self, path: str) -> bool:
        path = _encoded(path)
        best: tuple[int, bool] | None = None
        for regex, length, allowance in self._rules:
            if regex.match(path) and (best is None or (length, allowance) > best):
                best = (length, allowance)
        return best is None or best[1]


Get = Callable[[Target], urllib3.BaseHTTPResponse]


class Robots:
    """The robots.txt answers of one run, read once per origin (scheme, host, port) from the
    politeness store, or fetched and kept there."""

    def __init__(
        self,
        store: Store,
        user_agent: str,
        allow_hosts: Collection[str],
        pinned: Mapping[str, object] | None = None,
    ):
        self._store = store
        self._token = product_token(user_agent)
        self._allow_hosts = allow_hosts
        self._pinned = pinned
        self._rules: dict[Origin, Rules] = {}
        self._locks: dict[Origin, threading.Lock] = {}
        self._guard = threading.Lock()
        self.fetches = 0

    def allows(self, target: Target, get: Get) -> bool:
        """Whether robots.txt lets us fetch ``target``; RobotsUnreachable when unknown.
        ``get`` sends a request for robots.txt when neither this run nor the store has it."""
        if urlsplit(target.path).path == "/robots.txt":
            return True
        with self._guard:
            lock = self._locks.setdefault(target.origin, threading.Lock())
        # One fetch per origin even when several of its URLs ask at once.
        with lock:
            if target.origin not in self._rules:
                origin = f"{target.scheme}://{target.host_header}"
                text = self._store.robots(origin)
                if text is None:
                    text = self._fetch(origin, get)
                    self._store.keep_robots(origin, text)
                self._rules[target.origin] = Rules(text, self._token)
        return self._rules[target.origin].allows(target.path)

    def _fetch(self, origin: str, get: Get) -> str:
        """The text of ``origin``'s robots.txt; "" (no rules) when it has none."""
        url = f"{origin}/robots.txt"
        for _ in range(MAX_REDIRECTS + 1):
            try:
                target = resolve_and_check(url, self._allow_hosts, self._pinned)
            except Refused:
                return ""
            except Unresolvable as exc:
                raise RobotsUnreachable(f"robots.txt: {exc}") from None
            with self._guard:
                self.fetches += 1
            try:
                resp = get(target)
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                raise RobotsUnreachable(f"robots.txt: {type(exc).__name__}") from None
            location = resp.headers.get("Location")
            if 300 <= resp.status < 400 and location:
                release(resp, read_all=False)
                url = urljoin(url, location)
                continue
            return self._answer(resp, url)
        return ""

    def _answer(self, resp: urllib3.BaseHTTPResponse, url: str) -> str:
        read_all = False
        try:
            if resp.status == 429 or resp.status >= 500:
                raise RobotsUnreachable(
                    f"robots.txt: HTTP {resp.status} from {url}", failure=resp.status != 429
                )
            if not 200 <= resp.status < 300:
                return ""
            body = read_capped(resp, MAX_BYTES, truncate=True)
            read_all = len(body) < MAX_BYTES
            return body.decode("utf-8", errors="replace").lstrip("\ufeff")
        except Undecodable:
            return ""
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise RobotsUnreachable(f"robots.txt: {type(exc).__name__} from {url}") from None
        finally:
            release(resp, read_all)
