"""Each host's turn, shared by every process that fetches: one politeness for a whole run.

What a host may be sent is kept in one store that every fetch process asks
(:func:`gdelt_forecast.articles.politeness_store.open_store`): a SQLite file on one machine
(``<data root>/tmp/politeness.sqlite``, the data root's own or its working copy's, never
pushed to a bucket), or Redis (``articles.politeness_store``, a ``redis://`` URL such as the
Celery broker's) to share it between machines. Per host:

- **the next permitted request**: a request to a host starts at least
  ``articles.per_host_delay_s`` after the last turn was given, and that plus
  ``articles.host_jitter_s`` after the last request was sent (its bytes written), whichever
  process sent them. The second rule is what lets a host itself see the interval: a process
  may stall between its turn and its request, so a turn's time says little of when the host
  got the request, while the moment it was sent is a latency before it. A request whose
  sending is unknown (it failed midway) counts from when its process handed the turn back;
- **leases**: at most ``articles.per_host`` requests in flight at once. A request holds a
  lease that its process renews while it runs (:class:`Store`); a process that dies
  blocks the host for at most ``articles.host_lease_s``, until its lease runs out;
- **a pause**: a 429 or 5xx answer's Retry-After, or the fetcher's backoff, holds the host
  for everyone;
- **down**: after ``articles.host_down_after`` failures in a row (connection refused or
  reset, a timeout, 5xx: what a dead host answers), the host is down for
  ``articles.host_down_s``. Its URLs end ``host_down`` without a request; a later run tries
  them again;
- **robots.txt**: its text per origin, for a day (RFC 9309 2.4), so each origin's is read
  once, not once per process.

SQLite and Redis are used as they are: a transaction (``BEGIN IMMEDIATE``) or a Lua script
makes each step atomic across processes. Times are the store's clock (``time.time()`` of the
machine, or Redis's ``TIME``), so processes agree on them.
"""

from __future__ import annotations

import logging
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from gdelt_forecast.ground.config import ArticlesConfig

log = logging.getLogger(__name__)

ROBOTS_TTL_S = 24 * 3600.0
POLL_S = 0.1  # how soon to ask again for a host whose every lease is held elsewhere
FILE_NAME = "politeness.sqlite"


@dataclass(frozen=True)
class Answer:
    """The store's answer to "may I send a request to this host now?"."""

    token: str | None = None  # yes: a lease, to hand back with :meth:`Store.done`
    wait_s: float = 0.0  # no: ask again after this long
    down: bool = False  # no: the host is down for now


