"""A live round's scoring (:mod:`gdelt_forecast.scoring.rounds`) on hand-computed cases: the
empty answer, Brier and log scores, the seeded interval, and the difficulty-adjusted Brier
score against a fit made by hand and against dense least squares."""

import math

import numpy as np
import pytest

from gdelt_forecast.scoring.mirai import aggregate, score_query
from gdelt_forecast.scoring.rounds import (
    ALWAYS_HALF,
    brier,
    difficulty_adjusted,
    interval,
    log_score,
    score_relation,
)

LEVELS = ("first_level", "second_level", "binary", "quad")


def prf(block: dict) -> tuple[float, float, float]:
    return block["precision"], block["recall"], block["f1"]


@pytest.mark.parametrize(
    ("forecast", "hit"),
    [
        ({}, 100.0),  # nothing forecast: right
        ({"99": ["999"]}, 100.0),  # only invalid codes, which MIRAI's cleaning drops
        ({"04": []}, 0.0),  # a first-level code, even without second-level ones
        ({"04": ["042"], "17": ["173"]}, 0.0),
    ],
)
def test_an_empty_answer_is_an_exact_match_at_every_level(forecast, hit):
    s = score_relation({}, forecast)
    assert all(prf(s[level]) == (hit, hit, hit) for level in LEVELS)
    assert s["binary"]["kl"] is None and s["quad"]["kl"] is None
    # MIRAI's own scores say nothing here: 0 whatever the forecast, and a KL of about 0
    mirai = score_query({}, forecast)
    assert prf(mirai["first_level"]) == (0.0, 0.0, 0.0)
    assert abs(mirai["binary"]["kl"]) < 1e-8


def test_a_non_empty_answer_scores_as_mirai_does():
    answer = {"03": ["036"], "04": ["042"]}
    for forecast in ({}, {"04": ["042"]}, {"04": ["042"], "19": ["190"]}):
        assert score_relation(answer, forecast) == score_query(answer, forecast)


def test_an_empty_answers_kl_is_left_out_of_the_mean():
    answer = {"03": ["036"], "04": ["042"]}
    full = score_relation(answer, {"03": ["036"]})  # binary: both cooperation, KL 0
    half = score_relation(answer, {"19": ["190"]})  # binary: cooperation against conflict
    empty = score_relation({}, {})
    mean = aggregate([full, half, empty])
    assert mean["n"] == 3
    assert mean["binary"]["kl"] == pytest.approx((full["binary"]["kl"] + half["binary"]["kl"]) / 2)
    # 100 (empty, right) with the two others' F1: 66.67 (1 of 2 codes) and 0
    assert mean["first_level"]["f1"] == pytest.approx((100 + 200 / 3 + 0) / 3)


@pytest.mark.parametrize(
    ("p", "outcome", "b", "log"),
    [
        (0.7, 1, 0.09, math.log(0.7)),
        (0.7, 0, 0.49, math.log(0.3)),
        (0.5, 1, 0.25, math.log(0.5)),
        (0.5, 0, 0.25, math.log(0.5)),
        (1.0, 1, 0.0, math.log(0.999)),  # clipped: a certain hit is not quite 0
        (0.0, 1, 1.0, math.log(0.001)),  # clipped: a certain miss is not minus infinity
        (1.0, 0, 1.0, math.log(0.001)),
    ],
)
def test_brier_and_log_scores(p, outcome, b, log):
    assert brier(p, outcome) == pytest.approx(b)
    assert log_score(p, outcome) == pytest.approx(log)


@pytest.mark.parametrize(("p", "outcome"), [(1.2, 1), (-0.1, 0), (math.nan, 1), (0.5, 2)])
def test_a_probability_outside_0_1_or_an_outcome_not_0_1_is_refused(p, outcome):
    with pytest.raises(ValueError, match="not"):
        brier(p, outcome)
    with pytest.raises(ValueError, match="not"):
        log_score(p, outcome)


def test_the_interval_is_seeded_and_holds_the_mean():
    values = [0.0, 1.0] * 50  # mean 0.5, standard error 0.05
    low, high = interval(values, seed=7)
    assert interval(values, seed=7) == (low, high)
    assert 0.38 < low < 0.42 and 0.58 < high < 0.62
    spread = np.random.default_rng(0).uniform(0, 1, 40).tolist()  # resampled means all differ
    assert interval(spread, seed=7) == interval(spread, seed=7) != interval(spread, seed=8)
    assert interval([0.3], seed=7) is None and interval([0.25] * 10, seed=7) is None


