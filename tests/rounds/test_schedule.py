"""The rounds' turn of a monthly refresh (``round refresh``, ``monthly_refresh``'s ``rounds``
task): the newest month's refresh opens the next live round, the one its release names,
every due live round is resolved, a round that lacks files waits, and a second run changes
nothing."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pytest

from gdelt_forecast.gdelt import ledger
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.release.build import build_release
from gdelt_forecast.rounds.clock import RoundError
from gdelt_forecast.rounds.questions import open_round
from gdelt_forecast.rounds.schedule import refresh_rounds
from tests.rounds.conftest import NOW, OPEN, demo_root

REFRESH = datetime(2025, 9, 2, 6, tzinfo=UTC)  # monthly_refresh's run for 2025-08


@pytest.fixture
def with_live_round(demo_built, tmp_path) -> Config:
    """The demo's days, a live round opened on 2025-08-03 (due by 2025-09-02) and a replay."""
    cfg = demo_root(demo_built, tmp_path, later_days=True, grace_days=0)
    open_round(cfg, "live", OPEN, now=datetime(2025, 8, 3, 12, tzinfo=UTC))
    open_round(cfg, "replay", OPEN, replay=True, now=NOW)
    return cfg


def state(cfg: Config, round_id: str) -> str:
    return json.loads((cfg.data_root / f"rounds/{round_id}/round.json").read_text())["state"]


def test_the_newest_months_refresh_opens_a_round_and_resolves_the_due_ones(with_live_round):
    cfg = with_live_round
    summary = refresh_rounds(cfg, "2025-08", now=REFRESH)
    assert summary.opened == "live-2025-09-02" and summary.resolved == ["live"]
    assert summary.waiting == {}
    assert state(cfg, "live") == "resolved" and state(cfg, "replay") == "open"
    pinned = json.loads((cfg.data_root / "rounds/live-2025-09-02/round.json").read_text())
    assert (pinned["open_date"], pinned["replay"]) == ("2025-09-02", False)
    assert pinned["target_days"] == {"4": "2025-09-06", "9": "2025-09-11"}
    # Run again: the same round, left as it is; nothing more to resolve.
    again = refresh_rounds(cfg, "2025-08", now=REFRESH + timedelta(hours=1))
    assert again.opened == "live-2025-09-02" and again.resolved == []


def test_an_older_months_refresh_opens_none_and_a_round_lacking_files_waits(with_live_round):
    cfg = with_live_round
    book = ledger.read(cfg.data_root / "bronze/slots.parquet")
    del book[("20250812220000", "english", "mentions")]
    write_parquet(pa.Table.from_pylist(list(book.values()), schema=ledger.SCHEMA),
                  cfg.data_root / "bronze/slots.parquet")  # fmt: skip
    summary = refresh_rounds(cfg, "2025-07", now=REFRESH)
    assert (
        summary.opened is None and summary.not_opened == "2025-07 is not the month before 2025-09"
    )
    assert summary.resolved == [] and list(summary.waiting) == ["live"]
    assert "20250812220000.mentions.CSV.zip" in summary.waiting["live"]
    assert state(cfg, "live") == "open"
    assert not (cfg.data_root / "rounds/live-2025-09-02").exists()


def test_the_round_opened_is_the_one_the_months_release_names(with_live_round):
    """A release built on the refresh's day names the round in its manifest and card; the
    refresh opens that round, an hour later, and pins the release in round.json."""
    cfg = with_live_round
    release = build_release(cfg, "2025-08", now=REFRESH)
    folder = cfg.data_root / "releases" / release.version
    named = json.loads((folder / "manifest.json").read_text())["round"]
    assert named == {
        "round": "live-2025-09-02",
        "open_date": "2025-09-02",
        "questions": "rounds/live-2025-09-02/questions.parquet",
    }
    assert (
        "opens the live\nround `live-2025-09-02` right after it"
        in (folder / "README.md").read_text()
    )
    summary = refresh_rounds(cfg, "2025-08", now=REFRESH + timedelta(hours=1))
    assert summary.opened == "live-2025-09-02"
    pinned = json.loads((cfg.data_root / "rounds/live-2025-09-02/round.json").read_text())
    assert (pinned["release"], pinned["open_date"]) == (release.version, "2025-09-02")
    # The next day the named round can no longer open live: the step fails, naming it, after
    # resolving what was due (nothing more here).
    shutil.rmtree(cfg.data_root / "rounds/live-2025-09-02")
    with pytest.raises(RoundError, match="open date 2025-09-02 is before today"):
        refresh_rounds(cfg, "2025-08", now=REFRESH + timedelta(days=1))