class Store:
    """What both stores do; ``ArticlesConfig`` gives the rules. A subclass makes each step
    atomic (``_take``, ``_done``, ``_renew``); this class keeps the leases the process holds
    and renews them every third of ``host_lease_s`` on a thread of its own while the process
    lives, so that only a dead process's leases run out."""

    def __init__(self, cfg: ArticlesConfig):
        self.per_host, self.delay = cfg.per_host, cfg.per_host_delay_s
        self.jitter = cfg.host_jitter_s
        self.lease_s = cfg.host_lease_s
        self.down_after, self.down_s = cfg.host_down_after, cfg.host_down_s
        self._held: dict[str, str] = {}  # token -> host
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._renewer = threading.Thread(target=self._renew_held, name="leases", daemon=True)
        self._renewer.start()

    def take(self, host: str) -> Answer:
        """A lease on ``host`` if a request may start now; else how long to wait, or down."""
        answer = self._take(host, secrets.token_hex(8))
        if answer.token:
            with self._guard:
                self._held[answer.token] = host
        return answer

    def done(self, host: str, token: str, *, sent_s_ago: float | None = None,
             pause_s: float = 0.0, failed: bool = False) -> bool:  # fmt: skip
        """Hand a lease back when its answer ended. The host's next request waits
        ``per_host_delay_s + host_jitter_s`` from when this one was sent, ``sent_s_ago`` (by the
        process's clock; ``None``: not known, so from now), and ``pause_s`` from now if that is
        later; ``failed`` counts a failure in a row (anything else ends the row). True when
        the host is down now."""
        with self._guard:
            self._held.pop(token, None)
        return self._done(host, token, self.next_in_s(sent_s_ago), pause_s, failed)

    def next_in_s(self, sent_s_ago: float | None) -> float:
        """Seconds from now until a host's next request, its last one sent ``sent_s_ago``."""
        return self.delay if sent_s_ago is None else self.delay + self.jitter - sent_s_ago

    def _renew_held(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            with self._guard:
                held = dict(self._held)
            if held:
                try:
                    self._renew(held)
                except Exception:  # the store away for a moment: the next round tries again
                    log.warning("renewing %d host leases failed", len(held), exc_info=True)

    def close(self) -> None:
        self._stop.set()
        self._renewer.join()

    def _take(self, host: str, token: str) -> Answer:
        raise NotImplementedError

    def _done(self, host: str, token: str, next_in_s: float, pause_s: float,
              failed: bool) -> bool:  # fmt: skip
        """Atomically: the lease gone, the next request no sooner than ``next_in_s`` from
        the store's now, the pause, the failures in a row and the down mark."""
        raise NotImplementedError

    def _renew(self, held: dict[str, str]) -> None:
        raise NotImplementedError

    def robots(self, origin: str) -> str | None:
        """The robots.txt text kept for ``origin`` within the last day, else None."""
        raise NotImplementedError

    def keep_robots(self, origin: str, text: str) -> None:
        raise NotImplementedError


class FileStore(Store):
    """The store as a SQLite file, shared by the processes of one machine."""

    SCHEMA = """
    CREATE TABLE IF NOT EXISTS hosts (host TEXT PRIMARY KEY, next_at REAL NOT NULL DEFAULT 0,
        not_before REAL NOT NULL DEFAULT 0, failures INTEGER NOT NULL DEFAULT 0,
        down_until REAL NOT NULL DEFAULT 0);
    CREATE TABLE IF NOT EXISTS leases (token TEXT PRIMARY KEY, host TEXT NOT NULL,
        until REAL NOT NULL);
    CREATE INDEX IF NOT EXISTS leases_by_host ON leases (host);
    CREATE TABLE IF NOT EXISTS robots (origin TEXT PRIMARY KEY, text TEXT NOT NULL,
        at REAL NOT NULL);
    """

    def __init__(self, cfg: ArticlesConfig, path: Path):
        super().__init__(cfg)
        path.parent.mkdir(parents=True, exist_ok=True)
        # One connection per process, its threads taking turns (``_lock``); the file's own
        # lock orders the processes. What it holds is worth nothing after a crash of the
        # machine, so commits are not synced to disk.
        self._db = sqlite3.connect(path, timeout=60, isolation_level=None,
                                   check_same_thread=False)  # fmt: skip
        # One process at a time sets the file up: two switching a new file to WAL at once
        # may get "database is locked" at once, SQLite's busy timeout notwithstanding (seen
        # when two fetches start side by side).
        with FileLock(f"{path}.lock", timeout=60):
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=OFF")
            self._db.executescript(self.SCHEMA)
        self._lock = threading.Lock()

    def _step(self, step):
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                result = step(self._db, time.time())
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            return result

    def _take(self, host: str, token: str) -> Answer:
        def step(db: sqlite3.Connection, now: float) -> Answer:
            db.execute("DELETE FROM leases WHERE host = ? AND until <= ?", (host, now))
            db.execute("INSERT OR IGNORE INTO hosts (host) VALUES (?)", (host,))
            next_at, not_before, down_until = db.execute(
                "SELECT next_at, not_before, down_until FROM hosts WHERE host = ?", (host,)
            ).fetchone()
            if down_until > now:
                return Answer(down=True)
            ready = max(next_at, not_before)
            if ready > now:
                return Answer(wait_s=ready - now)
            (held,) = db.execute("SELECT count(*) FROM leases WHERE host = ?", (host,)).fetchone()
            if held >= self.per_host:
                return Answer(wait_s=POLL_S)
            db.execute("INSERT INTO leases VALUES (?, ?, ?)", (token, host, now + self.lease_s))
            db.execute("UPDATE hosts SET next_at = ? WHERE host = ?", (now + self.delay, host))
            return Answer(token=token)

        return self._step(step)

    def _done(self, host: str, token: str, next_in_s: float, pause_s: float,
              failed: bool) -> bool:  # fmt: skip
        def step(db: sqlite3.Connection, now: float) -> bool:
            db.execute("DELETE FROM leases WHERE token = ?", (token,))
            db.execute(
                "UPDATE hosts SET next_at = max(next_at, ?), not_before = max(not_before, ?), "
                "failures = CASE WHEN ? THEN failures + 1 ELSE 0 END WHERE host = ?",
                (now + next_in_s, now + pause_s, failed, host),
            )
            if self.down_after:
                db.execute(
                    "UPDATE hosts SET down_until = ? WHERE host = ? AND failures >= ?",
                    (now + self.down_s, host, self.down_after),
                )
            (down_until,) = db.execute(
                "SELECT down_until FROM hosts WHERE host = ?", (host,)
            ).fetchone()
            return down_until > now

        return self._step(step)

    def _renew(self, held: dict[str, str]) -> None:
        self._step(lambda db, now: db.executemany(
            "UPDATE leases SET until = ? WHERE token = ?",
            [(now + self.lease_s, token) for token in held],
        ))  # fmt: skip

    def robots(self, origin: str) -> str | None:
        row = self._step(lambda db, now: db.execute(
            "SELECT text FROM robots WHERE origin = ? AND at > ?", (origin, now - ROBOTS_TTL_S)
        ).fetchone())  # fmt: skip
        return row[0] if row else None

    def keep_robots(self, origin: str, text: str) -> None:
        self._step(lambda db, now: db.execute(
            "INSERT OR REPLACE INTO robots VALUES (?, ?, ?)", (origin, text, now)
        ))  # fmt: skip

    def close(self) -> None:
        super().close()
        self._db.close()
