"""The predictions readers of ``evaluate``, ``evaluate-tasks`` and ``evaluate-reasoning``
(and ``evaluate``'s queries reader), property-tested: any bytes per line (not UTF-8, lone
surrogate escapes, arrays nested past the parser's limit, huge numbers, NaN, wrong types,
repeated ids) give a result, bad lines counted with a reason, or the stage's own error,
which the command line prints as one line with exit code 1; never another exception. What
the readers keep is well-formed text."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gdelt_forecast.cli import main
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.reasoning.evaluate import ReasoningEvaluateError, evaluate_reasoning
from gdelt_forecast.scoring.answers import parse_prediction
from gdelt_forecast.scoring.evaluate import EvaluateError, evaluate, render
from gdelt_forecast.scoring.predictions import load_predictions
from gdelt_forecast.tasks.evaluate import TaskEvaluateError, evaluate_tasks
from tests.fuzz.strategies import (
    JSON,
    TEXT,
    assert_wellformed,
    dumped,
    lines_with_text,
    nested,
)

pytestmark = pytest.mark.fuzz


ANSWER = {"03": ["036"], "04": ["042"], "17": ["173"]}
QUERIES = [
    {"query_id": "q1", "answer": ANSWER, "horizon": 1},
    {"query_id": "q2", "answer": {"19": ["190"]}, "horizon": 7},
]
IDS = ("q1", "q2", "r1", "r2")
# Lines as agents and scripts write them (tests/scoring/test_mirai.py), to mutate.
REAL_LINES = (
    {"query_id": "q1", "prediction": {**ANSWER, "03": ["036", "999"]}},
    {"query_id": "q2", "prediction": 'Action: Final Answer: {"03": ["036"], "04": ["040"]}'},
    {"query_id": "q1", "prediction": '<answer>{"19": ["190", "195"], "01": ["042"]}</answer>'},
    {"id": "r1", "prediction": "I choose (B)"},
    {"id": "r2", "prediction": "The answer is A."},
)


def record(key: str, record_id, prediction) -> dict:
    return {key: record_id, "prediction": prediction}


HOSTILE_LINES = st.sampled_from(
    [
        nested(100_000).encode(),  # past the parser's recursion limit
        b'{"query_id": "q1", "prediction": ' + nested(900).encode() + b"}",  # just inside it
        b'{"id": "r1", "prediction": ' + nested(900).encode() + b"}",
        b'{"query_id": ' + nested(900).encode() + b"}",
        b'{"query_id": "\\ud800", "prediction": "\\udfff\\u0000\\u001b[2J"}',
        b'{"id": "r1", "prediction": "(A)\\ud800"}',
        b'{"query_id": ' + b"1" * 5_000 + b"}",  # past int's digit limit
        b'{"query_id": 1e999, "prediction": -1e999}',
        b'{"query_id": NaN, "prediction": Infinity}',
        b'{"id": NaN}',
        b'{"query_id": "q1", "prediction": {"03": [1e999, null, {"a": []}]}}',
        b"\xff\xfe\x00",
        b"\xef\xbb\xbf" + dumped(REAL_LINES[0], True),
        b"",
        b"   \x0c\x1c\x85 ",
    ]
)
LINES = st.one_of(
    HOSTILE_LINES,
    st.builds(dumped, st.sampled_from(REAL_LINES), st.booleans()),
    st.builds(
        dumped,
        st.builds(
            record,
            st.sampled_from(["query_id", "id"]),
            st.one_of(st.sampled_from(IDS), JSON),
            JSON,
        ),
        st.booleans(),
    ),
    st.builds(dumped, JSON, st.booleans()),
    TEXT.map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.binary(max_size=100),
)
FILES = st.lists(LINES, max_size=8).map(lambda lines: b"\n".join(lines) + b"\n")
CODES = st.sampled_from(["01", "010", "036", "0211", "999", ""])
QUERY_LINES = st.builds(
    dumped,
    st.fixed_dictionaries(
        {"query_id": st.one_of(st.sampled_from(IDS), JSON)},
        optional={
            "answer": st.one_of(
                st.just(ANSWER), st.dictionaries(CODES, st.lists(CODES)), JSON, TEXT
            ),
            "answer_list": st.one_of(st.lists(CODES), JSON),
            "horizon": st.one_of(st.integers(), JSON),
        },
    ),
    st.booleans(),
)
QUERY_FILES = st.lists(st.one_of(QUERY_LINES, LINES), max_size=5).map(
    lambda lines: b"\n".join(lines) + b"\n"
)


def written(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("readers")
    queries = b"".join(json.dumps(q).encode() + b"\n" for q in QUERIES)
    written(folder, "queries.jsonl", queries)
    pq.write_table(
        pa.table({"task": ["MCNC"] * 2, "split": ["test"] * 2, "id": ["r1", "r2"],
                  "answer": ["B", "A"]}),
        folder / "mcnc.parquet",
    )  # fmt: skip
    pq.write_table(
        pa.table({"task": ["I-CEC"] * 2, "id": ["r1", "r2"], "answer": ["B", "A"],
                  "candidates": [["event1", "event2"]] * 2, "relation_type": ["causal"] * 2,
                  "relation": ["Cause", "Before"]}),
        folder / "i-cec.parquet",
    )  # fmt: skip
    return folder


@pytest.fixture(scope="module")
def cfg(folder):
    return load_config(None, [], folder / "data")


EXAMPLES = [
    nested(100_000).encode() + b"\n",
    b'{"query_id": "\\ud800", "prediction": "\\udfff\\u0000"}\n{"id": "\\ud800"}\n',
    b'{"query_id": "q1", "prediction": ' + nested(950).encode() + b"}\n",
    b'{"id": "r1", "prediction": ' + nested(950).encode() + b"}\n",
]


@given(data=FILES, key=st.sampled_from(["query_id", "id"]))
@example(data=EXAMPLES[0], key="query_id")
@example(data=EXAMPLES[1], key="query_id")
@example(data=EXAMPLES[1], key="id")
@example(data=EXAMPLES[2], key="query_id")
@example(data=b"\xef\xbb\xbf\n", key="query_id")
def test_any_predictions_file_reads_to_counted_lines_or_a_value_error(folder, data, key):
    path = written(folder, "predictions.jsonl", data)
    try:
        predictions, counts = load_predictions(path, key)
    except ValueError as exc:
        assert "no line is a JSON object" in str(exc)
        return
    # Every line with text is a prediction, a repeat of an id, or a bad line with a reason.
    assert len(predictions) + counts["duplicate_ids"] + counts["bad_lines"] == lines_with_text(data)
    assert len(counts.bad) == min(counts["bad_lines"], 10)
    for record_id, prediction in predictions.items():
        assert_wellformed(record_id)
        assert_wellformed(prediction)


@given(data=FILES)
@example(data=EXAMPLES[0])
@example(data=EXAMPLES[1])
@example(data=EXAMPLES[2])
def test_evaluate_scores_any_predictions_or_says_why_not(folder, data):
    predictions = written(folder, "predictions.jsonl", data)
    try:
        result = evaluate(folder / "queries.jsonl", predictions)
    except EvaluateError:
        return
    assert result["n"] == len(QUERIES)
    json.dumps(result)  # the --json output
    render(result).encode("utf-8")


@given(data=QUERY_FILES)
@example(data=b'{"query_id": "q1"}\n5\n')
@example(data=b'{"query_id": "q1", "answer": {"01": 5}}\n')
@example(data=b'{"query_id": "q1", "answer": {"01": [5, ["010"]]}}\n')
@example(data=b'{"query_id": "q1", "answer": {"01": ["010"]}, "horizon": Infinity}\n')
@example(data=b'{"query_id": "q1", "answer": {"01": ["010"]}, "horizon": [1]}\n')
@example(data=b'{"query_id": "q1", "answer_list": [5, "010"]}\n')
@example(data=b'{"query_id": "q1", "answer_list": ["0"]}\n')
@example(data=b'{"query_id": "q1", "answer": "{\\"01\\": \\"010\\"}"}\n')
@example(data=nested(100_000).encode() + b"\n")
@example(data=b"\xff\n")
def test_evaluate_reads_any_queries_file_or_says_why_not(folder, data):
    queries = written(folder, "queries-fuzzed.jsonl", data)
    predictions = written(folder, "some.jsonl", dumped(REAL_LINES[0], True) + b"\n")
    try:
        result = evaluate(queries, predictions)
    except EvaluateError:
        return
    json.dumps(result)
    render(result).encode("utf-8")


@given(data=FILES)
@example(data=EXAMPLES[0])
@example(data=EXAMPLES[1])
@example(data=EXAMPLES[3])
def test_evaluate_tasks_and_reasoning_score_any_predictions_or_say_why_not(folder, cfg, data):
    predictions = written(folder, "predictions.jsonl", data)
    try:
        result = evaluate_tasks(cfg, "MCNC", folder / "mcnc.parquet", predictions)
    except TaskEvaluateError:
        result = None
    try:
        reasoning = evaluate_reasoning("I-CEC", folder / "i-cec.parquet", predictions)
    except ReasoningEvaluateError:
        reasoning = None
    for scored in filter(None, (result, reasoning)):
        assert scored["records"] == 2
        json.dumps(scored)


def test_a_prediction_of_unclosed_answer_tags_is_read_in_linear_time():
    # Each unclosed <answer> once had the tag search scan to the end: about 15 s here.
    for text in ("<answer>" * 20_000, "<answer>{}</answer>" + "<ANSWER>" * 20_000):
        started = time.monotonic()
        parse_prediction(text)
        assert time.monotonic() - started < 2


# --- the command line: one line and exit code 1, or a report; never a traceback -----------

HOSTILE_FILE = b"\n".join(
    [
        nested(100_000).encode(),
        b'{"query_id": "\\ud800\\u001b]0;owned\\u0007", "prediction": "\\udfff"}',
        b'{"id": "r1", "prediction": "(B) \\ud800\\u0000"}',
        b'{"query_id": "q1", "prediction": ' + nested(950).encode() + b"}",
        b'{"query_id": NaN, "prediction": Infinity}',
        b"\xff\xfe not UTF-8",
        b'{"query_id": ' + b"9" * 5_000 + b"}",
    ]
)


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    """Exit code, stdout, and stderr less the note of texts mended that ends every command."""
    code = main(args)  # an exception other than the stage's own would fail the test here
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    err = [line for line in captured.err.splitlines() if "texts mended where" not in line]
    return code, captured.out, "\n".join(err)


@pytest.mark.parametrize("json_output", [False, True])
def test_the_commands_read_a_hostile_predictions_file(folder, capsys, json_output):
    predictions = written(folder, "hostile.jsonl", HOSTILE_FILE + b"\n")
    data_root = ["--data-root", str(folder / "data")] + (["--json"] if json_output else [])
    for args in (
        ["evaluate", "--queries", str(folder / "queries.jsonl")],
        ["evaluate-tasks", "--task", "MCNC", "--tasks", str(folder / "mcnc.parquet")],
        ["evaluate-reasoning", "--task", "I-CEC", "--reasoning", str(folder / "i-cec.parquet")],
    ):
        code, out, _ = run_cli([*args, "--predictions", str(predictions), *data_root], capsys)
        assert code == 0
        out.encode("utf-8")
        if json_output:
            json.loads(out)


def test_the_commands_refuse_a_file_without_one_prediction_in_one_line(folder, capsys):
    only_bad = written(folder, "only-bad.jsonl", nested(100_000).encode() + b"\n\xff\n")
    for args in (
        ["evaluate", "--queries", str(folder / "queries.jsonl")],
        ["evaluate-tasks", "--task", "MCNC", "--tasks", str(folder / "mcnc.parquet")],
        ["evaluate-reasoning", "--task", "I-CEC", "--reasoning", str(folder / "i-cec.parquet")],
    ):
        args += ["--predictions", str(only_bad), "--data-root", str(folder / "data")]
        code, out, err = run_cli(args, capsys)
        assert (code, out) == (1, "")
        assert len(err.strip().splitlines()) == 1 and "line 1 is " in err


def test_the_command_refuses_a_hostile_queries_file_in_one_line(folder, capsys):
    queries = written(folder, "hostile-queries.jsonl", nested(100_000).encode() + b"\n")
    predictions = written(folder, "fine.jsonl", dumped(REAL_LINES[0], True) + b"\n")
    args = ["evaluate", "--queries", str(queries), "--predictions", str(predictions)]
    code, out, err = run_cli([*args, "--data-root", str(folder / "data")], capsys)
    assert (code, out) == (1, "")
    assert len(err.strip().splitlines()) == 1


@given(data=FILES)
@example(data=HOSTILE_FILE)
def test_the_evaluate_command_never_raises(folder, capsys, data):
    predictions = written(folder, "cli.jsonl", data)
    args = ["evaluate", "--queries", str(folder / "queries.jsonl")]
    args += ["--predictions", str(predictions), "--data-root", str(folder / "data")]
    code, out, err = run_cli(args, capsys)
    assert code in (0, 1)
    assert code == 0 or (out == "" and len(err.strip().splitlines()) == 1)
