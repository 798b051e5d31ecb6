"""Fetch article pages politely and safely: scheduling, per-host limits and retries.

``fetch_urls`` fetches each URL not yet settled in the fetch ledger on a thread pool, within a
global limit (``articles.concurrency``) and each host's politeness, which every fetch process shares
through one store (``politeness``: a request to a host starts at least ``per_host_delay_s`` plus
``host_jitter_s`` after the last one was sent, at most ``per_host`` are in flight, a pause
asked for holds the host for everyone, and a host that failed ``host_down_after`` times in a row is
down: its URLs end ``host_down`` without a request). robots.txt is honoured (``robots``). Every
redirect hop is checked like the first URL (``safety``) and waits its turn on its host; a body is
read within ``max_bytes`` and ``page_timeout_s``. Connection errors, 429 and 5xx are retried with
backoff or after the server's Retry-After; once the retries are spent the URL ends ``retryable`` and
a re-run tries it again, as it does a ``host_down`` one.

HTML pages go to the run's WARC files (``warc``) and every outcome to the run's journal,
folded into the fetch ledger when the run ends, or by the next run if it died (``ledger``,
which also tells how an interrupted run is resumed).
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import logging
import math
import queue
import secrets
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin

import urllib3

from gdelt_forecast.articles import politeness
from gdelt_forecast.articles.ledger import (
    STATUSES,
    Journal,
    settle_finished_runs,
    settled_urls,
)
from gdelt_forecast.articles.politeness_store import open_store
from gdelt_forecast.articles.robots import Robots, RobotsUnreachable
from gdelt_forecast.articles.safety import (
    PinnedClient,
    Refused,
    Target,
    TooLarge,
    TooSlow,
    Undecodable,
    Unresolvable,
    read_capped,
    release,
    resolve_and_check,
    sent_at,
    split_url,
)
from gdelt_forecast.articles.warc import RunWarcs, response_records
from gdelt_forecast.ground.config import ArticlesConfig, Config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.progress import progress
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.ground.wellformed import wellformed

log = logging.getLogger(__name__)

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
REDIRECTS = frozenset({301, 302, 303, 307, 308})
_RETRY = "retry"  # an attempt that may be retried; settled as "retryable" once retries run out


@dataclass
class FetchSummary(StageSummary):
    urls: int = 0
    skipped: int = 0  # already settled in the ledger
    fetched: int = 0
    not_found: int = 0
    refused: int = 0
    robots: int = 0
    too_large: int = 0
    not_html: int = 0
    failed: int = 0
    retryable: int = 0
    host_down: int = 0
    hosts_down: int = 0  # hosts cut short: down after host_down_after failures in a row
    recovered: int = 0  # pages of interrupted runs added to the ledger from their WARC files
    requests: int = 0  # page requests: redirect hops and retries included
    robots_fetches: int = 0
    bytes: int = 0  # body bytes stored
    seconds: float = 0.0

    def line(self) -> str:
        counts = ", ".join(f"{getattr(self, s)} {s.replace('_', ' ')}" for s in STATUSES)
        return (
            f"fetch: {self.urls} URLs, {self.skipped} already done; {counts}; "
            f"{self.hosts_down} hosts down; {self.requests} requests, "
            f"{self.bytes / 1e6:.1f} MB stored ({self.seconds:.1f} s)"
        )


# --- one URL ---------------------------------------------------------------------------------


@dataclass
class _Outcome:
    url: str
    status: str = "failed"
    final_url: str | None = None
    http_status: int | None = None
    error: str | None = None
    content_type: str | None = None
    wait: float | None = None  # for a retry: the server's Retry-After, in seconds
    failure: bool = False  # the host failed (refused, reset, timeout, 5xx), not the page
    lease: tuple[str, str] | None = None  # (host, token) of the last request's turn
    sent_at: float | None = None  # when the last request was sent (monotonic), if it was
    requests: int = 0
    attempts: int = 1
    waited_s: float = 0.0  # the retries' waits: backoffs and Retry-After
    fetched_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    body: bytes = b""
    sha256: str | None = None
    warc: bytes = b""  # the gzip members of the response and request records

    def end(self, status: str, error: str | None = None, wait: float | None = None,
            failure: bool = False) -> _Outcome:  # fmt: skip
        self.status, self.error, self.wait, self.failure = status, error, wait, failure
        self.fetched_at = datetime.now(UTC)
        return self

    def sent_s_ago(self) -> float | None:
        return None if self.sent_at is None else time.monotonic() - self.sent_at


def retry_after(value: str | None) -> float | None:
    """Seconds a Retry-After header asks for (delay-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:300]


