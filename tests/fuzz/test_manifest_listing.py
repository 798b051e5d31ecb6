"""A release's manifest read from elsewhere (`release pull` reads the source's, publishing reads
the bucket's), property-tested: any bytes give the version and files or a ManifestError,
never another exception, and every path accepted stays inside the release folder."""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gdelt_forecast.release.manifest import ManifestError, listed
from tests.fuzz.strategies import JSON, TEXT, dumped

pytestmark = pytest.mark.fuzz

SHA = "a" * 64
PATHS = st.one_of(
    TEXT,
    st.sampled_from(["../x", "/etc/passwd", "a/../../b", ".hidden", "a//b", "a\\b", "manifest.json",
                     "events/2025-07-part-0.parquet", "a/./b", "a\x00b", ""]),
)  # fmt: skip
FILES = st.lists(
    st.one_of(
        JSON,
        st.fixed_dictionaries(
            {"path": PATHS, "sha256": st.one_of(st.just(SHA), TEXT), "bytes": st.integers()}
        ),
    ),
    max_size=6,
)
MANIFESTS = st.one_of(
    st.binary(max_size=200),
    JSON.map(lambda v: dumped(v, False)),
    st.builds(
        lambda v, f: dumped({"version": v, "files": f}, False),
        st.one_of(st.just("2025.08.1"), TEXT),
        FILES,
    ),  # fmt: skip
)


def _one(path) -> bytes:
    return json.dumps({"version": "2025.08.1", "files": [
        {"path": path, "sha256": SHA, "bytes": 3}]}).encode()  # fmt: skip


@given(MANIFESTS)
@example(_one("../x"))
@example(_one("/etc/passwd"))
@example(_one("a/../../b"))
@example(_one(".hidden/x"))
@example(_one("a\nb"))
@example(json.dumps({"version": "2025.08.1", "files": [
    {"path": "events/2025-07-part-0.parquet", "sha256": SHA, "bytes": 3}]}).encode())  # fmt: skip
def test_any_manifest_gives_files_inside_the_release_or_a_manifest_error(raw):
    try:
        version, files = listed(raw, "source/manifest.json")
    except ManifestError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("source/manifest.json")
        return
    root = Path("/release")
    assert isinstance(version, str) and version
    for item in files:
        path = Path(os.path.normpath(root / item["path"]))
        assert root in path.parents and PurePosixPath(item["path"]).as_posix() == item["path"]
        assert item["path"].isprintable() and not item["path"].startswith(".")
        assert ".." not in item["path"].split("/") and item["path"] != "manifest.json"
        assert len(item["sha256"]) == 64 and item["bytes"] >= 0
    assert len({f["path"] for f in files}) == len(files)
