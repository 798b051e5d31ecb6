"""``gdelt-forecast release pull SOURCE``: a published release (a folder, or ``s3://...`` in a
bucket) into this data root's ``releases/``, fetching only the files it lacks.

The source's manifest lists every file with its sha256. A file that a release already here
holds with that sha256 (the month files a release shares with the one before it, say) is
hard-linked from it (copied where the file system has no hard links); every other file is
fetched. Each file's sha256 is checked before the release is renamed into place, and
``releases/LATEST`` follows as a built release's does, so a consumer who holds release N-1
transfers only the new month and the metadata to get release N. Pulling a version already
here checks it and changes nothing.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from gdelt_forecast.contract.names import MANIFEST
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.files import link_or_copy, sha256, temporary_folder
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.release import manifest
from gdelt_forecast.release.build import ReleaseError, put_in_place, releases_dir


@dataclass
class Summary(StageSummary):
    version: str
    path: str
    files: int = 0
    linked: int = 0  # held here already, under another release
    fetched: int = 0
    fetched_bytes: int = 0
    already: bool = False  # the version was here, whole
    seconds: float = 0.0

    def line(self) -> str:
        if self.already:
            return f"release pull: {self.version} is here already, whole, at {self.path}"
        return (
            f"release pull: {self.version} at {self.path}: {self.files} files, {self.linked} "
            f"held here already (linked), {self.fetched} fetched ({self.fetched_bytes / 1e6:,.1f}"
            f" MB), every sha256 as listed ({self.seconds:.1f} s)"
        )


class _Folder:
    def __init__(self, folder: Path):
        if not (folder / MANIFEST).is_file():
            raise ReleaseError(f"no {MANIFEST} at {folder}: SOURCE is a release's folder")
        self.folder = folder

    def read(self, rel: str) -> bytes:
        return (self.folder / rel).read_bytes()

    def get(self, rels: list[str], dest: Path) -> None:
        for rel in rels:
            shutil.copyfile(self.folder / rel, dest / rel)


class _Bucket:
    def __init__(self, cfg: Config, url: str):
        from gdelt_forecast.storage.bucket import bucket

        self.store = bucket(cfg, url)
        if not self.store.listing(MANIFEST):
            raise ReleaseError(f"no {MANIFEST} at {url}: SOURCE is a release's folder")

    def read(self, rel: str) -> bytes:
        return self.store.fs.cat_file(self.store.key(rel))

    def get(self, rels: list[str], dest: Path) -> None:
        if rels:
            self.store.fs.get([self.store.key(r) for r in rels], [str(dest / r) for r in rels])


def pull(cfg: Config, source: str) -> Summary:
    started = time.monotonic()
    src = _Bucket(cfg, source) if source.startswith("s3://") else _Folder(Path(source))
    raw = src.read(MANIFEST)
    version, files = manifest.listed(raw, f"{source}/{MANIFEST}")
    root = releases_dir(cfg)
    root.mkdir(parents=True, exist_ok=True)
    dest = root / version
    summary = Summary(version=version, path=str(dest), files=len(files) + 1)
    if dest.exists():
        _check(dest, files, "here already")
        if (dest / MANIFEST).read_bytes() != raw:
            raise ReleaseError(f"release {version} at {dest} is another build than {source}")
        summary.already = True
        return summary
    held = _held(root)
    tmp = temporary_folder(root, prefix=f".{version}.")
    try:
        fetch = []
        for item in files:
            try:
                (tmp / item["path"]).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a listed path below another listed file, or too long
                raise ReleaseError(f"{item['path']}: no place for it ({exc.strerror})") from None
            here = held.get((item["sha256"], item["bytes"]))
            if here is None:
                fetch.append(item["path"])
                continue
            link_or_copy(here, tmp / item["path"])
            summary.linked += 1
        src.get(fetch, tmp)
        summary.fetched = len(fetch) + 1
        summary.fetched_bytes = len(raw) + sum((tmp / r).stat().st_size for r in fetch)
        _check(tmp, files, f"pulled from {source}")
        (tmp / MANIFEST).write_bytes(raw)
        put_in_place(root, tmp, version)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary.seconds = time.monotonic() - started
    return summary


def _held(root: Path) -> dict[tuple[str, int], Path]:
    """The files of the releases here, by (sha256, bytes) as their manifests list them."""
    held = {}
    for path in sorted(root.glob(f"*/{MANIFEST}")):
        try:
            _, listed = manifest.listed(path.read_bytes(), str(path))
        except manifest.ManifestError:
            continue  # not a release this can vouch for: its files are fetched
        for item in listed:
            if (path.parent / item["path"]).is_file():
                held.setdefault((item["sha256"], item["bytes"]), path.parent / item["path"])
    return held


def _check(folder: Path, files: list[dict], what: str) -> None:
    """Every listed file at ``folder`` with its listed sha256, or a ReleaseError naming one."""
    for item in files:
        path = folder / item["path"]
        if not path.is_file() or sha256(path) != item["sha256"]:
            raise ReleaseError(
                f"{item['path']} ({what}) is not the file its manifest lists (sha256 differs or "
                "it is missing): nothing was changed"
            )