def _warc_records(
    out: _Outcome, target: Target, resp: urllib3.BaseHTTPResponse, request_headers: dict
) -> bytes:
    """The response and request records of a fetched page; built in the worker thread."""
    return response_records(
        target.url,
        out.body,
        status=f"{resp.status} {resp.reason or ''}".strip(),
        headers=resp.headers.items(),
        protocol="HTTP/1.0" if resp.version == 10 else "HTTP/1.1",
        source_url=out.url,
        fetched_at=out.fetched_at,
        request=(
            f"GET {target.path} HTTP/1.1",
            [("Host", target.host_header), *request_headers.items()],
        ),
    )


class _HostDown(Exception):
    """A host this URL's next request needed is down."""


class _Turns:
    """The turns of one URL's attempt on the hosts it asks: the one the scheduler took for
    its first request, then one for each later request (robots.txt comes first; a redirect's
    next hop), waited for in the worker thread. ``out.lease`` is the last one held."""

    def __init__(self, store: politeness.Store, out: _Outcome):
        self.store, self.out, self.fresh = store, out, True

    def get(self, client: PinnedClient, target: Target) -> urllib3.BaseHTTPResponse:
        """``target``'s response, sent once this attempt holds a turn on its host."""
        held, fresh = self.out.lease, self.fresh
        self.fresh = False
        if not (fresh and held and held[0] == target.host):
            if held:  # its request ended well, or this attempt would be over
                self.out.lease = None
                self.store.done(*held, sent_s_ago=self.out.sent_s_ago())
            while not (answer := self.store.take(target.host)).token:
                if answer.down:
                    raise _HostDown(target.host)
                time.sleep(min(answer.wait_s, 1.0))
            self.out.lease = (target.host, answer.token)
        self.out.sent_at = None
        resp = client.get(target)
        self.out.sent_at = sent_at(resp)
        return resp


