"""The sha256 of a data root's files, remembered by their inode, size and mtime.

Every stage that reads the warehouse fingerprints its sources (each silver and document
file's sha256), and a release lists the sha256 of every file it links from the warehouse: at
a year's volume that is gigabytes hashed again at every step of every refresh. As git's index
does, a file's digest is kept beside its inode, size and mtime, and trusted while they stay
the same. A hard link shares the inode, so a release's linked month file finds the digest the
warehouse's file left. A file whose mtime is less than ``SETTLED_S`` old when hashed is not
kept: a second write within the same clock tick may leave its mtime as it was (git's "racy
clean" case). Our files are replaced by a rename (a new inode), never rewritten in place.

Written by hand: no library keeps such a cache (hashlib hashes; sqlite3, of the standard
library, keeps the table, safe across the processes of a machine). The cache lives in the data
root's scratch folder (never pushed to a bucket); a missing or unreadable one only costs the
hashing again.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from pathlib import Path

from gdelt_forecast.ground.data_root import SCRATCH
from gdelt_forecast.ground.files import sha256

log = logging.getLogger(__name__)
SETTLED_S = 2.0
FILE = "sha256.sqlite"


class Digests:
    """``Digests(data_root).of(path)``: the sha256 of ``path``, hashed once per version."""

    def __init__(self, data_root: Path):
        self.path = Path(data_root) / SCRATCH / FILE
        self._db: sqlite3.Connection | None = None

    def _open(self) -> sqlite3.Connection | None:
        if self._db is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
                # A lost write only costs a hash again: no fsync at each of them.
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=OFF")
                db.execute(
                    "CREATE TABLE IF NOT EXISTS digests (dev INTEGER, ino INTEGER, size INTEGER,"
                    " mtime_ns INTEGER, sha256 TEXT, PRIMARY KEY (dev, ino))"
                )
                self._db = db
            except (OSError, sqlite3.Error) as exc:
                log.warning("sha256 cache %s unusable (%s): hashing every file", self.path, exc)
                return None
        return self._db

    def of(self, path: Path) -> str:
        before = os.stat(path)
        key = (before.st_dev, before.st_ino)
        db = self._open()
        if db is not None:
            try:
                found = db.execute(
                    "SELECT sha256 FROM digests WHERE dev = ? AND ino = ? AND size = ?"
                    " AND mtime_ns = ?",
                    (*key, before.st_size, before.st_mtime_ns),
                ).fetchone()
            except sqlite3.Error:
                found = None
            if found:
                return found[0]
        digest = sha256(path)
        after = os.stat(path)
        settled = after.st_mtime_ns <= time.time_ns() - SETTLED_S * 1e9
        same = (after.st_ino, after.st_size, after.st_mtime_ns) == (
            before.st_ino,
            before.st_size,
            before.st_mtime_ns,
        )
        if db is not None and settled and same:
            try:
                db.execute(
                    "INSERT OR REPLACE INTO digests VALUES (?, ?, ?, ?, ?)",
                    (*key, after.st_size, after.st_mtime_ns, digest),
                )
            except sqlite3.Error as exc:  # locked past the timeout, disk full: not kept
                log.debug("sha256 of %s not kept: %s", path, exc)
        return digest

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> Digests:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
