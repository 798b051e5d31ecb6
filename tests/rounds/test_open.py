"""Opening a round (``round open``): its questions come from the silver days before its open
date and from nothing later, the same data gives the same bytes, and what it pins in
round.json holds."""

from __future__ import annotations

import json
from datetime import date, datetime

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from gdelt_forecast.ground.config import Config, RoundsConfig
from gdelt_forecast.ground.files import sha256
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.rounds.clock import Clock, RoundError
from gdelt_forecast.rounds.ledger import ledger_rows
from gdelt_forecast.rounds.questions import QUESTIONS, Summary, _Writer, build, open_round
from tests.conftest import EXPORT_CSV, MENTIONS_CSV, write_bronze
from tests.fixtures.gdelt import derive_demo_days as derived
from tests.rounds.conftest import LATER, NOW, OPEN, demo_root


def _plant_a_slot_added_on_the_open_date(cfg: Config) -> None:
    """The real slot's CHN-USA and RUS-USA events, moved to 2025-08-03 22:00 (as the demo's
    days are derived: tests/fixtures/gdelt/demo-days/README.md), ingested and normalized:
    events of the round's own pairs, added on its open date."""
    export = derived.read_rows(EXPORT_CSV, derived.EXPORT_FIELDS)
    mentions = derived.read_rows(MENTIONS_CSV, derived.MENTIONS_FIELDS)
    events, kept = derived.derive(export, mentions, OPEN)
    slot = "20250803220000"
    write_bronze(cfg.data_root, slot, "export", derived.encode_rows(events))
    write_bronze(cfg.data_root, slot, "mentions", derived.encode_rows(kept))
    run("normalize", cfg, OPEN, OPEN)


@pytest.fixture(scope="module")
def before(demo_built, tmp_path_factory) -> Config:
    cfg = demo_root(demo_built, tmp_path_factory.mktemp("before"), later_days=False)
    open_round(cfg, "demo", OPEN, replay=True, now=NOW)
    return cfg


def test_opening_before_and_after_the_later_days_are_in_gives_the_same_bytes(
    before, demo_built, tmp_path
):
    after = demo_root(demo_built, tmp_path, later_days=True)
    _plant_a_slot_added_on_the_open_date(after)
    planted = pq.read_table(after.data_root / "silver/events/date=2025-08-03/part-0.parquet")
    pairs = set(zip(planted["head"].to_pylist(), planted["tail"].to_pylist(), strict=True))
    assert ("CHN", "USA") in pairs and planted.num_rows > 0  # the round's own pair, that day
    for day in LATER:
        assert (after.data_root / f"silver/events/date={day}/part-0.parquet").exists()

    summary = open_round(after, "demo", OPEN, replay=True, now=NOW)
    questions = "rounds/demo/questions.parquet"
    assert (after.data_root / questions).read_bytes() == (before.data_root / questions).read_bytes()
    assert summary.days_read == 3 and summary.late_rows == 0
    pinned = json.loads((after.data_root / "rounds/demo/round.json").read_text())
    assert pinned["data_cutoff"]["last_day"] == "2025-08-02"
    assert pinned["data_cutoff"]["days_read"] == 3


def test_opening_again_on_the_same_data_leaves_the_round_as_it_is(before):
    folder = before.data_root / "rounds/demo"
    pinned = (folder / "round.json").read_bytes()
    again = open_round(before, "demo", OPEN, replay=True, now=NOW)
    assert again.unchanged and (folder / "round.json").read_bytes() == pinned
    assert sorted(p.name for p in folder.iterdir()) == [
        "questions.parquet",
        "round.json",
        "submissions",
    ]
    # the reference forecasters submitted once, at the first opening
    assert len(ledger_rows(folder)) == 4
    # Other horizons, another deadline or a live round on the same id: refused, nothing changed.
    other = before.model_copy(
        update={"rounds": before.rounds.model_copy(update={"horizons": [1, 2]})}
    )
    with pytest.raises(RoundError, match="already open with other dates, horizons or mode"):
        open_round(other, "demo", OPEN, replay=True, now=NOW)
    with pytest.raises(RoundError, match="already open"):
        open_round(before, "demo", OPEN, deadline=datetime(2025, 8, 4, 12), replay=True,
                   now=NOW)  # fmt: skip
    assert (folder / "round.json").read_bytes() == pinned


