"""The names a release and the stages that build it share: its manifest, its tasks, splits,
query sets, score levels and reference baselines, the methods its rows record, and the count
of the multiple-choice records' gold letters."""

import re
import string
from datetime import date, timedelta

MANIFEST = "manifest.json"
# OpenForecast's tasks in the paper's order (open, then closed), and their splits in time
# order (the leakage rule reads it so).
TASKS = ("STF", "LTF", "AQA", "MCNC", "MCAC", "VQA")
SPLITS = ("train", "dev", "test")
REASONING = ("I-CEC", "I-CRR", "S-CEC", "S-CRR")  # EV2's
# MIRAI's query sets of a release, the levels it scores a forecast at, and the reference
# baselines every release runs on them.
QUERIES = {"test": "testset/queries.parquet", "subset": "testset/subset.parquet"}
LEVELS = ("first_level", "second_level", "binary", "quad")
BASELINES = ("history", "frequency")
# A live round's two kinds of question: MIRAI's relation query, answered with its answer
# dict, and a yes-or-no question, answered with a probability.
RELATION, BINARY = "relation", "binary"
# A round's id, the folder rounds/<id>/ of the data root (a JSON schema pattern, and re's).
ROUND_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
# How a timeline's atomic events or a task record were made (each row's ``method``): found in
# the documents' text, or written by a model (the rows the grounding rules re-check).
EXTRACTIVE, LLM = "extractive", "llm"


def version_key(name: str) -> tuple:
    """A release's name (``YYYY.MM.n`` or any other) as it sorts: its numbers as numbers."""
    return tuple(int(p) if p.isdigit() else -1 for p in re.split(r"[.\-_]", name))


def live_round(month: str, today: date) -> str | None:
    """The live round that the refresh of ``month`` (YYYY-MM) opens on ``today`` (UTC),
    ``live-<today>``, which the month's release names; None unless ``month`` is the one
    before today's: only the newest month's refresh asks about days to come."""
    before = today.replace(day=1) - timedelta(days=1)
    return f"live-{today.isoformat()}" if month == f"{before:%Y-%m}" else None


def letters(
    rows: list[dict], tasks: tuple[str, ...] = ("MCNC", "MCAC"), options: int = 4
) -> dict[str, dict[str, int]]:
    """The gold letters of the multiple-choice records: task -> letter -> records."""
    return {
        task: {
            letter: sum(r["task"] == task and r["answer"] == letter for r in rows)
            for letter in string.ascii_uppercase[:options]
        }
        for task in tasks
    }
