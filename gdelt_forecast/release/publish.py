"""A finished release into an s3:// data root's bucket, whole or not at all: the release
stage's publisher, which :mod:`gdelt_forecast.pipeline.runner` calls after the release was built in
the working copy."""

from __future__ import annotations

import uuid
from pathlib import PurePosixPath

from gdelt_forecast.ground.config import Config
from gdelt_forecast.release.build import Summary, stays_latest
from gdelt_forecast.storage.bucket import Bucket, StorageError
from gdelt_forecast.storage.leases import bucket_lock
from gdelt_forecast.storage.working_copy import WorkingCopy, working_copy_of


def publish(cfg: Config, summary: Summary) -> Summary:
    """``summary``'s release, built in the working copy ``cfg`` names, into its bucket; the
    summary's path becomes the release's URL."""
    copy, _ = working_copy_of(cfg.data_root)
    summary.path = put(copy, summary.version)
    return summary


def put(copy: WorkingCopy, version: str) -> str:
    """Put the working copy's ``releases/<version>/`` in the bucket: uploaded under a
    temporary prefix, copied into place (refused if the version is there already), then
    ``releases/LATEST`` written last, so a reader going by LATEST never sees half a release.
    LATEST keeps its version when :func:`stays_latest` says so."""
    store, folder = copy.bucket, copy.path / "releases" / version
    staging = store.key(f"releases/.{version}.{uuid.uuid4().hex}.tmp")
    final = store.key(f"releases/{version}")
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    names = [PurePosixPath(*p.relative_to(folder).parts).as_posix() for p in files]
    try:
        store.fs.put([str(p) for p in files], [f"{staging}/{n}" for n in names])
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
    return f"s3://{final}"


def _latest(store: Bucket) -> str:
    if not store.listing("releases/LATEST"):
        return ""
    current = store.fs.cat_file(store.key("releases/LATEST")).decode().strip()
    return current if current and store.listing(f"releases/{current}") else ""