class _Fetcher:
    """Fetches URLs on a thread pool under the global limit and the hosts' politeness."""

    def __init__(self, cfg: ArticlesConfig, store: politeness.Store):
        self.cfg, self.store = cfg, store
        self.client = PinnedClient(
            cfg.user_agent,
            (cfg.connect_timeout_s, cfg.read_timeout_s),
            pools=max(16, 2 * cfg.concurrency),
            per_pool=cfg.concurrency,
        )
        self.robots = (
            Robots(store, cfg.user_agent, cfg.allow_hosts, cfg.resolve) if cfg.robots else None
        )
        self.finished: queue.Queue[tuple[str, int, _Outcome]] = queue.Queue()
        self.in_flight = 0
        self.requests = 0
        self.hosts_down: set[str] = set()
        # The requests and waits of a URL's attempts before this one, for its ledger row.
        self.earlier: dict[str, tuple[int, float]] = {}

    # -- in a worker thread --

    def _work(self, host: str, url: str, attempt: int, token: str) -> None:
        outcome = _Outcome(url, lease=(host, token))
        try:
            self._attempt(outcome)
        except _HostDown as exc:
            outcome.end("host_down", f"host {exc} is down")
        except Exception as exc:  # a bug must neither hang the run nor lose the URL
            log.exception("fetching %s", url)
            outcome.end("failed", f"internal error: {_one_line(exc)}")
        self.finished.put((host, attempt, outcome))

    def _attempt(self, out: _Outcome) -> _Outcome:
        """One try at ``out.url``, following redirects; every hop is checked like the first."""
        turns = _Turns(self.store, out)
        current = out.url
        for _ in range(self.cfg.max_redirects + 1):
            out.final_url = current
            try:
                target = resolve_and_check(current, self.cfg.allow_hosts, self.cfg.resolve)
            except Refused as exc:
                return out.end("refused", str(exc))
            except Unresolvable as exc:
                return out.end(_RETRY if exc.temporary else "failed", str(exc), failure=True)
            try:
                if self.robots and not self.robots.allows(
                    target, lambda t: turns.get(self.client, t)
                ):
                    return out.end("robots", f"robots.txt disallows {current}")
            except RobotsUnreachable as exc:
                return out.end(_RETRY, str(exc), failure=exc.failure)
            out.requests += 1
            deadline = time.monotonic() + self.cfg.page_timeout_s
            try:
                resp = turns.get(self.client, target)
            except urllib3.exceptions.SSLError as exc:
                return out.end("failed", _one_line(exc))
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                return out.end(_RETRY, _one_line(exc), failure=True)
            location = resp.headers.get("Location")
            if resp.status in REDIRECTS and location:
                release(resp, read_all=False)
                current = urljoin(current, location)
                continue
            return self._answer(out, target, resp, deadline)
        return out.end("failed", f"more than {self.cfg.max_redirects} redirects")

    def _answer(
        self, out: _Outcome, target: Target, resp: urllib3.BaseHTTPResponse, deadline: float
    ) -> _Outcome:
        """Classify the final response and read an HTML body within the size cap."""
        status = out.http_status = resp.status
        # Header values are Latin-1 text that may hold NUL and controls; the ledger keeps it.
        content_type = resp.headers.get("Content-Type")
        out.content_type = None if content_type is None else wellformed(content_type, "page")
        mime = (out.content_type or "").split(";")[0].strip().lower()
        length = resp.headers.get("Content-Length", "")
        read_all = False
        try:
            if status in (404, 410):
                return out.end("not_found", f"HTTP {status}")
            if status == 429 or status >= 500:
                wait = retry_after(resp.headers.get("Retry-After"))
                return out.end(_RETRY, f"HTTP {status}", wait, failure=status >= 500)
            if not 200 <= status < 300:
                return out.end("failed", f"HTTP {status}")
            if mime not in HTML_TYPES:
                return out.end("not_html", f"Content-Type {mime or '(none)'}")
            encoded = resp.headers.get("Content-Encoding", "identity").lower() != "identity"
            if not encoded and length.isdigit() and int(length) > self.cfg.max_bytes:
                return out.end("too_large", f"Content-Length {int(length):,} over max_bytes")
            out.body = read_capped(resp, self.cfg.max_bytes, deadline=deadline)
            read_all = True
        except TooLarge as exc:
            return out.end("too_large", str(exc))
        except Undecodable as exc:
            return out.end("failed", str(exc))
        except TooSlow as exc:
            return out.end(_RETRY, str(exc), failure=True)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            return out.end(_RETRY, _one_line(exc), failure=True)
        finally:
            release(resp, read_all)
        # Hashing and compressing here, in the worker, keeps them off the scheduling thread.
        out.end("fetched")
        out.sha256 = hashlib.sha256(out.body).hexdigest()
        out.warc = _warc_records(out, target, resp, self.client.request_headers)
        return out

    # -- in the calling thread --

    def run(self, urls: list[str]) -> Iterator[_Outcome]:
        """Yield every URL's settled outcome, in the order they settle."""
        schedule = _Schedule(self.cfg.per_host)
        for url in urls:
            try:
                schedule.add(split_url(url)[1], url)
            except Refused as exc:
                yield _Outcome(url, final_url=url).end("refused", str(exc))
        with ThreadPoolExecutor(self.cfg.concurrency, thread_name_prefix="article") as pool:
            while schedule.pending or self.in_flight:
                wait, cut = self._dispatch(pool, schedule)
                yield from cut
                try:
                    host, attempt, outcome = self.finished.get(timeout=wait)
                except queue.Empty:
                    continue
                self.in_flight -= 1
                settled, cut = self._settle(schedule, host, attempt, outcome)
                yield from settled
                yield from cut

    def _dispatch(
        self, pool: ThreadPoolExecutor, schedule: _Schedule
    ) -> tuple[float, list[_Outcome]]:
        """Start every URL whose host gives a turn now; return how long to wait for a
        result, and the URLs of hosts found down."""
        cut: list[_Outcome] = []
        while self.in_flight < self.cfg.concurrency:
            now = time.monotonic()
            ready = schedule.pop(now)
            if isinstance(ready, float):
                # Poll at least every second: cheap, and no wait can then be lost.
                return min(ready, 1.0), cut
            host, url, tries = ready
            answer = self.store.take(host)
            if answer.token is None:
                schedule.requeue(host, url, tries)
                if answer.down:
                    cut += self._cut(schedule, host, "is down")
                schedule.release(host, now + answer.wait_s)
            else:
                schedule.started(host, now + self.cfg.per_host_delay_s)
                pool.submit(self._work, host, url, tries + 1, answer.token)
                self.in_flight += 1
        return 1.0, cut

    def _cut(self, schedule: _Schedule, host: str, why: str) -> list[_Outcome]:
        """The waiting URLs of a host that is down, ended ``host_down``."""
        self.hosts_down.add(host)
        return [
            self._with_earlier(
                _Outcome(url, final_url=url, attempts=tries).end("host_down", f"host {host} {why}")
            )
            for url, tries in schedule.drop(host)
        ]

    def _settle(
        self, schedule: _Schedule, host: str, attempt: int, out: _Outcome
    ) -> tuple[list[_Outcome], list[_Outcome]]:
        """Hand the turn back, free the host's slot and requeue a retry; returns ``out``
        when it is settled, and the URLs cut short when its host went down."""
        now = time.monotonic()
        self.requests += out.requests
        out.attempts = attempt
        wait = 0.0
        if out.status == _RETRY:
            wait = out.wait if out.wait is not None else self.cfg.backoff_s * 2 ** (attempt - 1)
            if attempt > self.cfg.retries or wait > self.cfg.max_retry_after_s:
                out.status = "retryable"
                if wait > self.cfg.max_retry_after_s:
                    out.error = f"{out.error}; Retry-After {wait:.0f} s over max_retry_after_s"
                wait = 0.0  # nobody waits for a URL that ends here
        next_at = now + self.store.next_in_s(out.sent_s_ago())  # as the store will count it
        down = self._hand_back(out, wait)
        if out.status == _RETRY and not down:
            log.debug("%s: %s; retry %d in %.1f s", out.url, out.error, attempt, wait)
            requests, waited = self.earlier.get(out.url, (0, 0.0))
            self.earlier[out.url] = (requests + out.requests, waited + wait)
            schedule.requeue(host, out.url, attempt)
            schedule.release(host, max(now + wait, next_at))
            return [], []
        limit = self.cfg.host_down_after
        if down and out.status in (_RETRY, "retryable"):
            out.status, out.error = "host_down", f"{limit} failures in a row; {out.error}"
        cut = self._cut(schedule, host, f"is down after {limit} failures") if down else []
        schedule.release(host, next_at)
        return [self._with_earlier(out)], cut

    def _with_earlier(self, out: _Outcome) -> _Outcome:
        """``out`` with the requests and waits of its URL's earlier attempts added."""
        requests, waited = self.earlier.pop(out.url, (0, 0.0))
        out.requests += requests
        out.waited_s += waited
        return out

    def _hand_back(self, out: _Outcome, pause_s: float = 0.0) -> bool:
        """Give ``out``'s last turn back to the store; whether its host is down now."""
        if out.lease is None:
            return out.status == "host_down"
        host, token = out.lease
        out.lease = None
        return self.store.done(
            host, token, sent_s_ago=out.sent_s_ago(), pause_s=pause_s, failed=out.failure
        )

    def leftovers(self) -> list[_Outcome]:
        """Outcomes that arrived after the run was interrupted; retries become retryable."""
        found = []
        while not self.finished.empty():
            _, attempt, out = self.finished.get_nowait()
            self._hand_back(out)
            self.requests += out.requests
            out.attempts = attempt
            if out.status == _RETRY:
                out.status = "retryable"
            found.append(self._with_earlier(out))
        return found

    def close(self) -> None:
        self.client.close()
        self.store.close()


