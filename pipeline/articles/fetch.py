"""Fetch article pages politely and safely into WARC files, with a resumable ledger.

Under ``<data_root>/articles/``:

- ``pages/<run>-<n>.warc.gz``: WARC 1.1, one gzip member per record: a warcinfo record, then
  a response and a request record per fetched page. The response payload is the decoded
  body (Content-Encoding and Transfer-Encoding removed from its headers, Content-Length
  set to the decoded size), so any WARC reader sees the bytes the ledger's sha256 names.
  The response carries ``GDELT-Forecast-Source-URI``: the URL asked for, before redirects.
  A file being written is named ``.<run>-<n>.warc.gz.open`` and renamed once closed.
- ``fetch_journal/<run>.jsonl``: one JSON line per URL of a running (or crashed) run, written
  as soon as the URL is settled; ``<run>.lock`` is held by the running process (the OS
  releases it if the process dies).
- ``fetch_ledger.parquet``: one row per URL with its latest outcome (``LEDGER_SCHEMA``);
  ``attempts`` adds up the attempts of every run. One row per URL rather than per attempt
  because the ledger answers "what became of this URL" for re-runs and the processing
  stage; a retry's intermediate answers are logged at debug level.

Resume rule. A URL is settled once its journal line is written; a fetched page's WARC record
is written and flushed before that line. Every run starts (and ends) by folding the
journals of runs that are no longer running into the ledger: an unfinished WARC is cut
after its last complete gzip member and given its final name; a journal row whose record
lies past the cut is dropped (its URL is fetched again); a response record with no journal
row (the process died between the two writes) is added to the ledger as fetched, so it is
not fetched again. A run fetches the URLs that are not in the ledger or are ``retryable``;
an interrupted run still records what its requests in flight return.
"""

from __future__ import annotations

import hashlib
import heapq
import io
import itertools
import json
import logging
import math
import os
import queue
import secrets
import time
import zlib
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import urljoin

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import urllib3
from filelock import FileLock, Timeout
from warcio.archiveiterator import ArchiveIterator
from warcio.recordbuilder import RecordBuilder
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeaders
from warcio.timeutils import datetime_to_iso_date, iso_date_to_datetime
from warcio.warcwriter import WARCWriter

from pipeline import __version__
from pipeline.articles.robots import Robots, RobotsUnreachable
from pipeline.articles.safety import (
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
    split_url,
)
from pipeline.config import ArticlesConfig, Config
from pipeline.parquet_io import write_parquet
from pipeline.progress import progress

log = logging.getLogger(__name__)

STATUSES = (
    "fetched",  # an HTML page, stored
    "not_found",  # HTTP 404 or 410
    "refused",  # not http(s), or a host that resolves to a non-public address
    "robots",  # robots.txt disallows it
    "too_large",  # body over articles.max_bytes once decompressed
    "not_html",  # a Content-Type other than text/html or application/xhtml+xml
    "failed",  # will not heal: other 4xx, too many redirects, bad TLS, corrupt encoding
    "retryable",  # retries spent on errors, 429 or 5xx; a re-run tries again
)
RETRY_STATUSES = frozenset({"retryable"})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
REDIRECTS = frozenset({301, 302, 303, 307, 308})
SOURCE_HEADER = "GDELT-Forecast-Source-URI"
WARC_MAX_BYTES = 1 << 30  # the customary WARC file size
# Limit on one response from request to last byte. Meant to become a config field
# (articles.page_timeout_s); read_timeout_s bounds only the gap between two reads.
PAGE_TIMEOUT_S = 120.0
_RETRY = "retry"  # an attempt that may be retried; settled as "retryable" once retries run out
_DROPPED_HEADERS = frozenset({"content-encoding", "transfer-encoding", "content-length"})

LEDGER_SCHEMA = pa.schema(
    [
        ("url", pa.string()),
        ("final_url", pa.string()),
        ("status", pa.string()),
        ("http_status", pa.int32()),
        ("error", pa.string()),
        ("content_type", pa.string()),
        ("bytes", pa.int64()),
        ("sha256", pa.string()),
        ("fetched_at", pa.timestamp("us", tz="UTC")),
        ("attempts", pa.int32()),
        ("warc_file", pa.string()),  # relative to data_root
        ("warc_offset", pa.int64()),  # of the response record, for direct access
    ]
)


@dataclass(frozen=True)
class Page:
    """One HTTP response from a WARC file."""

    url: str  # the URL asked for (before redirects, when the WARC says so)
    final_url: str
    fetched_at: datetime
    http_status: int
    content_type: str
    body: bytes


