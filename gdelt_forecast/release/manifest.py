"""What a release holds, file by file: path, size, sha256 and, for tables, rows; and what a
manifest read back from elsewhere (a bucket, another machine's folder) lists, checked."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from gdelt_forecast.contract.names import MANIFEST
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.files import entry, sha256

VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
SHA256 = re.compile(r"[0-9a-f]{64}")


class ManifestError(StageError):
    """A manifest read from elsewhere is not one this code wrote."""


def on_disk(root: Path) -> list[Path]:
    """Every file of the release but the manifest, in path order."""
    return sorted(
        (p for p in root.rglob("*") if p.is_file() and p.relative_to(root).as_posix() != MANIFEST),
        key=lambda p: p.relative_to(root).as_posix(),
    )


def entries(root: Path, digest: Callable[[Path], str] = sha256) -> list[dict]:
    return [entry(root, p, digest) for p in on_disk(root)]


def listed(raw: bytes, where: str) -> tuple[str, list[dict]]:
    """The version and files the manifest ``raw`` (read from ``where``) names, each file
    checked: a relative path inside the release (a manifest read from elsewhere is text from
    outside), a sha256 and a size; a ManifestError of one line otherwise."""
    try:
        manifest = json.loads(raw)
        version, files = manifest["version"], manifest["files"]
    except (ValueError, KeyError, TypeError):
        raise ManifestError(f"{where} is no release manifest") from None
    if not isinstance(version, str) or not VERSION.fullmatch(version):
        raise ManifestError(f"{where} names no valid version ({version!r:.80})")
    if not isinstance(files, list):
        raise ManifestError(f"{where}: its files are no list")
    paths = set()
    for n, item in enumerate(files):
        try:
            path, digest, size = item["path"], item["sha256"], item["bytes"]
        except (KeyError, TypeError):
            raise ManifestError(f"{where}: file {n} has no path, sha256 and bytes") from None
        parts = PurePosixPath(path).parts if isinstance(path, str) else ()
        if (
            not parts
            or not path.isprintable()  # no control, format or surrogate character: a name to show
            or path != PurePosixPath(*parts).as_posix()
            or parts[0] == "/"
            or any(p.startswith(".") or "\\" in p for p in parts)
            or path == MANIFEST
            or path in paths
        ):
            raise ManifestError(
                f"{where}: file {n}'s path {path!r:.80} is no file inside the release"
            )
        if not (isinstance(digest, str) and SHA256.fullmatch(digest)):
            raise ManifestError(f"{where}: file {n} ({path}) has no sha256")
        if not (isinstance(size, int) and not isinstance(size, bool) and size >= 0):
            raise ManifestError(f"{where}: file {n} ({path}) has no size in bytes")
        paths.add(path)
    return version, files
