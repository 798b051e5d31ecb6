"""A data root's sha256 cache: a file is hashed once per version, a hard link finds its
source's digest, and a file replaced, too fresh to trust, or a broken cache is hashed again."""

import hashlib
import os

import pytest

from gdelt_forecast.ground import digests as module
from gdelt_forecast.ground.digests import Digests

OLD_NS = 1_700_000_000 * 10**9


@pytest.fixture
def hashed(monkeypatch):
    """The paths hashed, in order."""
    seen = []

    def counting(path):
        seen.append(path.name)
        return hashlib.sha256(path.read_bytes()).hexdigest()

    monkeypatch.setattr(module, "sha256", counting)
    return seen


def settled(path, data: bytes):
    """Write ``path`` by a rename, as the stages do, dated long ago."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.utime(tmp, ns=(OLD_NS, OLD_NS))
    tmp.replace(path)
    return path


def test_a_file_is_hashed_once_per_version_and_a_link_shares_it(tmp_path, hashed):
    month = settled(tmp_path / "2025-01-part-0.parquet", b"a month")
    with Digests(tmp_path) as digests:
        first = digests.of(month)
        assert first == hashlib.sha256(b"a month").hexdigest()
    linked = tmp_path / "release-copy.parquet"
    os.link(month, linked)
    with Digests(tmp_path) as digests:  # another process: the cache is on disk
        assert digests.of(month) == digests.of(linked) == first
    assert hashed == ["2025-01-part-0.parquet"]

    # Written again (a new inode) with the same size and date: hashed again.
    settled(month, b"b month")
    with Digests(tmp_path) as digests:
        assert digests.of(month) == hashlib.sha256(b"b month").hexdigest()
        assert digests.of(linked) == first  # the link keeps the old bytes
    assert hashed == ["2025-01-part-0.parquet", "2025-01-part-0.parquet"]


def test_a_fresh_file_is_not_trusted_and_a_broken_cache_only_costs_hashing(tmp_path, hashed):
    fresh = tmp_path / "fresh.parquet"
    fresh.write_bytes(b"just written")
    with Digests(tmp_path) as digests:
        assert digests.of(fresh) == digests.of(fresh)
    assert hashed == ["fresh.parquet", "fresh.parquet"]  # its mtime may not move yet

    old = settled(tmp_path / "old.parquet", b"old")
    cache = Digests(tmp_path).path
    cache.unlink()
    for suffix in ("-wal", "-shm"):
        cache.with_name(cache.name + suffix).unlink(missing_ok=True)
    cache.write_bytes(b"not a database" * 100)
    with Digests(tmp_path) as digests:
        assert digests.of(old) == hashlib.sha256(b"old").hexdigest()