@dataclass
class FetchSummary:
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
    recovered: int = 0  # pages of interrupted runs added to the ledger from their WARC files
    requests: int = 0  # page requests: redirect hops and retries included
    robots_fetches: int = 0
    bytes: int = 0  # body bytes stored
    seconds: float = 0.0

    def line(self) -> str:
        counts = ", ".join(f"{getattr(self, s)} {s.replace('_', ' ')}" for s in STATUSES)
        return (
            f"fetch: {self.urls} URLs, {self.skipped} already done; {counts}; "
            f"{self.requests} requests, {self.bytes / 1e6:.1f} MB stored ({self.seconds:.1f} s)"
        )

    def to_dict(self) -> dict:
        return asdict(self)


def articles_root(data_root: Path) -> Path:
    return Path(data_root) / "articles"


def ledger_path(data_root: Path) -> Path:
    return articles_root(data_root) / "fetch_ledger.parquet"


def read_ledger(data_root: Path) -> dict[str, dict]:
    """The ledger's rows by URL."""
    path = ledger_path(data_root)
    if not path.exists():
        return {}
    return {row["url"]: row for row in pq.read_table(path, schema=LEDGER_SCHEMA).to_pylist()}


def _settled_urls(data_root: Path) -> set[str]:
    """URLs the ledger holds in a final state (a re-run leaves them alone)."""
    path = ledger_path(data_root)
    if not path.exists():
        return set()
    table = pq.read_table(path, columns=["url", "status"])
    final = pc.invert(pc.is_in(table["status"], pa.array(sorted(RETRY_STATUSES))))
    return set(table.filter(final)["url"].to_pylist())


# --- one URL ----------------------------------------------------------------------------------


@dataclass
class _Outcome:
    url: str
    status: str = "failed"
    final_url: str | None = None
    http_status: int | None = None
    error: str | None = None
    content_type: str | None = None
    wait: float | None = None  # for a retry: the server's Retry-After, in seconds
    requests: int = 0
    attempts: int = 1
    fetched_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    body: bytes = b""
    sha256: str | None = None
    warc: bytes = b""  # the gzip members of the response and request records

    def end(self, status: str, error: str | None = None, wait: float | None = None) -> _Outcome:
        self.status, self.error, self.wait = status, error, wait
        self.fetched_at = datetime.now(UTC)
        return self


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


_BUILDER = RecordBuilder(warc_version="1.1")


def _gzip_member(record: ArcWarcRecord) -> bytes:
    """One record as one gzip member. warcio would compress at level 9; level 6 is several
    times faster for about the same size."""
    buf = io.BytesIO()
    WARCWriter(buf, gzip=False, warc_version="1.1").write_record(record)
    packer = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return packer.compress(buf.getvalue()) + packer.flush()


def _warc_records(
    out: _Outcome, target: Target, resp: urllib3.BaseHTTPResponse, request_headers: dict
) -> bytes:
    """The response and request records of a fetched page, each its own gzip member; built in
    the worker thread, where compression runs in parallel (zlib releases the GIL)."""
    date = datetime_to_iso_date(out.fetched_at.replace(tzinfo=None), use_micros=True)
    headers = [(k, v) for k, v in resp.headers.items() if k.lower() not in _DROPPED_HEADERS]
    headers.append(("Content-Length", str(len(out.body))))
    protocol = "HTTP/1.0" if resp.version == 10 else "HTTP/1.1"
    response = _BUILDER.create_warc_record(
        target.url,
        "response",
        payload=io.BytesIO(out.body),
        length=len(out.body),
        http_headers=StatusAndHeaders(
            f"{resp.status} {resp.reason or ''}".strip(), headers, protocol=protocol
        ),
        warc_headers_dict={"WARC-Date": date, SOURCE_HEADER: out.url},
    )
    request = _BUILDER.create_warc_record(
        target.url,
        "request",
        http_headers=StatusAndHeaders(
            f"GET {target.path} HTTP/1.1",
            [("Host", target.host_header), *request_headers.items()],
            is_http_request=True,
        ),
        warc_headers_dict={
            "WARC-Date": date,
            "WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID"),
        },
    )
    return _gzip_member(response) + _gzip_member(request)


