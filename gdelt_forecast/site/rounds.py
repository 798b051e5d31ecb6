"""The live rounds' pages: ``rounds/index.html`` (every round, live or replay, open or
resolved, and the live leaderboard) and a page per round: its clock and what it read, who
committed or submitted and when, its questions with their answers, voids and fragile marks
once resolved, the vintage, and its forecasters' scores."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from gdelt_forecast.ground.data_root import ROUND_JSON, ROUND_QUESTIONS, ROUNDS, DataRoot
from gdelt_forecast.ground.parquet_io import read_rows
from gdelt_forecast.rounds.clock import Clock
from gdelt_forecast.rounds.leaderboard import LEADERBOARD_FILE, ranked
from gdelt_forecast.rounds.ledger import in_force, ledger_rows
from gdelt_forecast.rounds.resolve import RESOLUTION_FILE
from gdelt_forecast.rounds.scores import QUESTION_SCORES_FILE
from gdelt_forecast.site.render import Pages, slug


def write(pages: Pages, root: DataRoot) -> int:
    """The rounds' pages; how many rounds (none: no page)."""
    folder = root.path(ROUNDS)
    rounds = [_round(path.parent) for path in sorted(folder.glob(f"*/{ROUND_JSON}"))]
    if not rounds:
        return 0
    for found in rounds:
        pages.write(f"rounds/{slug(found['id'])}.html", "round.html", round=found)
    pages.write(
        "rounds/index.html", "rounds.html", rounds=rounds,
        leaderboard=read_rows(folder / LEADERBOARD_FILE),
    )  # fmt: skip
    return len(rounds)


def _round(folder: Path) -> dict:
    pinned = json.loads((folder / ROUND_JSON).read_text(encoding="utf-8"))
    questions = pq.read_table(folder / ROUND_QUESTIONS).to_pylist()
    answers = {r["question_id"]: r for r in read_rows(folder / RESOLUTION_FILE)}
    entries = ledger_rows(folder)
    held = in_force(entries, Clock.pinned(pinned).deadline)
    scored = folder / QUESTION_SCORES_FILE
    return {
        "id": folder.name,
        "page": f"{slug(folder.name)}.html",
        "pinned": pinned,
        "questions": [{**q, "resolved": answers.get(q["question_id"])} for q in questions],
        "ledger": entries,
        "in_force": held,
        "board": ranked({folder.name: pq.read_table(scored)}) if scored.exists() else [],
    }