@dataclass
class _Host:
    queue: deque[tuple[str, int]] = field(default_factory=deque)  # (url, attempts so far)
    in_flight: int = 0
    ready_at: float = 0.0  # no turn before then, as far as this process knows
    listed: bool = False  # in _Schedule._ready


class _Schedule:
    """Which URL to ask a turn for next: a host's next URL once this process has fewer than
    ``per_host`` requests in flight there and the host's last known wait is over. Ready
    hosts sit in a heap by the time they become ready, so picking one costs O(log hosts);
    the store has the last word (``_Fetcher._dispatch``)."""

    def __init__(self, per_host: int):
        self._per_host = per_host
        self._hosts: dict[str, _Host] = {}
        self._ready: list[tuple[float, int, str]] = []
        self._order = itertools.count()
        self.pending = 0

    def add(self, host: str, url: str) -> None:
        state = self._hosts.setdefault(host, _Host())
        state.queue.append((url, 0))
        self.pending += 1
        self._list(host, state)

    def pop(self, now: float) -> tuple[str, str, int] | float:
        """(host, url, attempts so far) of a URL to start now, its host's slot taken, else
        seconds until one may (inf when every host with work is busy)."""
        while self._ready:
            at, _, host = self._ready[0]
            state = self._hosts[host]
            if state.ready_at > at:  # paused since it was listed
                heapq.heapreplace(self._ready, (state.ready_at, next(self._order), host))
                continue
            if at > now:
                return at - now
            heapq.heappop(self._ready)
            state.listed = False
            if not state.queue:  # its URLs were cut since it was listed
                continue
            url, tries = state.queue.popleft()
            state.in_flight += 1
            self.pending -= 1
            self._list(host, state)
            return host, url, tries
        return math.inf

    def started(self, host: str, next_at: float) -> None:
        """A request to ``host`` started; the store gives no turn before ``next_at``."""
        self._hosts[host].ready_at = next_at

    def requeue(self, host: str, url: str, tries: int) -> None:
        self._hosts[host].queue.appendleft((url, tries))
        self.pending += 1

    def release(self, host: str, ready_at: float = 0.0) -> None:
        """Free a slot of ``host``; no request there before ``ready_at``."""
        state = self._hosts[host]
        state.in_flight -= 1
        state.ready_at = max(state.ready_at, ready_at)
        self._list(host, state)

    def drop(self, host: str) -> list[tuple[str, int]]:
        """Every URL waiting for ``host``, taken out."""
        state = self._hosts[host]
        dropped, state.queue = list(state.queue), deque()
        self.pending -= len(dropped)
        return dropped

    def _list(self, host: str, state: _Host) -> None:
        if state.queue and state.in_flight < self._per_host and not state.listed:
            heapq.heappush(self._ready, (state.ready_at, next(self._order), host))
            state.listed = True