class _Fetcher:
    """Fetches URLs on a thread pool under the global, per-host and delay limits."""

    def __init__(self, cfg: ArticlesConfig):
        self.cfg = cfg
        self.client = PinnedClient(
            cfg.user_agent,
            (cfg.connect_timeout_s, cfg.read_timeout_s),
            pools=max(16, 2 * cfg.concurrency),
            per_pool=cfg.concurrency,
        )
        self.robots = Robots(self.client, cfg.user_agent, cfg.allow_hosts) if cfg.robots else None
        self.finished: queue.Queue[tuple[str, int, _Outcome]] = queue.Queue()
        self.in_flight = 0
        self.requests = 0

    # -- in a worker thread --

    def _work(self, host: str, url: str, attempt: int) -> None:
        try:
            outcome = self._attempt(url)
        except Exception as exc:  # a bug must neither hang the run nor lose the URL
            log.exception("fetching %s", url)
            outcome = _Outcome(url).end("failed", f"internal error: {_one_line(exc)}")
        self.finished.put((host, attempt, outcome))

    def _attempt(self, url: str) -> _Outcome:
        """One try at ``url``, following redirects; every hop is checked like the first."""
        out = _Outcome(url)
        current = url
        for _ in range(self.cfg.max_redirects + 1):
            out.final_url = current
            try:
                target = resolve_and_check(current, self.cfg.allow_hosts)
            except Refused as exc:
                return out.end("refused", str(exc))
            except Unresolvable as exc:
                return out.end(_RETRY if exc.temporary else "failed", str(exc))
            try:
                if self.robots and not self.robots.allows(target):
                    return out.end("robots", f"robots.txt disallows {current}")
            except RobotsUnreachable as exc:
                return out.end(_RETRY, str(exc))
            out.requests += 1
            deadline = time.monotonic() + PAGE_TIMEOUT_S
            try:
                resp = self.client.get(target)
            except urllib3.exceptions.SSLError as exc:
                return out.end("failed", _one_line(exc))
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                return out.end(_RETRY, _one_line(exc))
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
        out.content_type = resp.headers.get("Content-Type")
        mime = (out.content_type or "").split(";")[0].strip().lower()
        length = resp.headers.get("Content-Length", "")
        read_all = False
        try:
            if status in (404, 410):
                return out.end("not_found", f"HTTP {status}")
            if status == 429 or status >= 500:
                return out.end(
                    _RETRY, f"HTTP {status}", retry_after(resp.headers.get("Retry-After"))
                )
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
            return out.end(_RETRY, str(exc))
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            return out.end(_RETRY, _one_line(exc))
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
        schedule = _Schedule(self.cfg.per_host, self.cfg.per_host_delay_s)
        for url in urls:
            try:
                schedule.add(split_url(url)[1], url)
            except Refused as exc:
                yield _Outcome(url, final_url=url).end("refused", str(exc))
        with ThreadPoolExecutor(self.cfg.concurrency, thread_name_prefix="article") as pool:
            while schedule.pending or self.in_flight:
                wait = self._dispatch(pool, schedule)
                try:
                    host, attempt, outcome = self.finished.get(timeout=wait)
                except queue.Empty:
                    continue
                self.in_flight -= 1
                if self._settle(schedule, host, attempt, outcome):
                    yield outcome

    def _dispatch(self, pool: ThreadPoolExecutor, schedule: _Schedule) -> float:
        """Start every URL the limits allow now; return how long to wait for a result."""
        while self.in_flight < self.cfg.concurrency:
            ready = schedule.pop(time.monotonic())
            if isinstance(ready, float):
                # Poll at least every second: cheap, and no wait can then be lost.
                return min(ready, 1.0)
            host, url, tries = ready
            pool.submit(self._work, host, url, tries + 1)
            self.in_flight += 1
        return 1.0

    def _settle(self, schedule: _Schedule, host: str, attempt: int, out: _Outcome) -> bool:
        """Free the host's slot; requeue a retry (True when ``out`` is settled)."""
        now = time.monotonic()
        self.requests += out.requests
        out.attempts = attempt
        if out.status == _RETRY:
            wait = out.wait if out.wait is not None else self.cfg.backoff_s * 2 ** (attempt - 1)
            if attempt <= self.cfg.retries and wait <= self.cfg.max_retry_after_s:
                log.debug("%s: %s; retry %d in %.1f s", out.url, out.error, attempt, wait)
                schedule.retry(host, out.url, attempt, now + wait)
                schedule.release(host, now)
                return False
            out.status = "retryable"
            if wait > self.cfg.max_retry_after_s:
                out.error = f"{out.error}; Retry-After {wait:.0f} s over max_retry_after_s"
        schedule.release(host, now)
        return True

    def leftovers(self) -> list[_Outcome]:
        """Outcomes that arrived after the run was interrupted; retries become retryable."""
        found = []
        while not self.finished.empty():
            _, attempt, out = self.finished.get_nowait()
            self.requests += out.requests
            out.attempts = attempt
            if out.status == _RETRY:
                out.status = "retryable"
            found.append(out)
        return found

    def close(self) -> None:
        self.client.close()


