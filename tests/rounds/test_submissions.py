"""A submission to a round is checked whole (:mod:`gdelt_forecast.rounds.submissions`): a
valid one gives its forecasts, and any refused line refuses the file, naming the line."""

import json

import pytest

from gdelt_forecast.contract.names import BINARY, RELATION
from gdelt_forecast.rounds import submissions
from gdelt_forecast.rounds.submissions import SubmissionError, check_submission

KINDS = {"r1": RELATION, "r2": RELATION, "b1": BINARY, "b2": BINARY}


def write(tmp_path, *lines, raw: bytes = b""):
    path = tmp_path / "forecasts.jsonl"
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    path.write_bytes(raw + text.encode())
    return path


def refused(tmp_path, *lines, raw: bytes = b"") -> str:
    with pytest.raises(SubmissionError) as caught:
        check_submission(write(tmp_path, *lines, raw=raw), KINDS)
    return str(caught.value)


def test_a_valid_submission_gives_its_forecasts(tmp_path):
    path = write(
        tmp_path,
        {"question_id": "r1", "forecast": {"04": ["042", "043"], "19": []}},
        "",  # blank lines are skipped
        {"question_id": "r2", "forecast": {}},  # nothing will happen
        {"question_id": "b1", "forecast": 0.3},
        {"question_id": "b2", "forecast": 1},
        raw="\ufeff".encode(),  # a byte-order mark an editor wrote first
    )
    assert check_submission(path, KINDS) == {
        "r1": {"04": ["042", "043"], "19": []},
        "r2": {},
        "b1": 0.3,
        "b2": 1,
    }


def test_a_question_left_out_is_no_refusal(tmp_path):
    path = write(tmp_path, {"question_id": "b1", "forecast": 0.5})
    assert check_submission(path, KINDS) == {"b1": 0.5}


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("not json", "line 2 is not JSON"),
        ("[1, 2]", "line 2 is a JSON array"),
        ({"question_id": "b1"}, 'line 2 is not an object of exactly "question_id" and "forecast"'),
        ({"question_id": "b1", "forecast": 0.5, "note": "x"}, "exactly"),
        ({"question_id": "zz", "forecast": 0.5}, "line 2 names no question of this round"),
        ({"question_id": 7, "forecast": 0.5}, "line 2 names no question of this round"),
        ({"question_id": "b1", "forecast": 1.5}, "line 2 answers b1 with a probability outside"),
        ({"question_id": "b1", "forecast": -0.01}, "outside [0, 1]"),
        ('{"question_id": "b1", "forecast": NaN}', "outside [0, 1]"),
        ('{"question_id": "b1", "forecast": 1e999}', "outside [0, 1]"),
        ({"question_id": "b1", "forecast": True}, "b1, a binary question, with no number"),
        ({"question_id": "b1", "forecast": "0.5"}, "with no number"),
        ({"question_id": "r1", "forecast": 0.5}, "r1, a relation query, with no answer dict"),
        ({"question_id": "r1", "forecast": {"99": []}}, "a key that is not a CAMEO first-level"),
        ({"question_id": "r1", "forecast": {"04": "042"}}, "a value that is not a list of codes"),
        ({"question_id": "r1", "forecast": {"04": [42]}}, "a value that is not a list of codes"),
        ({"question_id": "r1", "forecast": {"04": ["999"]}}, "not one of 04's second level"),
        ({"question_id": "r1", "forecast": {"04": ["190"]}}, "not one of 04's second level"),
        ({"question_id": "r1", "forecast": {"04": ["042", "042"]}}, "a code listed twice under 04"),
        ("[" * 100_000 + "]" * 100_000, "line 2 is JSON nested too deeply"),
    ],
)
def test_a_refused_line_refuses_the_file_naming_it(tmp_path, line, why):
    message = refused(tmp_path, {"question_id": "r2", "forecast": {}}, line)
    assert why in message
    assert "1 of its lines refused, nothing kept" in message


def test_a_line_not_utf8_is_refused(tmp_path):
    path = tmp_path / "forecasts.jsonl"
    path.write_bytes(b'{"question_id": "b1", "forecast": 0.5}\n{"question_id": "\xff"}\n')
    with pytest.raises(SubmissionError, match="line 2 is not UTF-8"):
        check_submission(path, KINDS)


def test_a_question_answered_twice_names_the_first_line(tmp_path):
    message = refused(
        tmp_path,
        {"question_id": "b1", "forecast": 2},  # refused itself, but it answered b1 first
        {"question_id": "r1", "forecast": {}},
        {"question_id": "b1", "forecast": 0.5},
    )
    assert "line 3 answers b1 again (line 1 did first)" in message
    assert message.count("line ") == 2 + 1  # two lines refused, one of them naming another


def test_many_refusals_show_the_first_ten(tmp_path):
    message = refused(tmp_path, *(["nonsense"] * 12))
    assert "12 of its lines refused" in message and message.endswith("; ...")
    assert "line 10 is not JSON" in message and "line 11" not in message


def test_a_file_without_forecasts_is_refused(tmp_path):
    with pytest.raises(SubmissionError, match="no forecast"):
        check_submission(write(tmp_path, ""), KINDS)
    with pytest.raises(SubmissionError, match="cannot read .*: No such file"):
        check_submission(tmp_path / "missing.jsonl", KINDS)
    with pytest.raises(SubmissionError, match="cannot read .*: Is a directory"):
        check_submission(tmp_path, KINDS)


def test_a_file_larger_than_a_submission_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr(submissions, "MAX_BYTES", 100)
    path = write(tmp_path, *({"question_id": "b1", "forecast": 0.5} for _ in range(3)))
    with pytest.raises(SubmissionError, match="more than a submission's 100"):
        check_submission(path, KINDS)
