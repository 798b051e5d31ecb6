"""Publishing a release into the bucket: whole or not at all, never over an existing
version, LATEST written last and only for the newest."""

from __future__ import annotations

import pytest

from gdelt_forecast.ground.config import load_config
from gdelt_forecast.release.publish import put
from gdelt_forecast.storage.bucket import StorageError, bucket
from gdelt_forecast.storage.working_copy import WorkingCopy


@pytest.fixture
def copy(bucket_url, tmp_path) -> WorkingCopy:
    cfg = load_config(None, [f"storage.local_dir={tmp_path}"], f"{bucket_url}/data")
    return WorkingCopy(cfg, bucket(cfg))


def _release(copy: WorkingCopy, version: str) -> None:
    for rel in ("manifest.json", "quads/2025-08-part-0.parquet", "tasks/STF/test.parquet"):
        path = copy.path / "releases" / version / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{version} {rel}")


def _keys(copy: WorkingCopy) -> list[str]:
    return sorted(copy.bucket.listing("releases"))


def test_a_release_is_published_whole_and_latest_follows(copy):
    _release(copy, "2025.08.0")
    assert put(copy, "2025.08.0").url == f"s3://{copy.bucket.root}/releases/2025.08.0"
    assert _keys(copy) == [
        *(
            f"releases/2025.08.0/{r}"
            for r in ("manifest.json", "quads/2025-08-part-0.parquet", "tasks/STF/test.parquet")
        ),
        "releases/LATEST",
    ]
    assert copy.bucket.fs.cat_file(copy.bucket.key("releases/LATEST")) == b"2025.08.0\n"

    _release(copy, "2025.07.0")  # an older month rebuilt: LATEST stays on the newest
    put(copy, "2025.07.0")
    assert copy.bucket.fs.cat_file(copy.bucket.key("releases/LATEST")) == b"2025.08.0\n"
    assert "releases/2025.07.0/manifest.json" in _keys(copy)


def test_an_existing_version_is_refused_and_nothing_changes(copy):
    _release(copy, "2025.08.0")
    put(copy, "2025.08.0")
    before = {k: copy.bucket.fs.cat_file(copy.bucket.key(k)) for k in _keys(copy)}
    (copy.path / "releases/2025.08.0/manifest.json").write_text("another build")
    with pytest.raises(StorageError, match="release 2025.08.0 exists at s3://.*immutable"):
        put(copy, "2025.08.0")
    assert {k: copy.bucket.fs.cat_file(copy.bucket.key(k)) for k in _keys(copy)} == before


def test_a_copy_that_fails_leaves_no_release_and_latest_unchanged(copy, monkeypatch):
    _release(copy, "2025.08.0")
    put(copy, "2025.08.0")
    _release(copy, "2025.09.0")

    def fail(*args, **kwargs):
        raise OSError("the connection dropped during the copy")

    monkeypatch.setattr(copy.bucket.fs, "copy", fail)
    with pytest.raises(OSError, match="dropped"):
        put(copy, "2025.09.0")
    assert not [k for k in _keys(copy) if "2025.09.0" in k]  # neither in place nor staged
    assert copy.bucket.fs.cat_file(copy.bucket.key("releases/LATEST")) == b"2025.08.0\n"
    assert not copy.bucket.listing("locks")  # the releases lock was let go
