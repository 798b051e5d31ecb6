"""MIRAI's metrics, per query (:mod:`gdelt_forecast.scoring.mirai`) and over a predictions
file (``evaluate``), against hand-computed precision, recall, F1 and KL divergence.

Conventions in the comments: P/R/F1 in percent; e = 1e-10 (MIRAI's epsilon, added to every
class frequency without renormalising); ln is the natural log; L = ln((1 + e) / e), the KL of a
one-class answer against an empty prediction, about 23.0259.
"""

import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gdelt_forecast.cli import main
from gdelt_forecast.scoring.evaluate import EvaluateError, evaluate, render
from gdelt_forecast.scoring.mirai import clean_prediction, codebook, kl_divergence, score_query

E = 1e-10
L = (1 + E) * math.log((1 + E) / E)
ANSWER = {"03": ["036"], "04": ["042"], "17": ["173"]}  # MIRAI's website example, AUS -> CHN
THIRD = 100 / 3


def prf(block: dict) -> tuple[float, float, float]:
    return block["precision"], block["recall"], block["f1"]


def close(actual: tuple | float, expected: tuple | float) -> bool:
    return actual == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_classes_follow_mirai_binary_and_quad_split():
    book = codebook()
    codes = [f"{i:02d}" for i in range(1, 21)]
    assert [book.binary[c] for c in codes] == ["cooperation"] * 8 + ["conflict"] * 12
    assert [book.quad[c] for c in codes] == (
        ["verbal cooperation"] * 4
        + ["material cooperation"] * 4
        + ["verbal conflict"] * 8
        + ["material conflict"] * 4
    )
    assert book.quad_labels == (
        "verbal cooperation",
        "material cooperation",
        "verbal conflict",
        "material conflict",
    )
    assert {"010", "106", "155", "176"} <= book.second_level
    assert not {"01", "0211", "999"} & book.second_level


def test_exact_match_scores_100_and_kl_0():
    s = score_query(ANSWER, {"17": ["173"], "03": ["036"], "04": ["042"]})
    for level in ("first_level", "second_level", "binary", "quad"):
        assert prf(s[level]) == (100.0, 100.0, 100.0)
    # P and Q are the same distribution, so every term is p ln(1) = 0.
    assert s["binary"]["kl"] == 0.0 and s["quad"]["kl"] == 0.0
    assert s["warnings"] == {"invalid_codes": 0, "prefix_mismatch": 0}


def test_partial_overlap():
    s = score_query(ANSWER, {"03": ["036", "031"], "04": ["040"]})
    # first level: {03, 04} vs {03, 04, 17}: tp 2 -> P 2/2 = 100, R 2/3, F1 2*1*(2/3)/(5/3) = 80
    assert close(prf(s["first_level"]), (100.0, 2 * THIRD, 80.0))
    # second level: {036, 031, 040} vs {036, 042, 173}: tp 1 -> P = R = F1 = 1/3
    assert close(prf(s["second_level"]), (THIRD, THIRD, THIRD))
    # binary: {coop} vs {coop, conflict}: P 100, R 50, F1 2*1*.5/1.5 = 66.67; quad likewise
    # with {verbal coop} vs {verbal coop, material conflict}.
    assert close(prf(s["binary"]), (100.0, 50.0, 2 * THIRD))
    assert close(prf(s["quad"]), (100.0, 50.0, 2 * THIRD))
    # KL counts one class per first-level code: answer [coop, coop, conflict] -> (2/3, 1/3),
    # prediction [coop, coop] -> (1, 0):
    # (2/3+e) ln((2/3+e)/(1+e)) + (1/3+e) ln((1/3+e)/e) = -0.2703 + 7.3091 = 7.0388.
    kl = (2 / 3 + E) * math.log((2 / 3 + E) / (1 + E)) + (1 / 3 + E) * math.log((1 / 3 + E) / E)
    assert close(s["binary"]["kl"], kl) and kl == pytest.approx(7.038769, abs=1e-6)
    # quad adds two classes both sides lack: e ln(e/e) = 0 each, so the same value.
    assert close(s["quad"]["kl"], kl)


