"""The reference forecasters every round gets at open, and the leaderboards: one round's (a
replay's too) and the live rounds' (replays never count), their seeded intervals, the skill
against the base rate and the difficulty-adjusted Brier score, as computed by hand."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime, timedelta

import pyarrow.parquet as pq
import pytest

from gdelt_forecast.ground.config import Config
from gdelt_forecast.rounds.leaderboard import round_leaderboard
from gdelt_forecast.rounds.ledger import ledger_rows, submit_forecasts
from gdelt_forecast.rounds.questions import open_round
from gdelt_forecast.rounds.references import REFERENCES
from gdelt_forecast.rounds.resolve import resolve_round
from gdelt_forecast.scoring.rounds import ALWAYS_HALF
from tests.rounds.conftest import NOW, OPEN, demo_root

BEFORE = datetime(2025, 8, 3, 12, tzinfo=UTC)  # the live round's open moment, before its end


@pytest.fixture(scope="module")
def rounds(demo_built, tmp_path_factory) -> Config:
    """Two resolved rounds on the demo's days: "live" (opened on its open date, with team-a's
    forecasts) and "replay"."""
    cfg = demo_root(demo_built, tmp_path_factory.mktemp("rounds"), later_days=True, grace_days=0)
    open_round(cfg, "live", OPEN, now=BEFORE)
    open_round(cfg, "replay", OPEN, replay=True, now=NOW)
    questions = pq.read_table(cfg.data_root / "rounds/live/questions.parquet").to_pylist()
    file = cfg.data_root.parent / "team-a.jsonl"
    file.write_text("".join(
        json.dumps({"question_id": q["question_id"],
                    "forecast": 0.7 if q["kind"] == "binary" else {"02": ["020"]}}) + "\n"
        for q in questions
    ))  # fmt: skip
    submit_forecasts(cfg, "live", "team-a", file, model="m1", now=BEFORE + timedelta(hours=1))
    for round_id in ("live", "replay"):
        resolve_round(cfg, round_id)
    return cfg


def question_scores(cfg: Config, round_id: str) -> dict[str, dict[str, dict[str, float]]]:
    """forecaster -> metric -> question -> value, from the round's per-question scores."""
    found: dict = defaultdict(lambda: defaultdict(dict))
    path = cfg.data_root / f"rounds/{round_id}/question_scores.parquet"
    for s in pq.read_table(path).to_pylist():
        found[s["forecaster"]][s["metric"]][s["question_id"]] = s["value"]
    return found


def test_the_reference_forecasters_submit_at_open_from_the_history(rounds):
    rows = ledger_rows(rounds.data_root / "rounds/live")
    assert [r["forecaster"] for r in rows[:4]] == list(REFERENCES)
    assert all(r["received"] == BEFORE and r["action"] == "submit" for r in rows[:4])
    questions = pq.read_table(rounds.data_root / "rounds/live/questions.parquet").to_pylist()
    folder = rounds.data_root / "rounds/live"
    forecasts = {
        r["forecaster"]: {
            json.loads(line)["question_id"]: json.loads(line)["forecast"]
            for line in (folder / r["file"]).read_text().splitlines()
        }
        for r in rows[:4]
    }
    for q in questions:
        qid = q["question_id"]
        assert set(forecasts) == set(REFERENCES) and all(qid in f for f in forecasts.values())
        if q["kind"] == "binary":
            assert forecasts[ALWAYS_HALF][qid] == 0.5
            assert forecasts["base-rate"][qid] == forecasts["frequency"][qid] == q["base_rate"]
            assert forecasts["history"][qid] in (0.0, 1.0)
        else:
            assert forecasts[ALWAYS_HALF][qid] == {}
            # The pair acted on each of the 3 days held (base rate 1): base-rate is history.
            assert forecasts["base-rate"][qid] == forecasts["history"][qid] != {}


def test_one_rounds_leaderboard_ranks_by_the_adjusted_brier_with_seeded_intervals(rounds):
    board = round_leaderboard(rounds, "live")
    rows = {r["forecaster"]: r for r in board.rows}
    assert set(rows) == {*REFERENCES, "team-a"} and rows["team-a"]["models"] == ["m1"]
    assert [r["rank"] for r in board.rows] == [1, 2, 3, 4, 5]
    adjusted = [r["adjusted_brier"] for r in board.rows]
    assert adjusted == sorted(adjusted)
    assert rows[ALWAYS_HALF]["adjusted_brier"] == pytest.approx(0.25)
    scores = question_scores(rounds, "live")
    team, base = scores["team-a"]["brier"], scores["base-rate"]["brier"]
    assert rows["team-a"]["brier"] == pytest.approx(sum(team.values()) / len(team))
    assert rows["team-a"]["binary_questions"] == len(team)
    base_mean = sum(base.values()) / len(base)
    if base_mean:
        assert rows["team-a"]["brier_skill"] == pytest.approx(
            1 - rows["team-a"]["brier"] / base_mean
        )
    # every forecaster answered every question here: the adjusted score is the plain mean
    assert rows["team-a"]["adjusted_brier"] == pytest.approx(rows["team-a"]["brier"])
    f1 = scores["team-a"]["first_level_f1"]
    assert rows["team-a"]["first_level_f1"] == pytest.approx(sum(f1.values()) / len(f1))
    again = round_leaderboard(rounds, "live")
    assert again.rows == board.rows  # the same seed, the same intervals
    r = rows["team-a"]
    assert r["brier_low"] is None or r["brier_low"] <= r["brier"] <= r["brier_high"]


def test_the_live_leaderboard_counts_no_replay_and_is_written(rounds):
    board = round_leaderboard(rounds)
    assert board.rounds == ["live"]
    assert {r["forecaster"] for r in board.rows} == {*REFERENCES, "team-a"}
    written = pq.read_table(rounds.data_root / "rounds/leaderboard.parquet").to_pylist()
    assert written == board.rows
    replay = round_leaderboard(rounds, "replay")
    assert {r["forecaster"] for r in replay.rows} == set(REFERENCES)  # a replay's own, apart
