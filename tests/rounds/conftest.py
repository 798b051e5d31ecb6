"""A data root holding the demo's history before 2025-08-03, for the rounds' tests."""

from __future__ import annotations

import shutil
from datetime import UTC, date, datetime
from pathlib import Path

from gdelt_forecast.ground.config import Config
from tests.release.conftest import demo_cfg, demo_month, offline_hub, release  # noqa: F401 (fixtures)

OPEN = date(2025, 8, 3)  # after the demo's 07-22, 07-28 and 08-02; before its 08-07 and 08-12
NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)  # when the replays are opened
LATER = ("2025-08-07", "2025-08-12")


def demo_root(demo_built: Path, base: Path, *, later_days: bool, **rounds) -> Config:
    """The demo month's data root, with (``later_days``) or without the silver of the days
    after the open date, as before and after they were ingested and normalized; the rounds'
    horizons 4 and 9 (the demo's 08-07 and 08-12), and ``rounds`` settings."""
    cfg = demo_month(demo_built, base / "data", base / "mirror")
    settings = cfg.rounds.model_copy(update={"horizons": [4, 9], **rounds})
    cfg = cfg.model_copy(update={"rounds": settings})
    if not later_days:
        for day in LATER:
            shutil.rmtree(cfg.data_root / f"silver/events/date={day}")
    return cfg