def test_binary_and_quad_differ_when_a_class_splits():
    s = score_query({"01": ["010"], "05": ["051"]}, {"01": ["010"]})
    # binary: 01 and 05 are both cooperation: {coop} vs {coop} -> 100; KL (1, 0) vs (1, 0) -> 0
    assert prf(s["binary"]) == (100.0, 100.0, 100.0) and s["binary"]["kl"] == 0.0
    # quad: {verbal coop} vs {verbal coop, material coop}: P 100, R 50, F1 66.67;
    # KL (1/2, 1/2, 0, 0) vs (1, 0, 0, 0):
    # (1/2+e) ln((1/2+e)/(1+e)) + (1/2+e) ln((1/2+e)/e) = -0.3466 + 11.1664 = 10.8198
    assert close(prf(s["quad"]), (100.0, 50.0, 2 * THIRD))
    kl = (0.5 + E) * math.log((0.5 + E) / (1 + E)) + (0.5 + E) * math.log((0.5 + E) / E)
    assert close(s["quad"]["kl"], kl) and kl == pytest.approx(10.819778, abs=1e-6)


def test_empty_prediction_scores_0_and_kl_against_epsilon():
    s = score_query(ANSWER, {})
    for level in ("first_level", "second_level", "binary", "quad"):
        assert prf(s[level]) == (0.0, 0.0, 0.0)  # MIRAI: P = 0 when nothing is predicted
    # Q is e everywhere: (2/3+e) ln((2/3+e)/e) + (1/3+e) ln((1/3+e)/e) = 15.0803 + 7.3091 = 22.3893
    kl = (2 / 3 + E) * math.log((2 / 3 + E) / E) + (1 / 3 + E) * math.log((1 / 3 + E) / E)
    assert close(s["binary"]["kl"], kl) and kl == pytest.approx(22.389337, abs=1e-6)
    assert close(s["quad"]["kl"], kl)


def test_empty_answer_scores_0_and_kl_slightly_negative():
    s = score_query({}, {"01": ["010"]})
    # tp 0: P = 0/1 = 0; R = 0 by MIRAI's rule for an empty answer; F1 = 0.
    for level in ("first_level", "second_level", "binary", "quad"):
        assert prf(s[level]) == (0.0, 0.0, 0.0)
    # P = (e, e), Q = (1+e, e): e ln(e/(1+e)) + e ln(e/e) = -2.3e-9 (no renormalisation).
    assert close(s["binary"]["kl"], E * math.log(E / (1 + E)))
    assert close(s["quad"]["kl"], E * math.log(E / (1 + E)))
    empty = score_query({}, {})
    assert prf(empty["first_level"]) == (0.0, 0.0, 0.0) and empty["binary"]["kl"] == 0.0


def test_invalid_codes_are_dropped_and_counted():
    # "999" is no second-level code, "99" no first-level one (its "991" neither), "0211" is
    # level 3; what is left is the exact answer.
    prediction = {"03": ["036", "999", "0211"], "04": ["042"], "17": ["173"], "99": ["991"]}
    s = score_query(ANSWER, prediction)
    assert s["warnings"] == {"invalid_codes": 4, "prefix_mismatch": 0}
    assert prf(s["second_level"]) == (100.0, 100.0, 100.0)
    assert prf(s["first_level"]) == (100.0, 100.0, 100.0)


def test_prefix_mismatch_is_dropped_and_adds_no_first_level_code():
    s = score_query({"01": ["010"], "04": ["042"]}, {"01": ["042"]})
    assert s["warnings"] == {"invalid_codes": 0, "prefix_mismatch": 1}
    # first level from the keys only (MIRAI): {01} vs {01, 04}: P 100, R 50, F1 66.67;
    # the dropped "042" does not bring in "04".
    assert close(prf(s["first_level"]), (100.0, 50.0, 2 * THIRD))
    assert prf(s["second_level"]) == (0.0, 0.0, 0.0)  # nothing left to predict with
    # binary: {coop} vs {coop}; KL: [coop] (1, 0) vs [coop, coop] (1, 0) -> 0
    assert prf(s["binary"]) == (100.0, 100.0, 100.0) and s["binary"]["kl"] == 0.0


