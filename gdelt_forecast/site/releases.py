"""The releases of a data root as the site shows them: the index of every release (version,
month, commit, build date, ``release verify`` status, counts) and each release's page (its card
rendered, its files with sizes and checksums)."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from gdelt_forecast.contract.layout import TABLES
from gdelt_forecast.contract.names import MANIFEST
from gdelt_forecast.ground.digests import SETTLED_S
from gdelt_forecast.ground.files import write_json
from gdelt_forecast.ground.version import code_version
from gdelt_forecast.release.manifest import on_disk
from gdelt_forecast.release.verify import verify
from gdelt_forecast.site.render import Pages, markdown

CARD = "README.md"
COPIED = (CARD, MANIFEST, "croissant.json")  # small enough to travel with the site
# The index's columns: the tables a consumer asks about first, by the layout's names.
HEADLINE = ("queries", "subset", "events", "quads", "news", "complex_events", "timelines")


@dataclass(frozen=True)
class Release:
    folder: Path
    manifest: dict
    problems: tuple[str, ...]  # ``release verify``'s findings at the site's build
    latest: bool

    @property
    def version(self) -> str:
        return self.manifest["version"]

    @property
    def commit(self) -> str:
        return self.manifest["code_version"].get("git_commit") or "unknown"

    def rows(self) -> dict[str, int]:
        """Rows per table of the layout, from the manifest's file list."""
        files = self.manifest["files"]
        return {
            t.name: sum(f.get("rows") or 0 for f in files if fnmatch.fnmatch(f["path"], t.glob))
            for t in TABLES
        }

    def task_records(self) -> dict[str, int]:
        """OpenForecast's and EV2's records per task, over their splits."""
        counts = dict(self.manifest.get("tasks", {}).get("records", {}))
        return counts | self.manifest.get("reasoning", {}).get("records", {})


def find(releases: Path, verdicts: Path | None = None) -> list[Release]:
    """Every release under ``releases`` (newest version first), each verified, or its
    verdict remembered in the folder ``verdicts`` while neither its files nor the code
    changed (:func:`verified`)."""
    latest = releases / "LATEST"
    newest = latest.read_text().strip() if latest.is_file() else None
    return [
        Release(folder, json.loads((folder / MANIFEST).read_text(encoding="utf-8")),
                tuple(verified(folder, verdicts)), folder.name == newest)
        for folder in sorted(releases.iterdir(), reverse=True)
        if (folder / MANIFEST).is_file()
    ]  # fmt: skip


def verified(folder: Path, verdicts: Path | None) -> list[str]:
    """``release verify``'s findings on ``folder``, kept in ``verdicts`` under the code's
    version and every file's inode, size and mtime, and trusted while they stay the same, as
    :mod:`gdelt_forecast.ground.digests` trusts a digest. Verifying a release reads its whole
    history (MIRAI's database is built again), so a site that verified every release at
    every build cost a year of monthly releases twelve histories. A file changed since, or
    one too fresh to trust its mtime, is verified again."""
    if verdicts is None:
        return verify(folder)
    files = [folder / MANIFEST, *on_disk(folder)]
    stats = [(p.relative_to(folder).as_posix(), os.stat(p)) for p in files]
    key = hashlib.sha256(
        json.dumps([code_version(), [(n, s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns)
                                     for n, s in stats]]).encode()
    ).hexdigest()  # fmt: skip
    stored = verdicts / f"{folder.name}.json"
    with suppress(OSError, ValueError, KeyError, TypeError):
        found = json.loads(stored.read_text(encoding="utf-8"))
        if found["key"] == key:
            return list(found["problems"])
    problems = verify(folder)
    settled = time.time_ns() - SETTLED_S * 1e9
    if all(s.st_mtime_ns <= settled for _, s in stats):
        write_json(stored, {"key": key, "problems": problems})
    return problems


def write_index(pages: Pages, releases: list[Release], runs: dict[str, int], rounds: int) -> None:
    """The site's first page; ``rounds``: how many live rounds have a page (a link to them)."""
    pages.write(
        "index.html", "releases.html", releases=releases, headline=HEADLINE, runs=runs,
        rounds=rounds,
    )  # fmt: skip


def write_release(pages: Pages, release: Release, files_url: str | None) -> None:
    """The release's page and the files it links to: the card, manifest and Croissant copied,
    the plots copied (the card shows them), the data files linked at ``files_url``."""
    here = pages.out / release.version
    for name in COPIED:
        if (release.folder / name).is_file():
            (here / "files").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(release.folder / name, here / "files" / name)
    if (release.folder / "plots").is_dir():
        shutil.copytree(release.folder / "plots", here / "plots", dirs_exist_ok=True)
    card = (release.folder / CARD).read_text(encoding="utf-8")
    files = [
        {**f, "url": _file_url(files_url, pages.out, release, f["path"])}
        for f in release.manifest["files"]
    ]
    pages.write(
        f"{release.version}/index.html", "release.html", release=release, card=markdown(card),
        files=files, copied=[n for n in COPIED if (here / "files" / n).is_file()],
    )  # fmt: skip


def _file_url(base: str | None, out: Path, release: Release, path: str) -> str:
    """Where a release's file is served: under ``base`` when the releases are hosted (a
    bucket's URL), else the data root's folder, relative to the release's page (``out`` may
    be the folder the site is built in: it lies beside the site's own, so the way is the
    same)."""
    if base:
        return f"{base.rstrip('/')}/{quote(release.version)}/{quote(path)}"
    page_dir = (out / release.version).resolve()
    return quote(Path(os.path.relpath(release.folder.resolve() / path, page_dir)).as_posix())
