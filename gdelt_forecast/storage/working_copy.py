"""A data root in an S3 bucket (``s3://bucket/prefix``): the stages run on a local working
copy, pulling what they read from the bucket before and pushing what they wrote after.

Why a working copy rather than every stage on fsspec paths: the stages append to WARC files
and fetch journals, rename finished files over old ones and write a DuckDB file, none of
which object storage offers. Every file a stage writes is finished before it appears (see
:mod:`gdelt_forecast.ground.parquet_io`), so pushing at file granularity leaves no half-written
object in the bucket. ``warehouse.duckdb`` is built in the working copy from the bucket's Parquet
and never pushed (:mod:`gdelt_forecast.warehouse.build` reads the silver Parquet straight from the
bucket through DuckDB, :func:`readable`). Releases are not pushed either:
:mod:`gdelt_forecast.release.publish` puts a finished one in the bucket whole. Only
:mod:`gdelt_forecast.pipeline.runner` (and the release's publisher it calls) know whether a data
root is a bucket; the stages see a local folder, and the one that reads in place (the warehouse)
asks :func:`readable` where a file is read from.

The sync is ours (no library does a three-way sync against a record of the last one): each
working copy keeps ``.sync/state.json``, the ETag, size and mtime of every file as last
pulled or pushed. A pull replaces only files untouched since then; a push sends the files
that differ from it and deletes in the bucket the ones deleted here.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock

from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import WAREHOUSE, WAREHOUSE_PARTS, WAREHOUSE_RECORD
from gdelt_forecast.ground.digests import Digests
from gdelt_forecast.storage.bucket import Bucket, StorageError, bucket, reported
from gdelt_forecast.storage.leases import bucket_lock

log = logging.getLogger(__name__)

# Never pushed: scratch, local locks (*.lock), the local warehouse (its tables' monthly files
# too) and its record, releases (published whole) and the sync state itself; names starting
# with "." are files still being written.
_LOCAL_ONLY = (
    "tmp/", "locks/", "releases/", ".sync/", WAREHOUSE, f"{WAREHOUSE_PARTS}/", WAREHOUSE_RECORD
)  # fmt: skip


def local_root(cfg: Config) -> Path:
    """Where an s3:// data root's working copy lives on this machine (the same path on every
    machine with the same ``storage.local_dir``)."""
    bucket_root = cfg.data_root.removeprefix("s3://")
    return Path(cfg.storage.local_dir).expanduser().resolve() / "s3" / bucket_root


def _local_only(rel: str) -> bool:
    hidden = any(p.startswith(".") for p in rel.split("/"))
    return rel.startswith(_LOCAL_ONLY) or rel.endswith(".lock") or hidden


class WorkingCopy:
    """``<storage.local_dir>/s3/<bucket>/<prefix>``: the folder the stages see as data root."""

    def __init__(self, cfg: Config, store: Bucket):
        self.bucket = store
        self.ttl_s = cfg.storage.lock_ttl_s
        self.path = local_root(cfg)
        (self.path / ".sync").mkdir(parents=True, exist_ok=True)
        self._state_file = self.path / ".sync" / "state.json"
        self._lock = FileLock(self.path / ".sync" / "lock")  # processes on this machine

    def _state(self) -> dict[str, list]:
        if not self._state_file.exists():
            return {}
        return json.loads(self._state_file.read_text(encoding="utf-8"))

    def _save(self, state: dict[str, list]) -> None:
        tmp = self._state_file.with_name(".state.json.tmp")
        tmp.write_text(json.dumps(state, sort_keys=True), encoding="utf-8")
        tmp.replace(self._state_file)

    def _stamp(self, rel: str) -> tuple[int, int]:
        st = (self.path / rel).stat()
        return st.st_size, st.st_mtime_ns

    def forget(self, rel: str) -> None:
        """Drop ``rel`` from the sync record (its next pull takes the bucket's copy)."""
        with self._lock:
            state = self._state()
            state.pop(rel, None)
            self._save(state)

    def _wanted(self, rel: str, seen: list | None, etag: str) -> bool:
        """Whether a pull takes the bucket's ``rel``: we never had it, or ours is untouched
        since the last sync and the bucket's changed (another machine replaced it). A file
        deleted here since is left deleted: the next push deletes it there."""
        if not (self.path / rel).exists():
            return seen is None
        return seen is not None and seen[0] != etag and tuple(seen[1:]) == self._stamp(rel)

    def pull(self, patterns: list[str], force: bool = False) -> int:
        """Bring the bucket's files that match ``patterns`` (folders, files or globs, relative
        to the root) into the working copy; files changed here since the last sync are kept,
        unless ``force``. Each arrives under a hidden name and is renamed over the old one, so
        another process reading it meanwhile sees one whole version or the other. Returns how
        many files were downloaded."""
        with self._lock:
            state = self._state()
            remote: dict[str, dict] = {}
            for pattern in patterns:
                folder = pattern.split("*")[0].rsplit("/", 1)[0] if "*" in pattern else pattern
                found = self.bucket.listing(folder)
                remote.update({r: i for r, i in found.items() if _matches(r, pattern)})
            wanted = [r for r, i in remote.items()
                      if force or self._wanted(r, state.get(r), i["ETag"])]  # fmt: skip
            gone = [r for r in state if any(_matches(r, p) for p in patterns) and r not in remote]
            for rel in gone:  # deleted in the bucket: drop our copy unless we changed it
                if not (self.path / rel).exists() or tuple(state[rel][1:]) == self._stamp(rel):
                    (self.path / rel).unlink(missing_ok=True)
                    del state[rel]
            if wanted:
                arriving = [(self.path / r).with_name(f".{Path(r).name}.pull") for r in wanted]
                for path in arriving:
                    path.parent.mkdir(parents=True, exist_ok=True)
                self.bucket.fs.get([self.bucket.key(r) for r in wanted], [str(p) for p in arriving])
                for rel, path in zip(wanted, arriving, strict=True):
                    path.replace(self.path / rel)
                    state[rel] = [remote[rel]["ETag"], *self._stamp(rel)]
            self._save(state)
        log.info("pulled %d of %d file(s) from s3://%s", len(wanted), len(remote), self.bucket.root)
        return len(wanted)

    def refresh(self, rel: str) -> None:
        """Make ``rel`` the bucket's, whatever this machine did to it; under the copy's lock,
        so no push of another process here meets it half done, and never missing for a
        reader that does not lock (the fetch reads the ledger's settled URLs so)."""
        with self._lock:
            if not self.pull([rel], force=True):  # none in the bucket: none here either
                (self.path / rel).unlink(missing_ok=True)
                self.forget(rel)

    def push(self, only: str = "") -> int:
        """Send the files under ``only`` (default: everything but local-only paths) that
        changed since the last sync, and delete in the bucket those deleted here."""
        # Another process on this machine may settle a file of its own between the listing
        # and the upload (a fetch run folds and deletes its journal): then list again.
        for _ in range(2):
            try:
                return self._push(only)
            except FileNotFoundError:
                log.info("a file under %s went away during a push; listing again", self.path)
        return self._push(only)

    def _pushed_files(self, only: str) -> dict[str, tuple[int, int]]:
        """``{relative path: (size, mtime)}`` of the files under ``only`` (a folder or file;
        everything when empty) that a push sends: one ``os.scandir`` stat a file, and no
        descent into a local-only folder, since a year of history is a hundred thousand
        files walked at every stage's push."""
        if only and (self.path / only).is_file():
            return {only: self._stamp(only)} if not _local_only(only) else {}
        found: dict[str, tuple[int, int]] = {}
        folders = [only.rstrip("/")] if only else [""]
        while folders:
            folder = folders.pop()
            try:
                entries = list(os.scandir(self.path / folder))
            except FileNotFoundError:
                continue
            for item in entries:
                rel = f"{folder}/{item.name}" if folder else item.name
                if item.is_dir(follow_symlinks=False):
                    if not _local_only(f"{rel}/"):
                        folders.append(rel)
                elif item.is_file() and not _local_only(rel):
                    stat = item.stat()
                    found[rel] = (stat.st_size, stat.st_mtime_ns)
        return found

    def _push(self, only: str) -> int:
        with self._lock:
            state = self._state()
            here = self._pushed_files(only)
            changed = sorted(
                r for r, stamp in here.items() if tuple(state.get(r, [None])[1:]) != stamp
            )
            scope = [r for r in state if not only or _matches(r, only)]
            gone = sorted(r for r in scope if r not in here and not (self.path / r).exists())
            if changed:
                self.bucket.fs.put(
                    [str(self.path / r) for r in changed], [self.bucket.key(r) for r in changed]
                )
                etags = self.bucket.etags(changed)
                for rel in changed:
                    state[rel] = [etags[rel], *self._stamp(rel)]
            if gone:
                self.bucket.fs.rm([self.bucket.key(r) for r in gone])
                for rel in gone:
                    del state[rel]
            self._save(state)
        if changed or gone:
            log.info(
                "pushed %d file(s), deleted %d in s3://%s",
                len(changed),
                len(gone),
                self.bucket.root,
            )
        return len(changed) + len(gone)


def _matches(rel: str, pattern: str) -> bool:
    if "*" in pattern:
        return fnmatch.fnmatchcase(rel, pattern)
    return rel == pattern or rel.startswith(pattern.rstrip("/") + "/")


# Working copies open in this process, by local path, each with how many stages have it
# open (threads may stage one copy at once): the locks and shared ledgers find their bucket
# from the path a stage hands them.
_OPEN: dict[Path, tuple[WorkingCopy, int]] = {}
_OPEN_LOCK = threading.Lock()


def working_copy_of(path: Path) -> tuple[WorkingCopy, str] | None:
    """The open working copy holding ``path`` and the path relative to its root."""
    path = Path(path).resolve()
    with _OPEN_LOCK:
        opened = [(root, copy) for root, (copy, _) in _OPEN.items()]
    for root, copy in opened:
        if path == root or root in path.parents:
            return copy, path.relative_to(root).as_posix() if path != root else ""
    return None


@contextmanager
def staged(cfg: Config, reads: list[str]) -> Iterator[Config]:
    """The config a stage runs with: ``cfg`` itself for a local data root; for an s3:// one,
    a config whose data root is the working copy, with ``reads`` pulled first and what the
    stage wrote pushed after, also when it fails (every file is whole, and a re-run resumes
    from them)."""
    if not cfg.remote:
        yield cfg
        return
    copy = WorkingCopy(cfg, bucket(cfg))
    with _OPEN_LOCK:
        _OPEN[copy.path] = (copy, _OPEN.get(copy.path, (copy, 0))[1] + 1)
    try:
        with reported(f"pulling from {cfg.data_root}"):
            copy.pull(reads)
        yield cfg.model_copy(update={"data_root": copy.path})
    finally:
        try:
            with reported(f"pushing to {cfg.data_root} from {copy.path}"):
                copy.push()
        finally:
            with _OPEN_LOCK:
                first, count = _OPEN.pop(copy.path)
                if count > 1:
                    _OPEN[copy.path] = (first, count - 1)


def raw_files(cfg: Config, fetched) -> list[str]:
    """The raw files a download task put in the working copy, relative to its root: their
    paths name their keys, since the working copy's path is the same on every worker."""
    root = local_root(cfg)
    raw = [Path(f.path) for f in fetched if f.path]
    if outside := [str(p) for p in raw if root not in p.parents]:
        raise StorageError(
            f"downloaded files outside {root} ({outside[0]}, ...): every "
            "worker needs the same storage.local_dir"
        )
    return [p.relative_to(root).as_posix() for p in raw]


def listed(cfg: Config, folder: str) -> list[str]:
    """The files under ``folder`` of the data root (in the bucket for an s3:// one), relative
    to it, without pulling any."""
    if cfg.remote:
        return sorted(r for r in bucket(cfg).listing(folder) if not _local_only(r))
    root = cfg.data_root
    return sorted(p.relative_to(root).as_posix() for p in (root / folder).rglob("*") if p.is_file())


def readable(data_root: Path, pattern: str) -> list[str]:
    """Where a reader opens the data root's files matching ``pattern`` (a glob relative to
    it): local paths, or s3:// URLs in the bucket of a working copy (read in place, with
    :func:`filesystem`), in the order of their relative paths."""
    found = working_copy_of(data_root)
    if not found:
        return [str(p) for p in sorted(Path(data_root).glob(pattern))]
    store = found[0].bucket
    return [f"s3://{store.key(r)}" for r in sorted(_bucket_matching(store, pattern))]


def location(data_root: Path, rel: str) -> str:
    """Where a reader opens the data root's file ``rel`` (a path :func:`versions` names): as
    :func:`readable` gives it."""
    found = working_copy_of(data_root)
    return f"s3://{found[0].bucket.key(rel)}" if found else str(Path(data_root) / rel)


def versions(data_root: Path, patterns: tuple[str, ...]) -> dict[str, str]:
    """``{relative path: version}`` of the files matching ``patterns``: the sha256 of a local
    file (hashed once per version of it: :mod:`gdelt_forecast.ground.digests`), the ETag of a
    bucket's object, so the same on every machine."""
    found = working_copy_of(data_root)
    if found:
        return {r: e for p in patterns for r, e in _bucket_matching(found[0].bucket, p).items()}
    root = Path(data_root)
    files = [p for g in patterns for p in sorted(root.glob(g))]
    with Digests(root) as digests:
        return {p.relative_to(root).as_posix(): digests.of(p) for p in files}


def arrived(path: Path):
    """When the file ``path`` of a working copy arrived in the bucket (it is pushed now): the
    bucket's own ``LastModified``, a UTC datetime; None for a file on a local data root."""
    found = working_copy_of(path)
    if not found:
        return None
    copy, rel = found
    copy.push(rel)
    return copy.bucket.listing(rel)[rel]["LastModified"]


def filesystem(data_root: Path):
    """The fsspec filesystem a reader registers to open :func:`readable`'s URLs; None for a
    local data root."""
    found = working_copy_of(data_root)
    return found[0].bucket.fs if found else None


def _bucket_matching(store: Bucket, pattern: str) -> dict[str, str]:
    """``{relative path: ETag}`` of the bucket's objects matching ``pattern``."""
    folder = pattern.split("*")[0].rpartition("/")[0]
    return {
        r: info["ETag"]
        for r, info in store.listing(folder).items()
        if fnmatch.fnmatchcase(r, pattern)
    }


def where(data_root: Path) -> str:
    """The data root a user named: the bucket's URL for a working copy, else the folder."""
    found = working_copy_of(data_root)
    return f"s3://{found[0].bucket.root}" if found else str(data_root)


def download(cfg: Config, url: str, dest: Path) -> Path:
    """Copy the folder ``url`` (s3://...) into ``dest``; refuses a folder with no files."""
    store = bucket(cfg, url)
    files = store.listing()
    if not files:
        raise StorageError(f"nothing at {url}")
    store.fs.get([store.key(r) for r in files], [str(dest / r) for r in files])
    return dest


@contextmanager
def shared_file(path: Path) -> Iterator[None]:
    """Around a read-modify-write of a file every run shares (a ledger): on a local disk its
    ``.lock`` file; in a working copy a bucket lock, with the file pulled fresh first and
    pushed before the lock is let go, so no machine's rows overwrite another's."""
    found = working_copy_of(path)
    if not found:
        with FileLock(f"{path}.lock"):
            yield
        return
    copy, rel = found
    with bucket_lock(copy.bucket, rel.replace("/", "-"), copy.ttl_s):
        copy.refresh(rel)
        yield
        copy.push(rel)