def test_a_key_counts_at_first_level_even_with_no_valid_children():
    s = score_query({"04": ["042"]}, {"04": [], "17": "173"})  # a bare string is one code
    # {04, 17} vs {04}: P 50, R 100, F1 66.67; second level {173} vs {042}: 0.
    assert close(prf(s["first_level"]), (50.0, 100.0, 2 * THIRD))
    assert prf(s["second_level"]) == (0.0, 0.0, 0.0)
    assert clean_prediction({"04": [], "17": "173"}).second_level == {"173"}


def test_kl_uses_every_class_and_natural_log():
    labels = ("a", "b", "c")
    # P = (1/2+e, 1/2+e, e), Q = (1+e, e, e):
    # (1/2+e) ln((1/2+e)/(1+e)) + (1/2+e) ln((1/2+e)/e) + e ln(1) = 10.8198
    expected = (0.5 + E) * math.log((0.5 + E) / (1 + E)) + (0.5 + E) * math.log((0.5 + E) / E)
    assert close(kl_divergence(["a", "b"], ["a"], labels), expected)
    assert close(expected, 0.5 * math.log(0.5) + 0.5 * math.log(0.5e10))
    assert close(kl_divergence(["a"], [], labels), L)


def test_unknown_answer_code_is_an_error():
    with pytest.raises(ValueError, match="999"):
        score_query({"01": ["999"]}, {})


# --- files: macro averages, warnings, breakdowns ----------------------------------------------

QUERIES = [
    {"query_id": "q1", "answer": ANSWER, "horizon": 1},
    {"query_id": "q2", "answer": ANSWER, "horizon": 1},
    {"query_id": "q3", "answer": {"19": ["190"]}, "horizon": 7},
    {"query_id": "q4", "answer": {"01": ["010"]}, "horizon": 7},
    {"query_id": "q5", "answer": {"05": ["051"]}, "horizon": 7},  # no prediction
]
PREDICTION_LINES = [
    json.dumps({"query_id": "q1", "prediction": {}}),  # replaced by the later q1 line
    # exact, plus an invalid "999"
    json.dumps({"query_id": "q1", "prediction": {**ANSWER, "03": ["036", "999"]}}),
    json.dumps(
        {
            "query_id": "q2",
            "prediction": 'Action: Final Answer: {"03": ["036", "031"], "04": ["040"]}',
        }
    ),
    # "042" under "01" is a prefix mismatch; left: {19: [190, 195], 01: []}
    json.dumps(
        {"query_id": "q3", "prediction": '<answer>{"19": ["190", "195"], "01": ["042"]}</answer>'}
    ),
    json.dumps({"query_id": "q4", "prediction": "I cannot forecast this."}),
    json.dumps({"query_id": "zz", "prediction": {"01": ["010"]}}),  # unknown id
    "not json",
    "",
]

# Per query: (first P, R, F1), (second P, R, F1), (binary P, R, F1), binary KL
#   q1 exact:   (100, 100, 100)      (100, 100, 100)        (100, 100, 100)   0
#   q2 partial: (100, 66.67, 80)     (33.33, 33.33, 33.33)  (100, 50, 66.67)  K2 = 7.0388
#   q3:         {19, 01} vs {19}: (50, 100, 66.67); {190, 195} vs {190}: (50, 100, 66.67);
#               {conflict, coop} vs {conflict}: (50, 100, 66.67);
#               KL [conflict] (0, 1) vs [coop, conflict] (1/2, 1/2):
#               e ln(e/(1/2+e)) + (1+e) ln((1+e)/(1/2+e)) = K3 ~ ln 2
#   q4 unparseable, q5 missing: all 0, KL L each.
K2 = (2 / 3 + E) * math.log((2 / 3 + E) / (1 + E)) + (1 / 3 + E) * math.log((1 / 3 + E) / E)
K3 = E * math.log(E / (0.5 + E)) + (1 + E) * math.log((1 + E) / (0.5 + E))


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def predictions(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "predictions.jsonl", PREDICTION_LINES)


