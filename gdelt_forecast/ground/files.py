"""Files written beside their final place and renamed over it, readable as any new file is;
and what a file is (size, sha256, rows), as the stages' records and a release's manifest say.

``tempfile.mkstemp`` creates its file with mode 0600 whatever the umask, and a rename keeps
the mode: a file moved into a shared data root or a release that way is unreadable to every
other user. Every temporary file here takes the mode the umask gives a new file instead
(0644 under umask 022), and a temporary folder the mode of a new folder (0755).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow.parquet as pq


def _umask() -> int:
    # The umask can only be read by setting it: done once, while the module is imported
    # (before any of the stages' threads start).
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_MASK = _umask()
FILE_MODE = 0o666 & ~_MASK
DIR_MODE = 0o777 & ~_MASK


def temporary(path: Path, suffix: str = ".tmp") -> Path:
    """A new empty file beside ``path`` (its folder made if need be), mode ``FILE_MODE``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return Path(name)


def temporary_folder(parent: Path, prefix: str, suffix: str = ".tmp") -> Path:
    """A new empty folder in ``parent``, mode ``DIR_MODE``."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, suffix=suffix, dir=parent))
    folder.chmod(DIR_MODE)
    return folder


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` to write; renamed over ``path`` when the block ends
    without an error, removed in any case."""
    tmp = temporary(path)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def link_or_copy(source: Path, dest: Path) -> None:
    """``source`` at ``dest`` as a hard link (one file on the disk), or a copy where the file
    system has none or ``dest`` lies on another."""
    try:
        os.link(source, dest)
    except OSError:
        shutil.copyfile(source, dest)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def parquet_rows(path: Path) -> int:
    return pq.ParquetFile(path).metadata.num_rows


def entry(root: Path, path: Path, digest: Callable[[Path], str] = sha256) -> dict:
    """``path`` relative to ``root`` (POSIX), its bytes, sha256 (by ``digest``) and, for
    Parquet, rows."""
    item = {
        "path": path.relative_to(root).as_posix(),
        "bytes": path.stat().st_size,
        "sha256": digest(path),
    }
    if path.suffix == ".parquet":
        item["rows"] = parquet_rows(path)
    return item


def write_json(path: Path, data: dict) -> None:
    """Indented UTF-8 JSON in the dict's own order (MIRAI's info files pair their keys with
    embedding rows by order), with a final newline, renamed into place."""
    with replacing(path) as tmp:
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
