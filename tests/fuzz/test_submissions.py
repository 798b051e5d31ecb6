"""A round's submissions (:func:`gdelt_forecast.rounds.submissions.check_submission`),
property-tested: any bytes per line (not UTF-8, nested past the parser's limit, NaN, huge
numbers, wrong types, repeated and unknown questions) give the forecasts or a
SubmissionError naming the lines refused, never another exception. A file is accepted only
when every line with text was, and what it keeps is a probability in [0, 1] or an answer dict
of CAMEO codes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gdelt_forecast.contract.names import BINARY, RELATION
from gdelt_forecast.rounds.entrants import forecast
from gdelt_forecast.rounds.submissions import SubmissionError, check_submission
from gdelt_forecast.scoring.mirai import codebook
from tests.fuzz.strategies import JSON, TEXT, dumped, lines_with_text, nested

pytestmark = pytest.mark.fuzz

KINDS = {"r1": RELATION, "r2": RELATION, "b1": BINARY, "b2": BINARY}
CODES = st.sampled_from(["04", "042", "043", "19", "190", "0211", "999", "", "4"])
FORECASTS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-2, 2),
    st.booleans(),
    st.dictionaries(CODES, st.one_of(st.lists(CODES, max_size=4), JSON), max_size=3),
    JSON,
)
LINES = st.one_of(
    st.builds(
        dumped,
        st.fixed_dictionaries(
            {"question_id": st.one_of(st.sampled_from(sorted(KINDS)), JSON)},
            optional={"forecast": FORECASTS, "note": TEXT},
        ),
        st.booleans(),
    ),
    st.sampled_from(
        [
            nested(100_000).encode(),
            b'{"question_id": "b1", "forecast": ' + nested(900).encode() + b"}",
            b'{"question_id": "r1", "forecast": {"04": ' + nested(900).encode() + b"}}",
            b'{"question_id": "b1", "forecast": 1e999}',
            b'{"question_id": "b1", "forecast": NaN}',
            b'{"question_id": "b1", "forecast": ' + b"1" * 5_000 + b"}",  # past int's digits
            b'{"question_id": "\\ud800", "forecast": 0.5}',
            b"\xff\xfe\x00",
            b"",
        ]
    ),
    st.builds(dumped, JSON, st.booleans()),
    st.binary(max_size=60),
)
BOOK = codebook()
FIRST = sorted(BOOK.binary)
ANSWERS = st.lists(
    st.sampled_from(FIRST).flatmap(
        lambda key: st.tuples(
            st.just(key),
            st.lists(st.sampled_from(sorted(c for c in BOOK.second_level if c[:2] == key)),
                     unique=True, max_size=3),
        )
    ),
    max_size=3,
).map(dict)  # fmt: skip
PROBABILITIES = st.one_of(st.floats(0, 1), st.sampled_from([0, 1]))
WELL_FORMED = st.one_of(
    st.fixed_dictionaries({"question_id": st.sampled_from(["r1", "r2"]), "forecast": ANSWERS}),
    st.fixed_dictionaries(
        {"question_id": st.sampled_from(["b1", "b2"]), "forecast": PROBABILITIES}
    ),
).map(lambda line: dumped(line, True))
FILES = st.lists(st.one_of(WELL_FORMED, WELL_FORMED, LINES), max_size=6).map(
    lambda lines: b"\n".join(lines) + b"\n"
)


def valid(forecast: object, kind: str) -> bool:
    if kind == BINARY:
        return (
            isinstance(forecast, int | float)
            and not isinstance(forecast, bool)
            and math.isfinite(forecast)
            and 0 <= forecast <= 1
        )
    book = codebook()
    return isinstance(forecast, dict) and all(
        key in book.binary and all(c in book.second_level and c[:2] == key for c in codes)
        for key, codes in forecast.items()
    )


@given(FILES)
@example(b'{"question_id": "b1", "forecast": 0.5}\n{"question_id": "b1", "forecast": 0.5}\n')
@example(b'{"question_id": "r1", "forecast": {"04": ["042"]}}\n\xef\xbb\xbf\n')
@example(b'{"question_id": "b1", "forecast": NaN}\n')
def test_any_file_gives_forecasts_or_names_the_lines_refused(tmp_path_factory, data):
    path: Path = tmp_path_factory.mktemp("submission") / "forecasts.jsonl"
    path.write_bytes(data)
    try:
        forecasts = check_submission(path, KINDS)
    except SubmissionError as exc:
        message = str(exc)
        assert "nothing kept" in message or "no forecast" in message
        assert message.isprintable()  # no line's content echoed
        return
    # accepted: every line with text was a forecast, once per question, each well-formed
    assert len(forecasts) == lines_with_text(data)
    assert all(valid(forecast, KINDS[q]) for q, forecast in forecasts.items())
    json.dumps(forecasts, allow_nan=False)  # what is kept can be written back as JSON


@given(answer=FORECASTS)
@example(answer={"11": ["110", "042", "999", 110], "04": "042", "XX": ["010"], 4: ["040"]})
def test_any_model_answer_becomes_a_forecast_the_round_accepts(answer, tmp_path_factory):
    """What a model answered, cleaned by ``rounds.entrants.forecast`` (``agent --round``'s
    and Direct IO's submissions), is always a relation forecast the check takes whole, and
    keeps only codes of the answer that sit under their own first-level key."""
    cleaned = forecast(answer)
    path = tmp_path_factory.mktemp("answer") / "f.jsonl"
    path.write_text(json.dumps({"question_id": "r1", "forecast": cleaned}) + "\n")
    assert check_submission(path, KINDS) == {"r1": cleaned}
    given_codes = answer if isinstance(answer, dict) else {}
    for first, codes in cleaned.items():
        assert first in given_codes and all(c[:2] == first for c in codes)