@pytest.fixture
def queries_jsonl(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "queries.jsonl", [json.dumps(q) for q in QUERIES])


def test_evaluate_macro_averages_over_queries(queries_jsonl: Path, predictions: Path):
    r = evaluate(queries_jsonl, predictions)
    assert r["n"] == 5
    # first level: P (100+100+50+0+0)/5 = 50, R (100+66.67+100)/5 = 53.33,
    # F1 (100+80+66.67)/5 = 49.33 (not 2PR/(P+R) of the averages: 51.61)
    assert close(prf(r["first_level"]), (50.0, 160 / 3, 148 / 3))
    # second level: P (100+33.33+50)/5 = 36.67, R (100+33.33+100)/5 = 46.67,
    # F1 (100+33.33+66.67)/5 = 40
    assert close(prf(r["second_level"]), (110 / 3, 140 / 3, 40.0))
    # binary: P (100+100+50)/5 = 50, R (100+50+100)/5 = 50, F1 (100+66.67+66.67)/5 = 46.67
    assert close(prf(r["binary"]), (50.0, 50.0, 140 / 3))
    assert close(r["binary"]["kl"], (0 + K2 + K3 + L + L) / 5)
    # quad: the same sets one level finer (verbal coop / material conflict), same numbers;
    # the q3 KL is [material conflict] vs [verbal coop, material conflict], again K3.
    assert close(prf(r["quad"]), (50.0, 50.0, 140 / 3))
    assert close(r["quad"]["kl"], (0 + K2 + K3 + L + L) / 5)
    assert r["warnings"] == {
        "invalid_codes": 1,  # q1's "999"
        "prefix_mismatch": 1,  # q3's "042" under "01"
        "unparseable": 1,  # q4
        "missing": 1,  # q5
        "unknown_ids": 1,  # zz
        "bad_lines": 1,  # "not json"
        "duplicate_ids": 1,  # q1 twice
    }
    json.dumps(r)  # the --json output


def test_evaluate_breakdowns(queries_jsonl: Path, predictions: Path):
    r = evaluate(queries_jsonl, predictions)
    h1, h7 = r["by_horizon"]["1"], r["by_horizon"]["7"]
    assert list(r["by_horizon"]) == ["1", "7"]
    # horizon 1: q1, q2: first-level F1 (100+80)/2 = 90; horizon 7: q3-q5: 66.67/3 = 22.22
    assert (h1["n"], h7["n"]) == (2, 3)
    assert close(h1["first_level"]["f1"], 90.0) and close(h7["first_level"]["f1"], 200 / 9)
    assert close(h7["binary"]["kl"], (K3 + 2 * L) / 3)
    # by the quad classes in each answer: q1, q2 in verbal coop (03, 04) and material conflict
    # (17); q3 material conflict; q4 verbal coop; q5 material coop; none has verbal conflict.
    quads = r["by_quad_class"]
    assert list(quads) == ["verbal cooperation", "material cooperation", "material conflict"]
    assert [quads[k]["n"] for k in quads] == [3, 1, 3]
    assert close(quads["verbal cooperation"]["first_level"]["f1"], (100 + 80 + 0) / 3)
    assert close(quads["material conflict"]["first_level"]["f1"], (100 + 80 + 200 / 3) / 3)
    assert quads["material cooperation"]["first_level"]["f1"] == 0.0


def test_parquet_queries_score_like_jsonl(tmp_path: Path, queries_jsonl: Path, predictions: Path):
    # As the builder writes them: answer as a JSON string, plus answer_list and other columns.
    table = pa.table(
        {
            "query_id": [q["query_id"] for q in QUERIES],
            "horizon": pa.array([q["horizon"] for q in QUERIES], pa.int32()),
            "answer": [json.dumps(q["answer"]) for q in QUERIES],
            "answer_list": [sorted(c for v in q["answer"].values() for c in v) for q in QUERIES],
            "prompt": ["..."] * len(QUERIES),
        }
    )
    pq.write_table(table, tmp_path / "queries.parquet")
    from_parquet = evaluate(tmp_path / "queries.parquet", predictions)
    assert from_parquet == evaluate(queries_jsonl, predictions)
    # Without the dict, the answer is grouped from answer_list by prefix.
    pq.write_table(table.drop_columns(["answer"]), tmp_path / "list_only.parquet")
    assert evaluate(tmp_path / "list_only.parquet", predictions) == from_parquet