# --- storage ----------------------------------------------------------------------------------


class _Store:
    """Stores a run's outcomes: a fetched page's records go to the run's WARC files, then
    every outcome's row to its journal (the order the resume rule relies on)."""

    def __init__(self, warcs: RunWarcs, journal: Journal):
        self.warcs, self.journal = warcs, journal

    def add(self, out: _Outcome) -> None:
        row = {
            "url": out.url,
            # A redirect's Location, and errors that quote it, as well-formed text.
            "final_url": out.final_url and wellformed(out.final_url, "page"),
            "status": out.status,
            "http_status": out.http_status,
            "error": out.error and wellformed(out.error, "page"),
            "content_type": out.content_type,
            "bytes": None,
            "sha256": None,
            "fetched_at": out.fetched_at,
            "attempts": out.attempts,
            "requests": out.requests,
            "waited_s": out.waited_s,
            "warc_file": None,
            "warc_offset": None,
        }
        if out.status == "fetched":
            warc_file, offset = self.warcs.append(out.warc)
            row |= {
                "bytes": len(out.body),
                "sha256": out.sha256,
                "warc_file": warc_file,
                "warc_offset": offset,
            }
        self.journal.add(row)

    def close(self) -> None:
        self.warcs.close()


def _tally(summary: FetchSummary, out: _Outcome) -> None:
    setattr(summary, out.status, getattr(summary, out.status) + 1)
    summary.bytes += len(out.body) if out.status == "fetched" else 0


def fetch_urls(cfg: Config, urls: Iterable[str]) -> FetchSummary:
    """Fetch each distinct URL that the ledger does not hold or holds as retryable; store the
    HTML pages in WARC files and every outcome in the ledger (see ``warc`` and ``ledger``)."""
    DataRoot(cfg.data_root).fetch_journal.mkdir(parents=True, exist_ok=True)
    summary = FetchSummary(recovered=settle_finished_runs(cfg.data_root))
    settled = settled_urls(cfg.data_root)
    wanted = list(dict.fromkeys(urls))
    todo = [url for url in wanted if url not in settled]
    summary.urls, summary.skipped = len(wanted), len(wanted) - len(todo)
    run = f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"
    fetcher = _Fetcher(cfg.articles, open_store(cfg))
    try:
        with Journal(cfg.data_root, run) as journal:
            warcs = RunWarcs(cfg.data_root, run, cfg.articles.user_agent, cfg.articles.robots)
            store = _Store(warcs, journal)
            outcomes = fetcher.run(todo)
            try:
                for out in progress(outcomes, len(todo), "fetch"):
                    store.add(out)
                    _tally(summary, out)
            finally:
                outcomes.close()  # an interruption waits here for the requests in flight
                try:
                    for out in fetcher.leftovers():
                        store.add(out)
                        _tally(summary, out)
                finally:
                    store.close()
    finally:
        fetcher.close()
        settle_finished_runs(cfg.data_root)
    summary.requests = fetcher.requests
    summary.hosts_down = len(fetcher.hosts_down)
    summary.robots_fetches = fetcher.robots.fetches if fetcher.robots else 0
    log.info(summary.line())
    return summary
