"""The releases of a data root as the site shows them: the index of every release (version,
month, commit, build date, ``release verify`` status, counts) and each release's page (its card
rendered, its files with sizes and checksums)."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from gdelt_forecast.contract.layout import TABLES
from gdelt_forecast.contract.names import MANIFEST
from gdelt_forecast.ground.data_root import SCRATCH
from gdelt_forecast.ground.digests import Digests
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


VERDICTS = "site-verified"  # the verdicts' folder in a data root's scratch folder


def find(releases: Path, data_root: Path | None = None) -> list[Release]:
    """Every release under ``releases`` (newest version first), each verified, or its
    verdict remembered in ``data_root`` while neither its files nor the code changed
    (:func:`verified`)."""
    latest = releases / "LATEST"
    newest = latest.read_text().strip() if latest.is_file() else None
    return [
        Release(folder, json.loads((folder / MANIFEST).read_text(encoding="utf-8")),
                tuple(verified(folder, data_root)), folder.name == newest)
        for folder in sorted(releases.iterdir(), reverse=True)
        if (folder / MANIFEST).is_file()
    ]  # fmt: skip


def verified(folder: Path, data_root: Path | None) -> list[str]:
    """``release verify``'s findings on ``folder``, kept in ``data_root``'s scratch folder
    under the code's version and every file's sha256 (the data root's :class:`Digests`, which
    hashes a file again only when its inode, size or mtime changed), and trusted while they
    stay the same. Verifying a release reads its whole history (MIRAI's database is built
    again), so a site that verified every release at every build cost a year of monthly
    releases twelve histories."""
    if data_root is None:
        return verify(folder)
    with Digests(data_root) as digests:
        files = [(p.relative_to(folder).as_posix(), digests.of(p))
                 for p in [folder / MANIFEST, *on_disk(folder)]]  # fmt: skip
    key = hashlib.sha256(json.dumps([code_version(), files]).encode()).hexdigest()
    stored = data_root / SCRATCH / VERDICTS / f"{folder.name}.json"
    with suppress(OSError, ValueError, KeyError, TypeError):
        found = json.loads(stored.read_text(encoding="utf-8"))
        if found["key"] == key:
            return list(found["problems"])
    problems = verify(folder)
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