def test_no_predictions_at_all(queries_jsonl: Path, tmp_path: Path):
    r = evaluate(queries_jsonl, write_jsonl(tmp_path / "none.jsonl", []))
    assert r["warnings"]["missing"] == 5
    assert prf(r["second_level"]) == (0.0, 0.0, 0.0)
    # KL of each query against an empty prediction: q1, q2 (2/3, 1/3) -> 22.3893; q3-q5 L.
    empty = (2 / 3 + E) * math.log((2 / 3 + E) / E) + (1 / 3 + E) * math.log((1 / 3 + E) / E)
    assert close(r["binary"]["kl"], (2 * empty + 3 * L) / 5)


@pytest.mark.parametrize(
    ("text", "first_bad"),
    [
        (json.dumps([{"query_id": "q1", "prediction": {}}]), "line 1 is a JSON array"),
        (json.dumps([{"query_id": "q1", "prediction": {}}], indent=2), "line 1 is not JSON"),
        ('\n"q1"\n', "line 2 is a JSON string"),
        ('Final Answer: {"03": ["036"]}\n', "line 1 is not JSON"),
        ('{"id": "q1", "prediction": {}}\n', "line 1 is an object without a query_id"),
    ],
)
def test_a_file_without_one_prediction_line_is_an_error(
    queries_jsonl: Path, tmp_path: Path, text: str, first_bad: str
):
    path = tmp_path / "predictions.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(EvaluateError) as error:
        evaluate(queries_jsonl, path)
    assert str(error.value) == (
        f"{path}: no line is a JSON object with a query_id ({first_bad}): predictions are "
        'JSON Lines, one {"query_id": ..., "prediction": ...} object per line'
    )


def test_the_command_exits_1_on_a_predictions_file_that_is_not_json_lines(
    queries_jsonl: Path, tmp_path: Path, capsys
):
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps([{"query_id": "q1", "prediction": {}}], indent=2))
    assert main(["evaluate", "--queries", str(queries_jsonl), "--predictions", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"gdelt-forecast evaluate: {path}: no line is a JSON object")
    assert len(captured.err.strip().splitlines()) == 1


def test_render(queries_jsonl: Path, predictions: Path):
    text = render(evaluate(queries_jsonl, predictions))
    assert "over 5 queries" in text
    assert "first_level" in text and "49.33" in text
    assert "horizon (days)" in text and "answer quad class" in text
    assert "material conflict" in text
    assert "unparseable=1" in text and "missing=1" in text


def test_a_line_that_is_not_utf8_is_a_bad_line(queries_jsonl: Path, predictions: Path):
    good = evaluate(queries_jsonl, predictions)
    broken = predictions.with_name("broken.jsonl")
    broken.write_bytes(predictions.read_bytes() + b'{"query_id": "q9", "prediction": "\xff"}\n')
    r = evaluate(queries_jsonl, broken)
    assert r["warnings"]["bad_lines"] == good["warnings"]["bad_lines"] + 1
    assert r["first_level"] == good["first_level"]  # every other line still scores
    lines = len(broken.read_bytes().splitlines())
    reason = f"line {lines} is not UTF-8 (invalid start byte at byte 34)"
    assert r["bad_lines_first"][-1] == reason and reason in render(r)
    only = predictions.with_name("only.jsonl")
    only.write_bytes(b"\xff\xfe not a predictions file\n")
    with pytest.raises(
        EvaluateError, match=r"line 1 is not UTF-8 \(invalid start byte at byte 0\)"
    ):
        evaluate(queries_jsonl, only)
