"""The model forecasters of a round (``agent --round``, ``baseline --method llm --round``)
against a scripted server, on a replay round of the demo's history before 2025-08-03 and the
demo release, which holds the later days too: every tool call sees the days before the open
date only, the answers are submitted cleaned, and the round scores them once it resolves."""

from __future__ import annotations

import json
from datetime import date

import pyarrow.parquet as pq
import pytest

from gdelt_forecast.agents.run import run_agents
from gdelt_forecast.baselines import BaselineError, run_baseline
from gdelt_forecast.contract.names import BINARY, RELATION
from gdelt_forecast.ground.config import Config
from gdelt_forecast.rounds.ledger import ledger_rows
from gdelt_forecast.rounds.questions import open_round
from gdelt_forecast.rounds.resolve import resolve_round
from tests.agents.test_agent import call, final, play
from tests.llm.scripted import MODEL, ScriptedServer, llm_config
from tests.rounds.conftest import NOW, OPEN, demo_root

# What the scripted model answers: a valid code, a code of another first-level, a code that
# is not CAMEO's, and a key that is none; submitted as {"04": ["042"], "11": ["110"]}.
ANSWER = {"11": ["110", "042", "999"], "04": ["042"], "XX": ["010"]}
CLEANED = {"04": ["042"], "11": ["110"]}


@pytest.fixture
def server():
    scripted = ScriptedServer()
    yield scripted
    scripted.stop()


@pytest.fixture
def round_root(demo_built, server, tmp_path) -> Config:
    """The demo's data root, the replay round "replay" open in it, and the scripted model."""
    cfg = demo_root(demo_built, tmp_path, later_days=True, grace_days=0)
    open_round(cfg, "replay", OPEN, replay=True, now=NOW)
    return cfg.model_copy(update={"llm": llm_config(server, cfg.data_root).llm})


def questions(cfg: Config) -> list[dict]:
    return pq.read_table(cfg.data_root / "rounds/replay/questions.parquet").to_pylist()


def submitted(cfg: Config, forecaster: str) -> tuple[dict, dict]:
    """The forecaster's ledger row and its file's forecasts by question."""
    (row,) = [
        r for r in ledger_rows(cfg.data_root / "rounds/replay") if r["forecaster"] == forecaster
    ]
    lines = (cfg.data_root / "rounds/replay" / row["file"]).read_text().splitlines()
    return row, {(d := json.loads(line))["question_id"]: d["forecast"] for line in lines}


def test_an_agent_sees_the_days_before_the_open_date_and_its_answers_are_scored(
    round_root, server, release
):
    def turns(subject, obj, messages, turn):
        if turn == 0:
            return call("get_events", {"head_entities": [subject], "tail_entities": [obj]})
        return final(ANSWER)

    server.player = play(turns)
    summary = run_agents(round_root, str(release), round="replay")
    relation = {q["question_id"] for q in questions(round_root) if q["kind"] == RELATION}
    assert summary.queries == len(relation) > 0
    assert summary.end_states["Final Answer"] == len(relation)
    assert "round submit replay: agent-function-all's" in summary.line()

    # Every event any call saw is dated before the open date, though the release holds the
    # demo's 2025-08-07 and 08-12 too; and the calls did see events.
    steps = pq.read_table(f"{summary.path}/steps.parquet").to_pylist()
    seen = [e for s in steps if s["tool"] == "get_events" and s["observation"].startswith("[")
            for e in json.loads(s["observation"])]  # fmt: skip
    assert seen and all(date.fromisoformat(e["date"]) < OPEN for e in seen)
    # The prompts ask from the day before the open date.
    assert all("August 02, 2025" in r["messages"][1]["content"] for r in server.requests)

    row, forecasts = submitted(round_root, "agent-function-all")
    assert (row["model"], row["questions"]) == (MODEL, len(relation))
    assert forecasts == dict.fromkeys(relation, CLEANED)

    resolve_round(round_root, "replay")
    scores = pq.read_table(round_root.data_root / "rounds/replay/scores.parquet").to_pylist()
    ours = [s for s in scores if s["forecaster"] == "agent-function-all"]
    assert {s["kind"] for s in ours} == {RELATION, BINARY}
    # Its relation answers stand; the binary questions, which MIRAI's prompts never ask,
    # are imputed and marked.
    assert all(not s["marked"] and s["imputed"] == 0 for s in ours if s["kind"] == RELATION)
    assert all(s["marked"] and s["imputed"] == s["questions"] for s in ours if s["kind"] == BINARY)


def test_direct_io_answers_a_round_and_the_reference_methods_are_refused(
    round_root, server, release
):
    server.player = lambda body: {"content": json.dumps(ANSWER)}
    summary = run_baseline(round_root, release, "llm", round="replay")
    relation = {q["question_id"] for q in questions(round_root) if q["kind"] == RELATION}
    assert summary.queries == len(relation) and summary.llm["failed"] == 0
    assert "round submit replay: direct-io's" in summary.line()
    assert all("August 02, 2025" in r["messages"][1]["content"] for r in server.requests)
    row, forecasts = submitted(round_root, "direct-io")
    assert row["model"] == MODEL and forecasts == dict.fromkeys(relation, CLEANED)
    with pytest.raises(BaselineError, match="the reference forecasters .* submit when the round"):
        run_baseline(round_root, release, "history", round="replay")
