"""Verified downloads into the raw cache: one keep-alive session, retries, md5, atomic writes."""

from __future__ import annotations

import hashlib
import logging
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import requests
from requests.adapters import HTTPAdapter
from requests_file import FileAdapter
from urllib3.util.retry import Retry

from gdelt_forecast import __version__
from gdelt_forecast.gdelt.masterfile import SlotFile
from gdelt_forecast.ground.config import DownloadConfig
from gdelt_forecast.ground.files import temporary

log = logging.getLogger(__name__)

STATUSES = ("downloaded", "cached", "missing", "corrupt", "failed")
_CHUNK = 1 << 20


@dataclass
class Fetched:
    """Outcome of one listed file. ``path`` is set for downloaded and cached files."""

    file: SlotFile
    status: str
    path: str | None = None
    detail: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Fetched:
        return cls(**{**data, "file": SlotFile(**data["file"])})


def make_session(cfg: DownloadConfig) -> requests.Session:
    """A pooled session that retries connection errors and 5xx with exponential backoff."""
    retry = Retry(
        total=cfg.retries,
        connect=cfg.retries,
        read=cfg.retries,
        status=cfg.retries,
        backoff_factor=cfg.backoff_s,
        status_forcelist=(500, 502, 503, 504),
        allowed_methods=frozenset({"GET"}),
        raise_on_status=False,
    )
    session = requests.Session()
    adapter = HTTPAdapter(max_retries=retry, pool_connections=1, pool_maxsize=cfg.parallelism)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.mount("file://", FileAdapter())
    session.headers["User-Agent"] = f"gdelt-forecast/{__version__}"
    return session


def raw_path(raw_root: Path, file: SlotFile) -> Path:
    return raw_root / file.table / file.slot[:8] / file.name


def _digest(path: Path) -> tuple[int, str]:
    md5 = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            md5.update(chunk)
    return path.stat().st_size, md5.hexdigest()


def _matches(file: SlotFile, size: int, md5: str) -> bool:
    return size == file.size and md5 == file.md5


def _download_once(
    session: requests.Session, file: SlotFile, tmp: Path, timeout: tuple[float, float]
) -> tuple[int, int, str]:
    """Stream the body into ``tmp``; return (HTTP status, size, md5)."""
    md5 = hashlib.md5(usedforsecurity=False)
    size = 0
    with session.get(file.url, stream=True, timeout=timeout) as resp:
        if resp.status_code != 200:
            return resp.status_code, 0, ""
        with tmp.open("wb") as out:
            for chunk in resp.iter_content(_CHUNK):
                out.write(chunk)
                md5.update(chunk)
                size += len(chunk)
    return 200, size, md5.hexdigest()


def fetch(
    session: requests.Session, file: SlotFile, raw_root: Path, cfg: DownloadConfig
) -> Fetched:
    """Make ``raw_root`` hold a verified copy of ``file``, or say why it cannot."""
    dest = raw_path(raw_root, file)
    if dest.exists():
        if _matches(file, *_digest(dest)):
            return Fetched(file, "cached", str(dest))
        log.warning("%s: cached copy fails verification; downloading again", file.name)
    tmp = temporary(dest, ".part")
    mismatch = error = ""
    try:
        for attempt in range(1, cfg.verify_attempts + 1):
            if attempt > 1:
                time.sleep(cfg.backoff_s * 2 ** (attempt - 2))
            try:
                status, size, md5 = _download_once(session, file, tmp, cfg.timeout)
            except requests.RequestException as exc:
                mismatch, error = "", f"{exc.__class__.__name__}: {exc}"
                continue
            if status == 404:
                return Fetched(file, "missing", detail="HTTP 404")
            if status != 200:
                # 5xx were already retried by the session; other codes will not heal.
                return Fetched(file, "failed", detail=f"HTTP {status}")
            if _matches(file, size, md5):
                os.replace(tmp, dest)
                return Fetched(file, "downloaded", str(dest))
            mismatch = f"got {size} bytes md5 {md5}, listed {file.size} bytes md5 {file.md5}"
            log.warning("%s: attempt %d: %s", file.name, attempt, mismatch)
        if not mismatch:
            return Fetched(file, "failed", detail=error)
        quarantine = raw_root / "_quarantine" / file.table / file.name
        quarantine.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, quarantine)
        # The detail reaches the ledger and the release: where in the raw cache, not on
        # which machine.
        kept = quarantine.relative_to(raw_root.parent.parent).as_posix()
        return Fetched(file, "corrupt", detail=f"{mismatch}; kept in {kept}")
    finally:
        tmp.unlink(missing_ok=True)
