"""An S3-compatible bucket as the data root names it (``s3://bucket/prefix``): the s3fs
filesystem, the keys under the prefix, the listings the working copy compares, and the
conditional writes (S3's ``If-None-Match`` and ``If-Match``, which AWS, MinIO and moto honour)
that the leases of :mod:`gdelt_forecast.storage.leases` are made of.

s3fs offers no conditional write of its own, so :meth:`Bucket._call` sends those requests
through its client (a private method of s3fs): this module is the only one that does.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.errors import StageError


class StorageError(StageError):
    """The bucket cannot be reached or refuses a request; the message says which."""


@dataclass(frozen=True)
class Bucket:
    """An s3fs filesystem and the ``bucket/prefix`` the data root names."""

    fs: object
    root: str  # bucket/prefix, no scheme, no trailing slash

    def key(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root

    def rel(self, key: str) -> str:
        return key[len(self.root) + 1 :]

    def listing(self, rel: str = "") -> dict[str, dict]:
        """``{relative path: info}`` of every object under ``rel`` (a folder or a file)."""
        self.fs.invalidate_cache()
        try:
            found = self.fs.find(self.key(rel), detail=True)
        except FileNotFoundError:
            return {}
        return {self.rel(k): info for k, info in found.items() if info["type"] == "file"}

    def etags(self, rels: list[str]) -> dict[str, str]:
        """The ETags of ``rels``, one listing of each folder they are in."""
        out: dict[str, str] = {}
        for folder in sorted({r.rpartition("/")[0] for r in rels}):
            self.fs.invalidate_cache(self.key(folder))
            for info in self.fs.ls(self.key(folder), detail=True):
                out[self.rel(info["name"])] = info.get("ETag")
        return out

    def create(self, rel: str, body: bytes) -> str:
        """Write ``rel`` only where no object is (FileExistsError where one is); its ETag."""
        return self._call("put_object", rel, Body=body, IfNoneMatch="*")["ETag"]

    def replace(self, rel: str, body: bytes, etag: str) -> str:
        """Write ``rel`` only while it still has ``etag`` (FileExistsError when it has
        another); the new ETag."""
        return self._call("put_object", rel, Body=body, IfMatch=etag)["ETag"]

    def delete(self, rel: str, etag: str) -> None:
        """Delete ``rel`` only while it still has ``etag`` (FileExistsError when it has
        another)."""
        self._call("delete_object", rel, IfMatch=etag)

    def read(self, rel: str) -> tuple[str, bytes]:
        """``rel``'s ETag and bytes from one GET, so that a conditional write after it acts
        on what was read (FileNotFoundError when there is no such object)."""
        from fsspec.asyn import sync

        return sync(self.fs.loop, self._get, rel)

    async def _get(self, rel: str) -> tuple[str, bytes]:
        name, _, key = self.key(rel).partition("/")
        out = await self.fs._call_s3("get_object", Bucket=name, Key=key)
        async with out["Body"] as body:
            return out["ETag"], await body.read()

    def _call(self, method: str, rel: str, **kwargs) -> dict:
        """One request on the object ``rel``; a failed precondition as FileExistsError
        (s3fs gives it as FileExistsError or as an OSError saying "pre-condition")."""
        from fsspec.asyn import sync

        name, _, key = self.key(rel).partition("/")
        try:
            return sync(self.fs.loop, self.fs._call_s3, method, Bucket=name, Key=key, **kwargs)
        except OSError as exc:
            if isinstance(exc, FileExistsError) or "pre-condition" in str(exc):
                raise FileExistsError(f"{self.key(rel)}: {exc}") from exc
            raise


def bucket(cfg: Config, url: str | None = None) -> Bucket:
    """The bucket of ``url`` (default: the data root), with the endpoint and region of
    ``cfg.storage`` (else the AWS environment); fails at once, naming the endpoint, when the
    bucket is unreachable."""
    try:
        import s3fs
    except ImportError:
        raise StorageError(
            f"{url or cfg.data_root} needs s3fs: pip install 'gdelt-forecast[s3]'"
        ) from None
    client = {
        k: v
        for k, v in [
            ("endpoint_url", cfg.storage.endpoint_url),
            ("region_name", cfg.storage.region),
        ]
        if v
    }
    fs = s3fs.S3FileSystem(client_kwargs=client, skip_instance_cache=True, session=_session())
    root = (url or cfg.data_root).removeprefix("s3://").rstrip("/")
    name = root.split("/")[0]
    with reported(f"bucket {name} at {_endpoint(cfg)}"):
        fs.ls(name)
    return Bucket(fs, root)


@cache
def _session():
    """One botocore session a process: each bucket's filesystem is new (its listings cached
    by nobody else), but its client then reuses the session's parsed service models instead of
    reading them again (a tenth of a second or more a bucket, many times a stage)."""
    from aiobotocore.session import get_session

    return get_session()


def _endpoint(cfg: Config) -> str:
    return cfg.storage.endpoint_url or os.environ.get("AWS_ENDPOINT_URL") or "AWS"


@contextmanager
def reported(what: str) -> Iterator[None]:
    """A refused or failed request as one StorageError naming ``what``: s3fs raises OSError
    for refusals, botocore its own errors for connections that fail."""
    from botocore.exceptions import BotoCoreError

    try:
        yield
    except (OSError, ValueError, BotoCoreError) as exc:
        raise StorageError(f"{what}: {exc}") from exc