@dataclass
class _Host:
    free_at: list[float]  # heap: when each idle slot may start its next request
    queue: deque[tuple[str, int]] = field(default_factory=deque)  # (url, attempts so far)
    not_before: float = 0.0  # the host asked us to back off until then
    listed: bool = False  # in _Schedule._ready

    def ready_at(self) -> float:
        return max(self.free_at[0], self.not_before)


class _Schedule:
    """Which URL may start next. A host has ``per_host`` slots; a slot starts again only
    ``delay`` seconds after its request ended, and a host that answered with an error or
    429 / 5xx is paused for the retry's wait. Ready hosts sit in a heap by the time they
    become ready, so picking one costs O(log hosts)."""

    def __init__(self, per_host: int, delay: float):
        self._per_host, self._delay = per_host, delay
        self._hosts: dict[str, _Host] = {}
        self._ready: list[tuple[float, int, str]] = []
        self._order = itertools.count()
        self.pending = 0

    def add(self, host: str, url: str, tries: int = 0) -> None:
        state = self._hosts.setdefault(host, _Host(free_at=[0.0] * self._per_host))
        state.queue.append((url, tries))
        self.pending += 1
        self._list(host, state)

    def retry(self, host: str, url: str, tries: int, not_before: float) -> None:
        state = self._hosts[host]
        state.queue.appendleft((url, tries))
        state.not_before = max(state.not_before, not_before)
        self.pending += 1

    def release(self, host: str, now: float) -> None:
        state = self._hosts[host]
        heapq.heappush(state.free_at, now + self._delay)
        self._list(host, state)

    def pop(self, now: float) -> tuple[str, str, int] | float:
        """(host, url, attempts so far) of a URL that may start now, else seconds until one
        may (inf when every slot with work is busy)."""
        while self._ready:
            at, _, host = self._ready[0]
            state = self._hosts[host]
            if state.ready_at() > at:  # paused since it was listed
                heapq.heapreplace(self._ready, (state.ready_at(), next(self._order), host))
                continue
            if at > now:
                return at - now
            heapq.heappop(self._ready)
            state.listed = False
            heapq.heappop(state.free_at)
            url, tries = state.queue.popleft()
            self.pending -= 1
            self._list(host, state)
            return host, url, tries
        return math.inf

    def _list(self, host: str, state: _Host) -> None:
        if state.queue and state.free_at and not state.listed:
            heapq.heappush(self._ready, (state.ready_at(), next(self._order), host))
            state.listed = True


# --- storage: WARC files, journal, ledger -----------------------------------------------------


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


class _Store:
    """Appends a run's pages to its WARC files and its outcomes to its journal."""

    def __init__(self, articles: Path, run: str, cfg: ArticlesConfig):
        self._run, self._cfg = run, cfg
        self._pages = articles / "pages"
        self._pages.mkdir(parents=True, exist_ok=True)
        self._journal = (articles / "fetch_journal" / f"{run}.jsonl").open("a", encoding="utf-8")
        self._warc: io.BufferedWriter | None = None
        self._name = ""
        self._files = 0

    def add(self, out: _Outcome) -> None:
        row = {
            "url": out.url,
            "final_url": out.final_url,
            "status": out.status,
            "http_status": out.http_status,
            "error": out.error,
            "content_type": out.content_type,
            "bytes": None,
            "sha256": None,
            "fetched_at": _iso(out.fetched_at),
            "attempts": out.attempts,
            "warc_file": None,
            "warc_offset": None,
        }
        if out.status == "fetched":
            offset = self._append(out.warc)
            row |= {
                "bytes": len(out.body),
                "sha256": out.sha256,
                "warc_file": f"articles/pages/{self._name}",
                "warc_offset": offset,
            }
        self._journal.write(json.dumps(row) + "\n")
        self._journal.flush()

    def _append(self, records: bytes) -> int:
        if self._warc is None or self._warc.tell() >= WARC_MAX_BYTES:
            self._close_warc()
            self._open_warc()
        assert self._warc is not None
        offset = self._warc.tell()
        self._warc.write(records)
        # Flushed before the journal line, so a line never names a record still in a buffer.
        self._warc.flush()
        return offset

    def _open_warc(self) -> None:
        self._files += 1
        self._name = f"{self._run}-{self._files:05d}.warc.gz"
        self._warc = (self._pages / f".{self._name}.open").open("xb")
        info = _BUILDER.create_warcinfo_record(
            self._name,
            {
                "software": f"gdelt-forecast/{__version__} (warcio)",
                "http-header-user-agent": self._cfg.user_agent,
                "robots": "obey" if self._cfg.robots else "ignore",
                "format": "WARC File Format 1.1",
                "conformsTo": "https://iipc.github.io/warc-specifications/specifications/"
                "warc-format/warc-1.1/",
            },
        )
        self._warc.write(_gzip_member(info))

    def _close_warc(self) -> None:
        if self._warc is None:
            return
        self._warc.flush()
        os.fsync(self._warc.fileno())
        self._warc.close()
        self._warc = None
        os.replace(self._pages / f".{self._name}.open", self._pages / self._name)

    def close(self) -> None:
        self._close_warc()
        self._journal.close()


