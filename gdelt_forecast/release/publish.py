"""A finished release into an s3:// data root's bucket, whole or not at all."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import PurePosixPath

from gdelt_forecast.locks import bucket_lock
from gdelt_forecast.objectstore import Bucket, StorageError, WorkingCopy


def publish(copy: WorkingCopy, version: str, stays_latest: Callable[[str, str], bool]) -> str:
    """Put the working copy's ``releases/<version>/`` in the bucket: uploaded under a
    temporary prefix, copied into place (refused if the version is there already), then
    ``releases/LATEST`` written last, so a reader going by LATEST never sees half a release.
    LATEST keeps its version when ``stays_latest(current, version)`` says so ("" for
    current when LATEST names no release there is)."""
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