def test_round_json_pins_the_clock_the_rule_the_days_read_and_the_questions(before):
    folder = before.data_root / "rounds/demo"
    pinned = json.loads((folder / "round.json").read_text())
    assert pinned["state"] == "open" and pinned["replay"] is True
    assert pinned["open_date"] == "2025-08-03"
    assert pinned["deadline"] == "2025-08-03T23:59:59.999999Z"
    assert pinned["target_days"] == {"4": "2025-08-07", "9": "2025-08-12"}
    assert pinned["questions"]["sha256"] == sha256(folder / "questions.parquet")
    assert pinned["resolution_rule"]["events"] == before.events.model_dump(mode="json")
    cutoff = pinned["data_cutoff"]
    assert (cutoff["first_day"], cutoff["last_day"]) == ("2025-07-22", "2025-08-02")
    assert cutoff["history_start"] == "2024-08-03" and len(cutoff["files_sha256"]) == 64
    assert pinned["code_version"]["git_commit"]
    table = pq.read_table(folder / "questions.parquet")
    assert table.schema.equals(QUESTIONS)
    assert pinned["questions"]["rows"] == table.num_rows
    by_rule = dict(zip(*pc.value_counts(table["rule"]).flatten(), strict=True))
    assert {k.as_py(): v.as_py() for k, v in by_rule.items()} == pinned["questions"]["by_rule"]


def test_every_pair_is_asked_on_every_target_day_with_its_background_from_the_history(before):
    rows = pq.read_table(before.data_root / "rounds/demo/questions.parquet").to_pylist()
    assert len({r["question_id"] for r in rows}) == len(rows)
    relation = [r for r in rows if r["rule"] == "relation"]
    pairs = {(r["subject"], r["object"]) for r in relation}
    # The demo's history holds two country pairs, both ways (demo-days/README.md).
    assert pairs == {("CHN", "USA"), ("USA", "CHN"), ("RUS", "USA"), ("USA", "RUS")}
    assert sorted((r["target_date"].isoformat(), r["horizon"]) for r in relation) == sorted(
        [("2025-08-07", 4), ("2025-08-12", 9)] * 4
    )
    # By hand, from the silver days read: the pair's events of each quad class per day held.
    silver = [
        event
        for day in ("2025-07-22", "2025-07-28", "2025-08-02")
        for event in pq.read_table(
            before.data_root / f"silver/events/date={day}/part-0.parquet", partitioning=None
        ).to_pylist()
    ]
    classes = {r["code"]: r["quad_class"] for r in _relations()}
    for row in (r for r in rows if r["rule"] == "count_above_mean"):
        events = {
            e["GLOBALEVENTID"]
            for e in silver
            if (e["head"], e["tail"]) == (row["subject"], row["object"])
            and classes[e["relation"][:2]] == row["quad_class"]
        }
        assert row["threshold"] == pytest.approx(30 * len(events) / 3), row["question_id"]
        assert row["window_start"].isoformat() == {"2025-08-07": "2025-07-09",
                                                   "2025-08-12": "2025-07-14"}[
            row["target_date"].isoformat()]  # fmt: skip
    for row in relation:
        assert row["base_rate"] == 1.0  # each pair acted on each of the 3 days held
        assert "2025-08-07" not in row["background"] and "August 07" not in row["background"]


def _relations() -> list[dict]:
    from gdelt_forecast.reference import tables

    return tables.relations().to_pylist()


