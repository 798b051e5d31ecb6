"""The demo month, built once per session the way `make demo` builds it: the real
2025-08-07 22:00 slot and the four demo-only days derived from it (2025-07-22, 07-28,
08-02 and 08-12 at 22:00; tests/fixtures/gdelt/demo-days/) ingested from a file:// mirror,
normalized day by day, the demo's pages (demo/sample_pages.py) read from a web archive and
cleaned over the span, the warehouse built, the month's test set, timelines and tasks built
through the runner; then released."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path

import pytest

from gdelt_forecast.gdelt.ingest import ingest
from gdelt_forecast.ground.config import Config, load_config
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.release import mirai_database
from tests.conftest import Mirror

REPO = Path(__file__).resolve().parents[2]
DAY, MONTH = date(2025, 8, 7), "2025-08"  # the real slot's day; the test month
# The demo's days (the real one and the derived ones) and the span they cover.
DAYS = [date(2025, 7, 22), date(2025, 7, 28), date(2025, 8, 2), DAY, date(2025, 8, 12)]
FIRST_DAY, LAST_DAY = DAYS[0], DAYS[-1]


def demo_month(root: Path, mirror_dir: Path) -> Config:
    mirror = Mirror(mirror_dir).add_demo_slots()
    archive = root / "pages.warc.gz"
    overrides = [f"gdelt.base_url={mirror.root.as_uri()}", f"articles.archives=[{archive}]"]
    cfg = load_config(REPO / "configs/demo.yaml", overrides, root)
    start, end = datetime(2025, 7, 22, 21, 45), datetime(2025, 8, 12, 23, 45)
    ingest(cfg, start, end, ["export", "mentions"])
    for day in DAYS:  # normalize wants bronze on every day of its range
        run("normalize", cfg, day, day)
    sample_pages(str(root), archive, check=True)
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
def demo_cfg(tmp_path_factory) -> Config:
    base = tmp_path_factory.mktemp("demo")
    return demo_month(base / "data", base / "mirror")


@pytest.fixture(scope="session")
def release(demo_cfg) -> Path:
    """The demo month's first release, with MIRAI's database files built into it as a MIRAI
    user builds them (`release mirai`); tests must not change it (copy it first)."""
    path = Path(run("release", demo_cfg, MONTH).path)
    mirai_database.build(path)
    return path
