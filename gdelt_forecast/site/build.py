"""``gdelt-forecast site --out DIR``: the static site of a data root's releases and agent runs.

The site is built beside ``DIR`` and then put in its place, so that a failed build leaves the
last site whole and a re-run leaves no page of a release or run that is gone. A folder that
this command did not build is never replaced (it holds no ``MARKER``).
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from gdelt_forecast.agents import leaderboard
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.files import temporary_folder
from gdelt_forecast.ground.parquet_io import read_rows
from gdelt_forecast.ground.progress import progress
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.site import boards, records, releases, rounds, traces
from gdelt_forecast.site.render import Pages

log = logging.getLogger(__name__)
MARKER = ".gdelt-forecast-site"


@dataclass
class SiteSummary(StageSummary):
    path: str
    releases: int
    unsound: int  # releases that `release verify` finds problems in
    runs: int
    stories: int
    pages: int
    bytes: int
    seconds: float

    def line(self) -> str:
        flagged = f" ({self.unsound} failing release verify)" if self.unsound else ""
        return (
            f"site: {self.releases} release(s){flagged}, {self.runs} agent run(s), "
            f"{self.stories} stories; {self.pages:,} pages, {self.bytes / 1e6:.1f} MB in "
            f"{self.seconds:.1f} s -> {self.path}/index.html"
        )


def build_site(cfg: Config, out: Path | None = None) -> SiteSummary:
    """The site of ``cfg``'s data root in ``out`` (default: ``<data_root>/site``)."""
    started = time.monotonic()
    if cfg.remote:
        raise StageError(
            f"site: reads a local data root; copy {cfg.data_root}/releases (and agents) to a "
            "folder and pass it as --data-root"
        )
    root = DataRoot(cfg.data_root)
    if not (root.root / "releases").is_dir():
        raise StageError(f"site: no releases under {root.root}: build one with `release`")
    out = (out or root.root / "site").resolve()
    if out.exists() and not (out / MARKER).exists() and any(out.iterdir()):
        raise StageError(f"site: {out} is not empty and not a site this command built")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = temporary_folder(out.parent, f".{out.name}.")
    try:
        summary = _build(cfg, root, staging)
        _replace(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    summary.path, summary.seconds = str(out), time.monotonic() - started
    return summary


def _build(cfg: Config, root: DataRoot, out: Path) -> SiteSummary:
    found = releases.find(root.root / "releases", root.root)
    if not found:
        raise StageError(f"site: no release under {root.root / 'releases'}")
    pages = Pages(out)
    static = resources.files("gdelt_forecast.site") / "static"
    (out / "assets").mkdir()
    for name in ("site.css", "site.js", "favicon.svg"):
        (out / "assets" / name).write_bytes((static / name).read_bytes())
    (out / MARKER).write_text("built by gdelt-forecast site; replaced whole by the next build\n")
    run_counts, stories = {}, 0
    for release in progress(found, len(found), "site"):
        agents = root.agents / release.version
        folders = traces.runs(agents)
        board = read_rows(agents / leaderboard.FILE)
        releases.write_release(pages, release, cfg.site.files_url)
        boards.write(pages, release, board, {f.name for f in folders})
        stories += records.write(pages, release, cfg.site.page_size)
        for folder in folders:
            traces.write(pages, release, folder)
        run_counts[release.version] = len(folders)
        log.info("site: %s, %d run(s)", release.version, len(folders))
    live = rounds.write(pages, root)
    releases.write_index(pages, found, run_counts, live)
    return SiteSummary(
        path=str(out), releases=len(found), unsound=sum(bool(r.problems) for r in found),
        runs=sum(run_counts.values()), stories=stories, pages=pages.written,
        bytes=_size(out), seconds=0.0,
    )  # fmt: skip


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _replace(new: Path, out: Path) -> None:
    """``new`` in place of ``out``, the old site moved aside first and removed after."""
    old = out.with_name(f".{out.name}.old-{os.getpid()}")
    if out.exists():
        out.rename(old)
    new.rename(out)
    shutil.rmtree(old, ignore_errors=True)