def test_a_round_needs_history_before_its_open_date_and_a_live_one_opens_today(tmp_path):
    from gdelt_forecast.ground.config import load_config

    cfg = load_config(None, [], tmp_path / "data")
    with pytest.raises(RoundError, match="no silver events between 2024-08-03 and 2025-08-02"):
        open_round(cfg, "demo", OPEN, replay=True, now=NOW)
    with pytest.raises(RoundError, match="--replay opens one on a past date"):
        open_round(cfg, "demo", OPEN, now=NOW)
    assert not (tmp_path / "data/rounds").exists()


def test_a_round_whose_recent_window_is_empty_has_no_question_and_is_refused(before):
    # Opened on 2025-08-06, its 3 recent days (08-03..05) hold no event: the demo's last day
    # before them is 08-02.
    quiet = before.model_copy(
        update={"rounds": before.rounds.model_copy(update={"recent_days": 3})}
    )
    with pytest.raises(RoundError, match="no country pair had an event in the 3 days before"):
        open_round(quiet, "quiet", date(2025, 8, 6), replay=True, now=NOW)
    assert not (before.data_root / "rounds/quiet").exists()


def test_a_relation_is_asked_about_only_where_its_history_leaves_it_open(before):
    """``relation_at_least_once`` asks of the relations a pair took in a share of the
    history's windows within ``rounds.base_rate_range``: the demo's, which admits every one
    (its three days hold the same events: every share is 1), against the default's [0.2,
    0.8], which leaves every one out, and counts them."""
    clock = Clock.opened("any", OPEN, NOW.date(), horizons=(4, 9), replay=True)
    default = before.model_copy(
        update={"rounds": before.rounds.model_copy(update={"base_rate_range": [0.2, 0.8]})}
    )
    admitted, narrowed = build(before, clock), build(default, clock)

    def asked(built) -> dict[str, float]:
        return {r["question_id"]: r["base_rate"] for r in built.rows
                if r["rule"] == "relation_at_least_once"}  # fmt: skip

    assert len(asked(admitted)) == 12 and set(asked(admitted).values()) == {1.0}
    assert asked(narrowed) == {}
    why = "fewer relations than relations_per_pair within base_rate_range"
    extra = narrowed.summary.left_out[why] - admitted.summary.left_out.get(why, 0)
    assert extra == 12
    written = pq.read_table(before.data_root / "rounds/demo/questions.parquet").to_pylist()
    assert {r["question_id"] for r in written if r["rule"] == "relation_at_least_once"} == set(
        asked(admitted)
    )


def test_the_relations_nearest_even_odds_are_asked_first():
    """Among a pair's relations within the range, those whose share of windows is nearest
    0.5, ties by more events: what the writer asks, from the history's counts alone."""
    rc = RoundsConfig(relations_per_pair=2, base_rate_range=[0.2, 0.8], horizons=[1])
    clock = Clock.opened("any", OPEN, NOW.date(), horizons=(1,), replay=True)
    summary = Summary(round_id="any", open_date="", deadline="", replay=True)
    names = {r["code"]: r for r in _relations()}
    writer = _Writer(clock, rc, {}, names, OPEN, summary)
    counts = {"days": 30, "active_days": 20, "total": 0, "recent": 0, "daily_mean": 0.0,
              "above_share": 0.5, "last_scaled": 0.0, "last_count": 0}  # fmt: skip
    series = {"any": counts} | {
        f"code{code}": counts | {"any_share": share, "total": total}
        for code, share, total in [("01", 1.0, 90), ("04", 0.55, 5), ("19", 0.3, 12),
                                   ("02", 0.7, 20), ("14", 0.1, 1)]
    }  # fmt: skip
    rows = writer.pair("USA", "CHN", series)
    asked = [r["relation"] for r in rows if r["rule"] == "relation_at_least_once"]
    assert asked == ["04", "02"]  # 0.05 from even, then 0.2 (02's 20 events before 19's 12)