def _complete_members_end(path: Path) -> int:
    """The offset just past the last complete gzip member of ``path``."""
    end = offset = 0
    unzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            data = chunk
            while data:
                try:
                    unzip.decompress(data)  # our own records: each at most max_bytes and headers
                except zlib.error:
                    return end
                if not unzip.eof:
                    offset += len(data)
                    break
                offset += len(data) - len(unzip.unused_data)
                end, data = offset, unzip.unused_data
                unzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
    return end


def _warc_date(value: str) -> datetime:
    return iso_date_to_datetime(value).replace(tzinfo=UTC)


def _page(record: ArcWarcRecord) -> Page | None:
    """The Page of an HTTP response record; None for any other record."""
    if record.rec_type != "response" or record.http_headers is None:
        return None
    final_url = record.rec_headers.get_header("WARC-Target-URI") or ""
    try:
        status = int(record.http_headers.get_statuscode())
    except (TypeError, ValueError):
        return None
    return Page(
        url=record.rec_headers.get_header(SOURCE_HEADER) or final_url,
        final_url=final_url,
        fetched_at=_warc_date(record.rec_headers.get_header("WARC-Date")),
        http_status=status,
        content_type=record.http_headers.get_header("Content-Type") or "",
        # Decodes chunked transfer and gzip content encoding that other archives keep.
        body=record.content_stream().read(),
    )


def _recovered_rows(path: Path, warc_file: str, skip: set[str]) -> list[dict]:
    """Ledger rows for the pages of our WARC file ``path`` whose URL is not in ``skip``."""
    rows = []
    with path.open("rb") as fh:
        records = ArchiveIterator(fh)
        for record in records:
            page = _page(record)
            if page is None or page.url in skip:
                continue
            rows.append(
                {
                    "url": page.url,
                    "final_url": page.final_url,
                    "status": "fetched",
                    "http_status": page.http_status,
                    "error": None,
                    "content_type": page.content_type or None,
                    "bytes": len(page.body),
                    "sha256": hashlib.sha256(page.body).hexdigest(),
                    "fetched_at": _iso(page.fetched_at),
                    "attempts": 1,  # at least; the journal line with the count was lost
                    "warc_file": warc_file,
                    "warc_offset": records.get_record_offset(),
                }
            )
    return rows


def _salvage(articles: Path, run: str, rows: list[dict]) -> tuple[list[dict], int]:
    """Finish the WARC files a dead run left open. Returns its journal rows less those whose
    record was cut off, plus rows for records it wrote but never journaled, and how many of
    the latter there were."""
    pages = articles / "pages"
    journaled = {row["url"] for row in rows}
    lost: set[str] = set()
    recovered: list[dict] = []
    for unfinished in sorted(pages.glob(f".{run}-*.warc.gz.open")):
        name = unfinished.name[1 : -len(".open")]
        end = _complete_members_end(unfinished)
        lost |= {
            row["url"]
            for row in rows
            if row["warc_file"] == f"articles/pages/{name}" and row["warc_offset"] >= end
        }
        if end == 0:
            unfinished.unlink()
            continue
        with unfinished.open("r+b") as fh:
            fh.truncate(end)
            os.fsync(fh.fileno())
        os.replace(unfinished, pages / name)
        recovered += _recovered_rows(pages / name, f"articles/pages/{name}", journaled)
    if lost:
        log.warning(
            "run %s: %d journaled pages lost with the WARC tail; refetching", run, len(lost)
        )
    return [row for row in rows if row["url"] not in lost] + recovered, len(recovered)


