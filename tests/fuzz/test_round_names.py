"""A round's forecaster and model names (``round submit --forecaster NAME --model M``),
property-tested: any text gives an accepted submission or a RoundError, never another
exception, and what is kept lies inside the round's ``submissions/`` folder, under a name
that is the forecaster's own."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pyarrow as pa
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gdelt_forecast.ground.config import load_config
from gdelt_forecast.ground.files import write_json
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.rounds.clock import RoundError
from gdelt_forecast.rounds.ledger import ledger_rows, submit_forecasts
from gdelt_forecast.rounds.questions import QUESTIONS
from tests.fuzz.strategies import TEXT

pytestmark = pytest.mark.fuzz

NAMES = st.one_of(TEXT, st.sampled_from(["team-a", "../up", "a/b", ".", "x" * 64, "x" * 65]))


@pytest.fixture(scope="module")
def round_root(tmp_path_factory):
    """A replay round of one binary question, its files as ``round open`` writes them."""
    root = tmp_path_factory.mktemp("round")
    folder = root / "rounds/r"
    row = dict.fromkeys(QUESTIONS.names)
    row |= {"question_id": "q1", "kind": "binary", "rule": "count_above_mean", "horizon": 4,
            "target_date": date(2025, 8, 7), "window_start": date(2025, 7, 9)}  # fmt: skip
    write_parquet(pa.Table.from_pylist([row], schema=QUESTIONS), folder / "questions.parquet")
    write_json(folder / "round.json", {
        "round": "r", "state": "open", "replay": True, "open_date": "2025-08-03",
        "deadline": "2025-08-03T23:59:59.999999Z", "horizons": [4],
    })  # fmt: skip
    file = root / "forecasts.jsonl"
    file.write_text(json.dumps({"question_id": "q1", "forecast": 0.5}) + "\n")
    return load_config(None, [], root), file


@given(NAMES, st.one_of(st.none(), NAMES))
@example("team-a", "meta-llama/Llama-3.1-8B-Instruct")
def test_any_names_give_a_submission_or_a_round_error(round_root, forecaster, model):
    cfg, file = round_root
    folder = cfg.data_root / "rounds/r"
    before = len(ledger_rows(folder))
    try:
        submit_forecasts(cfg, "r", forecaster, file, model=model, now=datetime.now(UTC))
    except RoundError as exc:
        assert str(exc).isprintable() and len(ledger_rows(folder)) == before
        return
    row = ledger_rows(folder)[-1]
    assert (row["forecaster"], row["model"]) == (forecaster, model)
    kept = (folder / row["file"]).resolve()
    assert kept.parent == (folder / "submissions" / forecaster).resolve()
    assert kept.parent.parent == (folder / "submissions").resolve()
