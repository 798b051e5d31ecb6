"""A finished release into an s3:// data root's bucket, whole or not at all: the release
stage's publisher, which :mod:`gdelt_forecast.pipeline.runner` calls after the release was built in
the working copy."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from pathlib import PurePosixPath

from gdelt_forecast.contract.names import MANIFEST
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.digests import Digests
from gdelt_forecast.release import manifest
from gdelt_forecast.release.build import Summary, stays_latest
from gdelt_forecast.storage.bucket import Bucket, StorageError
from gdelt_forecast.storage.leases import bucket_lock
from gdelt_forecast.storage.working_copy import WorkingCopy, working_copy_of

log = logging.getLogger(__name__)


@dataclass
class Published:
    url: str
    uploaded: list[str]  # the files sent from this machine
    uploaded_bytes: int
    copied: list[str]  # the files a published release held already, copied within the bucket


def publish(cfg: Config, summary: Summary) -> Summary:
    """``summary``'s release, built in the working copy ``cfg`` names, into its bucket; the
    summary's path becomes the release's URL."""
    copy, _ = working_copy_of(cfg.data_root)
    summary.path = put(copy, summary.version).url
    return summary


def put(copy: WorkingCopy, version: str) -> Published:
    """Put the working copy's ``releases/<version>/`` in the bucket: staged under a temporary
    prefix, copied into place (refused if the version is there already), then
    ``releases/LATEST`` written last, so a reader going by LATEST never sees half a release.
    LATEST keeps its version when :func:`stays_latest` says so. A file that a published
    release already holds (its manifest lists the same sha256 and size: a past month's files)
    is copied within the bucket instead of uploaded."""
    store, folder = copy.bucket, copy.path / "releases" / version
    staging = store.key(f"releases/.{version}.{uuid.uuid4().hex}.tmp")
    final = store.key(f"releases/{version}")
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    names = [PurePosixPath(*p.relative_to(folder).parts).as_posix() for p in files]
    held = _held(store)
    with Digests(copy.path) as digests:
        found = {n: held.get((digests.of(p), p.stat().st_size))
                 for p, n in zip(files, names, strict=True)}  # fmt: skip
    upload = [(p, n) for p, n in zip(files, names, strict=True) if found[n] is None]
    try:
        store.fs.put([str(p) for p, _ in upload], [f"{staging}/{n}" for _, n in upload])
        within = [n for n in names if found[n] is not None]
        store.fs.copy([found[n] for n in within], [f"{staging}/{n}" for n in within])
        with bucket_lock(store, "releases", copy.ttl_s):
            if store.listing(f"releases/{version}"):
                raise StorageError(
                    f"release {version} exists at s3://{final}: releases are "
                    "immutable, choose another --version"
                )
            store.fs.copy([f"{staging}/{n}" for n in names], [f"{final}/{n}" for n in names])
            if not stays_latest(_latest(store), version):
                store.fs.pipe_file(store.key("releases/LATEST"), f"{version}\n".encode())
    finally:
        if store.listing(staging.removeprefix(store.root + "/")):
            store.fs.rm(staging, recursive=True)
    published = Published(
        f"s3://{final}",
        [n for _, n in upload],
        sum(p.stat().st_size for p, _ in upload),
        within,
    )
    log.info(
        "release %s: %d files uploaded (%.1f MB), %d copied within the bucket",
        version,
        len(published.uploaded),
        published.uploaded_bytes / 1e6,
        len(within),
    )
    return published


def _held(store: Bucket) -> dict[tuple[str, int], str]:
    """The objects of the published releases, by (sha256, size) as their manifests list them;
    a manifest that cannot be read vouches for nothing."""
    held = {}
    manifests = sorted(r for r in store.listing("releases") if _a_manifest(r))
    for rel in manifests:
        try:
            _, files = manifest.listed(store.fs.cat_file(store.key(rel)), rel)
        except manifest.ManifestError:
            continue
        folder = rel.rpartition("/")[0]
        for f in files:
            held.setdefault((f["sha256"], f["bytes"]), store.key(f"{folder}/{f['path']}"))
    return held


def _a_manifest(rel: str) -> bool:
    parts = rel.split("/")  # releases/<version>/manifest.json, never a staged one
    return len(parts) == 3 and parts[2] == MANIFEST and not parts[1].startswith(".")


def _latest(store: Bucket) -> str:
    if not store.listing("releases/LATEST"):
        return ""
    current = store.fs.cat_file(store.key("releases/LATEST")).decode().strip()
    return current if current and store.listing(f"releases/{current}") else ""
