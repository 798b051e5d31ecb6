"""A forecaster's submission to a round, checked whole before anything of it is kept.

A submission is JSON Lines, one ``{"question_id": ..., "forecast": ...}`` object per
question answered. A relation query's forecast is MIRAI's answer dict (first-level CAMEO
code -> list of its second-level codes; ``{}`` forecasts that nothing happens). A binary
question's forecast is a probability in [0, 1]. A question left out is imputed when the
round is scored, and counted there.

Every line is checked before the file is accepted. A line is refused when:

- it is not UTF-8 or not JSON;
- it is not an object of exactly those two fields;
- it names a question the round does not ask, or one an earlier line answered;
- its forecast has the wrong type for its question's kind;
- its probability is not a finite number in [0, 1];
- its dict holds a key that is not a CAMEO first-level code, or a value that is not a list of
  that key's second-level codes, each once.

Any refusal refuses the file, listing the first lines refused by number. The messages name a
line's fault, never its content, which may be hostile; a question id is quoted only once it
is known to be one of the round's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gdelt_forecast.contract.names import BINARY, RELATION
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.scoring.mirai import codebook
from gdelt_forecast.scoring.predictions import BadLine, describe, json_lines
from gdelt_forecast.scoring.rounds import is_probability

FIELDS = frozenset({"question_id", "forecast"})
# A relation forecast lists at most the 20 first-level codes and their few hundred
# second-level ones (a few KB a line): 64 MiB is far more than any round of questions needs,
# and keeps a file that is no submission from being read whole into memory.
MAX_BYTES = 64 * 2**20
REFUSALS_SHOWN = 10


class SubmissionError(StageError):
    """A submission that cannot be accepted: nothing of it is kept."""


def check_submission(path: Path, kinds: Mapping[str, str]) -> dict[str, object]:
    """The forecasts of the submission at ``path``, question id -> forecast, for a round
    asking ``kinds`` (question id -> :data:`RELATION` or :data:`BINARY`); SubmissionError
    listing the lines refused, or saying why the file is no submission."""
    forecasts: dict[str, object] = {}
    first_line: dict[str, int] = {}  # each question answered -> the line that did first
    refused: list[str] = []
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise SubmissionError(f"{path}: {size:,} bytes, more than a submission's {MAX_BYTES:,}")
        for number, record in json_lines(path):
            why = _refusal(record, kinds, first_line)
            question = record.get("question_id") if isinstance(record, dict) else None
            if isinstance(question, str) and question in kinds:
                first_line.setdefault(question, number)
            if why:
                refused.append(f"line {number} {why}")
            else:
                forecasts[question] = record["forecast"]
    except OSError as exc:
        raise SubmissionError(f"cannot read {path}: {exc.strerror}") from None
    if refused:
        shown = "; ".join(refused[:REFUSALS_SHOWN]) + (
            "; ..." if len(refused) > REFUSALS_SHOWN else ""
        )
        raise SubmissionError(f"{path}: {len(refused)} of its lines refused, nothing kept: {shown}")
    if not forecasts:
        raise SubmissionError(
            f'{path}: no forecast: one {{"question_id": ..., "forecast": ...}} object per line'
        )
    return forecasts


def _refusal(record: object, kinds: Mapping[str, str], first_line: Mapping[str, int]) -> str:
    """Why a line is refused ("is ...", "answers ..."), or "" where it is accepted."""
    if isinstance(record, BadLine) or not isinstance(record, dict):
        return f"is {describe(record, 'question_id')}"
    if record.keys() != FIELDS:
        return 'is not an object of exactly "question_id" and "forecast"'
    question = record["question_id"]
    if not isinstance(question, str) or question not in kinds:
        return "names no question of this round"
    if question in first_line:
        return f"answers {question} again (line {first_line[question]} did first)"
    forecast = record["forecast"]
    if kinds[question] == BINARY:
        return _probability_refusal(forecast, question)
    if kinds[question] == RELATION:
        return _answer_refusal(forecast, question)
    raise ValueError(f"question {question} is of no kind a round asks: {kinds[question]!r}")


def _probability_refusal(forecast: object, question: str) -> str:
    # bool is an int to Python, but true is no probability
    if isinstance(forecast, bool) or not isinstance(forecast, int | float):
        return f"answers {question}, a binary question, with no number"
    if not is_probability(forecast):
        return f"answers {question} with a probability outside [0, 1]"
    return ""


def _answer_refusal(forecast: object, question: str) -> str:
    if not isinstance(forecast, dict):
        return f"answers {question}, a relation query, with no answer dict"
    book = codebook()
    for key, codes in forecast.items():
        if key not in book.binary:
            return f"answers {question} with a key that is not a CAMEO first-level code"
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            return f"answers {question} with a value that is not a list of codes"
        if any(c not in book.second_level or c[:2] != key for c in codes):
            return f"answers {question} with a code that is not one of {key}'s second level"
        if len(set(codes)) != len(codes):
            return f"answers {question} with a code listed twice under {key}"
    return ""
