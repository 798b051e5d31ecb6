"""The demo month, built once for the test run the way `make demo` builds it: the real
2025-08-07 22:00 slot and the four demo-only days derived from it (2025-07-22, 07-28,
08-02 and 08-12 at 22:00; tests/fixtures/gdelt/demo-days/) ingested from a file:// mirror,
normalized day by day, the demo's pages (demo/sample_pages.py) read from a web archive and
cleaned over the span, the warehouse built, the month's test set, timelines and tasks built
through the runner (``demo_built``, in tests/conftest.py; tests work on copies of it); then
released."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path

import pytest

from gdelt_forecast.gdelt.ingest import ingest
from gdelt_forecast.ground.config import Config, load_config
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.release import mirai_database

REPO = Path(__file__).resolve().parents[2]
DAY, MONTH = date(2025, 8, 7), "2025-08"  # the real slot's day; the test month
# The demo's days (the real one and the derived ones) and the span they cover.
DAYS = [date(2025, 7, 22), date(2025, 7, 28), date(2025, 8, 2), DAY, date(2025, 8, 12)]
FIRST_DAY, LAST_DAY = DAYS[0], DAYS[-1]


def demo_month(built: Path, root: Path, mirror_dir: Path) -> Config:
    """A copy of the demo month (``built``: the ``demo_built`` fixture's folder) at ``root``,
    its mirror at ``mirror_dir``, and the config it was built with, pointed at them (the
    bronze's list of slots still names the first mirror: nothing reads it but ingest)."""
    shutil.copytree(built / "data", root, symlinks=True)
    shutil.copytree(built / "mirror", mirror_dir)
    return _config(root, mirror_dir)


def _config(root: Path, mirror_dir: Path) -> Config:
    archive = root / "pages.warc.gz"
    overrides = [f"gdelt.base_url={mirror_dir.as_uri()}", f"articles.archives=[{archive}]"]
    return load_config(REPO / "configs/demo.yaml", overrides, root)


def build_demo_month(root: Path, mirror_dir: Path) -> Config:
    """The demo month built at ``root`` from the demo's slots in ``mirror_dir`` (read only)."""
    cfg = _config(root, mirror_dir)
    start, end = datetime(2025, 7, 22, 21, 45), datetime(2025, 8, 12, 23, 45)
    ingest(cfg, start, end, ["export", "mentions"])
    for day in DAYS:  # normalize wants bronze on every day of its range
        run("normalize", cfg, day, day)
    sample_pages(str(root), root / "pages.warc.gz", check=True)
    run("process", cfg, FIRST_DAY, LAST_DAY)
    run("database", cfg)
    for stage in ("testset", "timelines", "tasks", "reasoning"):
        run(stage, cfg, MONTH)
    return cfg


def sample_pages(root: str, out: Path, **run) -> subprocess.CompletedProcess:
    """demo/sample_pages.py over the demo's days, as `make demo` runs it."""
    return subprocess.run(
        [
            sys.executable,
            "demo/sample_pages.py",
            "--data-root",
            root,
            "--config",
            "configs/demo.yaml",
            "--start-date",
            FIRST_DAY.isoformat(),
            "--end-date",
            LAST_DAY.isoformat(),
            "--out",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        **run,
    )


@pytest.fixture(scope="session", autouse=True)
def offline_hub(tmp_path_factory):
    """datasets and the embedding model read only local files, caching under tmp."""
    cache = tmp_path_factory.mktemp("hf")
    saved = {k: os.environ.get(k) for k in ("HF_HOME", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
    os.environ.update(HF_HOME=str(cache), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session")
def demo_cfg(tmp_path_factory, demo_built) -> Config:
    base = tmp_path_factory.mktemp("demo")
    return demo_month(demo_built, base / "data", base / "mirror")


@pytest.fixture(scope="session")
def release(demo_cfg) -> Path:
    """The demo month's first release, with MIRAI's database files built into it as a MIRAI
    user builds them (`release mirai`); tests must not change it (copy it first)."""
    path = Path(run("release", demo_cfg, MONTH).path)
    mirai_database.build(path)
    return path
