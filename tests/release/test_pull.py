"""`release pull` and publishing into a bucket (issue 51): a release a consumer pulls is the
published one byte for byte, the files a release here already holds are linked instead of
fetched, every sha256 is checked before anything is put in place, and publishing uploads
only the files the bucket does not hold yet."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gdelt_forecast.cli import main
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.ground.files import sha256
from gdelt_forecast.release.build import ReleaseError
from gdelt_forecast.release.publish import put
from gdelt_forecast.release.pull import pull
from gdelt_forecast.storage.bucket import bucket
from gdelt_forecast.storage.working_copy import WorkingCopy

BUILT = ("data_kg.csv", "data_news.csv")


def _files(folder: Path) -> dict[str, str]:
    """Each file's sha256 but MIRAI's database files, which `release mirai` builds on demand
    (the fixture's release has them) and no manifest lists among its files."""
    return {
        p.relative_to(folder).as_posix(): sha256(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name not in BUILT
    }


def _published(release: Path, folder: Path) -> Path:
    """``release`` as it is published: without MIRAI's database files."""
    shutil.copytree(release, folder, ignore=shutil.ignore_patterns(*BUILT))
    return folder


def _next(release: Path, out: Path, version: str = "2025.08.1") -> Path:
    """A copy of ``release`` as the next version: its card changed, every other file the
    same (as a release that shares its history with the one before it)."""
    folder = _published(release, out / version)
    card = folder / "README.md"
    card.write_text(card.read_text() + "\nThe next version.\n")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["version"] = version
    for item in manifest["files"]:
        if item["path"] == "README.md":
            item.update(bytes=card.stat().st_size, sha256=sha256(card))
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return folder


def test_a_pulled_release_is_the_source_byte_for_byte_and_again_changes_nothing(release, tmp_path):
    cfg = load_config(None, [], tmp_path / "consumer")
    summary = pull(cfg, str(release))
    pulled = tmp_path / "consumer/releases" / release.name
    assert _files(pulled) == _files(release)
    assert (summary.linked, summary.fetched, summary.files) == (
        0,
        summary.files,
        len(_files(release)),
    )
    assert (tmp_path / "consumer/releases/LATEST").read_text() == f"{release.name}\n"
    assert pull(cfg, str(release)).already
    assert _files(pulled) == _files(release)


def test_a_release_holding_the_history_links_it_and_fetches_the_rest(release, tmp_path):
    cfg = load_config(None, [], tmp_path / "consumer")
    pull(cfg, str(release))
    following = _next(release, tmp_path / "published")
    summary = pull(cfg, str(following))
    pulled = tmp_path / "consumer/releases/2025.08.1"
    assert _files(pulled) == _files(following)
    assert summary.fetched == 2 and summary.linked == summary.files - 2  # the card, the manifest
    assert summary.fetched_bytes == sum(
        (following / n).stat().st_size for n in ("README.md", "manifest.json")
    )
    history = "events/2025-07-part-0.parquet"
    first = tmp_path / "consumer/releases" / release.name / history
    assert (pulled / history).stat().st_ino == first.stat().st_ino
    assert (tmp_path / "consumer/releases/LATEST").read_text() == "2025.08.1\n"


def test_a_file_that_is_not_the_listed_one_is_refused_and_nothing_is_put_in_place(
    release, tmp_path, capsys
):
    source = _next(release, tmp_path / "published")
    quads = source / "quads/2025-08-part-0.parquet"
    quads.write_bytes(quads.read_bytes()[:-1] + b"\x00")
    cfg = load_config(None, [], tmp_path / "consumer")
    with pytest.raises(ReleaseError, match="quads/2025-08-part-0.parquet .* is not the file its "
                       "manifest lists .*nothing was changed"):  # fmt: skip
        pull(cfg, str(source))
    left = [p.name for p in (tmp_path / "consumer/releases").iterdir() if p.name != ".lock"]
    assert left == []  # neither the release nor its temporary folder
    code = main(["release", "pull", str(tmp_path / "nowhere"), "--data-root", str(tmp_path)])
    assert code != 0 and "no manifest.json at" in capsys.readouterr().err


def test_publishing_uploads_only_what_the_bucket_lacks_and_a_pull_from_it_is_identical(
    release, bucket_url, tmp_path
):
    cfg = load_config(None, [f"storage.local_dir={tmp_path / 'local'}"], f"{bucket_url}/data")
    copy = WorkingCopy(cfg, bucket(cfg))
    _published(release, copy.path / "releases" / release.name)
    first = put(copy, release.name)
    assert first.copied == [] and len(first.uploaded) == len(_files(release))
    _next(release, copy.path / "releases")
    second = put(copy, "2025.08.1")
    assert sorted(second.uploaded) == ["README.md", "manifest.json"]
    assert len(second.copied) == len(_files(release)) - 2

    consumer = load_config(None, [], tmp_path / "consumer")
    pulled = pull(consumer, second.url)
    assert _files(tmp_path / "consumer/releases/2025.08.1") == _files(
        copy.path / "releases/2025.08.1"
    )
    assert pulled.fetched == pulled.files  # nothing was here to link