def _read_journal(path: Path) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # the last line, cut short by a crash
    return rows


def _merge_ledger(data_root: Path, rows: list[dict]) -> None:
    """Replace the rows of these URLs, adding up attempts; the caller holds the ledger lock."""
    if not rows:
        return
    merged = read_ledger(data_root)
    for row in rows:
        prior = merged.get(row["url"])
        merged[row["url"]] = {
            **row,
            "fetched_at": datetime.fromisoformat(row["fetched_at"]),
            "attempts": row["attempts"] + ((prior["attempts"] or 0) if prior else 0),
        }
    table = pa.Table.from_pylist([merged[url] for url in sorted(merged)], schema=LEDGER_SCHEMA)
    write_parquet(table, ledger_path(data_root))


def _settle_finished_runs(data_root: Path) -> int:
    """Fold the journals of runs that are no longer running (ended or died) into the ledger;
    return the number of pages recovered from WARC records that had no journal line."""
    articles = articles_root(data_root)
    recovered = 0
    with FileLock(f"{ledger_path(data_root)}.lock"):
        for journal in sorted((articles / "fetch_journal").glob("*.jsonl")):
            lock = FileLock(journal.with_suffix(".lock"))
            try:
                lock.acquire(timeout=0)
            except Timeout:
                continue  # its run is still going
            try:
                rows, found = _salvage(articles, journal.stem, _read_journal(journal))
                _merge_ledger(data_root, rows)
                journal.unlink()
                recovered += found
            finally:
                lock.release()
                Path(lock.lock_file).unlink(missing_ok=True)
    return recovered


def _tally(summary: FetchSummary, out: _Outcome) -> None:
    setattr(summary, out.status, getattr(summary, out.status) + 1)
    summary.bytes += len(out.body) if out.status == "fetched" else 0


def fetch_urls(cfg: Config, urls: Iterable[str]) -> FetchSummary:
    """Fetch each distinct URL that the ledger does not hold or holds as retryable; store the
    HTML pages in WARC files and every outcome in the ledger (see the module docstring)."""
    t0 = time.monotonic()
    articles = articles_root(cfg.data_root)
    (articles / "fetch_journal").mkdir(parents=True, exist_ok=True)
    summary = FetchSummary(recovered=_settle_finished_runs(cfg.data_root))
    settled = _settled_urls(cfg.data_root)
    wanted = list(dict.fromkeys(urls))
    todo = [url for url in wanted if url not in settled]
    summary.urls, summary.skipped = len(wanted), len(wanted) - len(todo)
    run = f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"
    fetcher = _Fetcher(cfg.articles)
    try:
        with FileLock(articles / "fetch_journal" / f"{run}.lock"):
            store = _Store(articles, run, cfg.articles)
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
                    fetcher.close()
    finally:
        _settle_finished_runs(cfg.data_root)
    summary.requests = fetcher.requests
    summary.robots_fetches = fetcher.robots.fetches if fetcher.robots else 0
    summary.seconds = time.monotonic() - t0
    log.info(summary.line())
    return summary


WARC_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")


def warc_paths(source: str | Path | Iterable[str | Path]) -> list[Path]:
    """The WARC files ``source`` names: a data root (its articles/pages), a folder holding
    WARC or ARC files, a file, or several of these."""
    found: list[Path] = []
    for item in [source] if isinstance(source, str | Path) else source:
        path = Path(item)
        if not path.is_dir():
            found.append(path)
            continue
        folder = articles_root(path) / "pages"
        folder = folder if folder.is_dir() else path
        found += sorted(
            f
            for f in folder.iterdir()
            if f.name.endswith(WARC_SUFFIXES) and not f.name.startswith(".") and f.is_file()
        )
    return found


def iter_pages(source: str | Path | Iterable[str | Path]) -> Iterator[Page]:
    """Every HTTP response in the WARC (or ARC) files of ``source`` (see ``warc_paths``),
    gzipped or not, ours or any web archive's, in file order."""
    for path in warc_paths(source):
        with path.open("rb") as fh:
            for record in ArchiveIterator(fh, arc2warc=True):
                if page := _page(record):
                    yield page