def test_difficulty_adjusted_brier_against_a_fit_by_hand():
    # Round 1 (q1, q2) is easy, each question's effect 0.1; round 2 (q3, q4) hard, 0.3. A
    # answers both rounds (forecaster effect 0), B round 1 only (0.1 worse than A), C round 2
    # only (0.05 worse). Every Brier score is exactly the sum of the two effects.
    effect = {"q1": 0.1, "q2": 0.1, "q3": 0.3, "q4": 0.3}
    skill = {"A": 0.0, "B": 0.1, "C": 0.05}
    asked = {"A": ["q1", "q2", "q3", "q4"], "B": ["q1", "q2"], "C": ["q3", "q4"]}
    rows = [(f, q, skill[f] + effect[q]) for f, qs in asked.items() for q in qs]
    rows += [(ALWAYS_HALF, q, 0.25) for q in effect]
    plain = {f: np.mean([b for g, _, b in rows if g == f]) for f in asked}
    assert plain == pytest.approx({"A": 0.2, "B": 0.2, "C": 0.35})  # B looks as good as A
    # Mean question effect 0.2, so always 0.5 sits at 0.05 before the shift and the shift is
    # 0.2: each forecaster's effect plus 0.2.
    assert difficulty_adjusted(rows) == pytest.approx(
        {"A": 0.2, "B": 0.3, "C": 0.25, ALWAYS_HALF: 0.25}, abs=1e-9
    )


def test_difficulty_adjusted_brier_is_the_plain_mean_where_all_answered_everything():
    rng = np.random.default_rng(3)
    rows = [(f, f"q{j}", float(rng.uniform(0, 1))) for f in "ABC" for j in range(6)]
    rows += [(ALWAYS_HALF, f"q{j}", 0.25) for j in range(6)]
    adjusted = difficulty_adjusted(rows)
    for f in "ABC":
        assert adjusted[f] == pytest.approx(np.mean([b for g, _, b in rows if g == f]), abs=1e-9)


def test_difficulty_adjusted_brier_agrees_with_dense_least_squares():
    rng = np.random.default_rng(11)
    forecasters, questions = ["A", "B", "C", "D"], [f"q{j}" for j in range(12)]
    rows = [
        (f, q, float(rng.uniform(0, 1)))
        for f in forecasters
        for q in questions
        if rng.uniform() < 0.6 or f == "A"  # A answers everything: the design is connected
    ]
    rows += [(ALWAYS_HALF, q, 0.25) for q in questions]
    fitted = [r for r in rows if r[0] != ALWAYS_HALF]
    # The same model with one question's effect pinned at 0 (full rank), solved densely.
    design = np.zeros((len(fitted), len(questions) - 1 + len(forecasters)))
    for i, (f, q, _) in enumerate(fitted):
        if questions.index(q) > 0:
            design[i, questions.index(q) - 1] = 1
        design[i, len(questions) - 1 + forecasters.index(f)] = 1
    solution = np.linalg.lstsq(design, [b for _, _, b in fitted], rcond=None)[0]
    effect = {q: (solution[i - 1] if i else 0.0) for i, q in enumerate(questions)}
    everyone = [*forecasters, ALWAYS_HALF]
    means = {f: np.mean([b - effect[q] for g, q, b in rows if g == f]) for f in everyone}
    expected = {f: m + 0.25 - means[ALWAYS_HALF] for f, m in means.items()}
    assert difficulty_adjusted(rows) == pytest.approx(expected, abs=1e-8)


def test_difficulty_adjusted_brier_refuses_what_it_cannot_fit_or_scale():
    with pytest.raises(ValueError, match="no fitted forecaster answered 1 questions: \\['q2'\\]"):
        difficulty_adjusted([("A", "q1", 0.1), *((ALWAYS_HALF, q, 0.25) for q in ("q1", "q2"))])
    with pytest.raises(ValueError, match="always-0.5 answered nothing"):
        difficulty_adjusted([("A", "q1", 0.1), ("B", "q1", 0.2)])
