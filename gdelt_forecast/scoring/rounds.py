"""How a live round's forecasts are scored: a relation query whose answer may be empty, a
binary question's probability, a mean with its interval, and the difficulty-adjusted Brier
score of a leaderboard across rounds.

- **A relation query** (MIRAI's ``(t, s, ?, o)``) with a non-empty answer scores by MIRAI's
  metrics (:func:`gdelt_forecast.scoring.mirai.score_query`). A live round asks every
  (pair, day) it chose, whatever happens, so its answer may be empty: the subject took no
  relation towards the object that day. MIRAI's metrics say nothing there (its precision
  and recall are 0 wherever a set is empty, and its KL of an empty answer is about 0
  whatever the forecast). An empty answer is scored as an exact match at every level:
  precision, recall and F1 are 100 when the forecast holds no valid first-level code, and 0
  when it holds any. Its KL divergences are None, since there is no class distribution to
  compare, and :func:`gdelt_forecast.scoring.mirai.aggregate` leaves them out of its means.
- **A binary question**: the probability ``p`` given to the outcome ``o`` (1 or 0) scores
  the Brier score ``(p - o)^2`` (0 best, 0.25 for always 0.5) and the log score ``ln p`` or
  ``ln(1 - p)``, with ``p`` clipped to [0.001, 0.999] (Metaculus's clip; 0 best, ln 0.5 for
  always 0.5). Without the clip, one certain miss would be minus infinity and would decide a
  mean alone.
- **A mean** comes with a seeded bootstrap 95% interval (scipy's percentile bootstrap).
- **The difficulty-adjusted Brier score** is ForecastBench's (``two_way_fixed_effects`` and
  ``rescale_difficulty_adjusted_brier`` in its ``src/leaderboard/main.py``). Each
  forecaster's Brier score on each question is modelled as a forecaster effect plus a
  question effect, fitted jointly by least squares over the forecasters that are not
  ``always 0.5``. A forecaster's adjusted score is the mean of its Brier scores less each
  question's effect. Every adjusted score is then shifted so that always 0.5 scores 0.25.
  Forecasters that answered different rounds then compare as if they had answered the same
  questions. Where all of them answered every question, the adjusted score is the plain
  mean.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from gdelt_forecast.scoring.mirai import clean_prediction, score_query

ALWAYS_HALF = "always-0.5"  # the reference forecaster the difficulty-adjusted scale is set by
LOG_CLIP = 0.001
CONFIDENCE = 0.95
RESAMPLES = 9_999


def score_relation(answer: Mapping, forecast: Mapping) -> dict:
    """A relation query's metrics, as :func:`score_query` gives them, an empty ``answer``
    scored as an exact match (the module's doc)."""
    scored = score_query(answer, forecast)
    if answer:
        return scored
    hit = 100.0 if not clean_prediction(forecast).first_level else 0.0
    for level in ("first_level", "second_level", "binary", "quad"):
        scored[level] |= {"precision": hit, "recall": hit, "f1": hit}
        if "kl" in scored[level]:
            scored[level]["kl"] = None
    return scored


def is_probability(value: object) -> bool:
    """A finite number in [0, 1] (true and false are no probabilities, though ints)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= 1
    )


def _probability(p: float, outcome: int) -> None:
    if not is_probability(p):
        raise ValueError(f"probability {p!r} is not in [0, 1]")
    if outcome not in (0, 1):
        raise ValueError(f"outcome {outcome!r} is not 0 or 1")


def brier(p: float, outcome: int) -> float:
    """The Brier score of ``p`` for ``outcome`` (1: it happened): 0 best, 1 worst."""
    _probability(p, outcome)
    return (p - outcome) ** 2


def log_score(p: float, outcome: int) -> float:
    """The log score of ``p`` for ``outcome``, ``p`` clipped to [LOG_CLIP, 1 - LOG_CLIP]: 0
    best, ln(0.001) worst."""
    _probability(p, outcome)
    clipped = min(max(p, LOG_CLIP), 1 - LOG_CLIP)
    return math.log(clipped if outcome else 1 - clipped)


def interval(values: Sequence[float], seed: int) -> tuple[float, float] | None:
    """The bootstrap 95% interval of the mean of ``values``, the same for the same seed; None
    for fewer than two values or values all alike (no spread to resample)."""
    # Here, not at the top: scipy.stats takes most of a second to import, and a round's
    # submit, commit and reveal read this module for its probabilities only.
    from scipy.stats import bootstrap

    data = np.asarray(values, dtype=float)
    if len(data) < 2 or np.all(data == data[0]):
        return None
    found = bootstrap(
        (data,), np.mean, confidence_level=CONFIDENCE, n_resamples=RESAMPLES,
        method="percentile", rng=np.random.default_rng(seed),
    )  # fmt: skip
    return float(found.confidence_interval.low), float(found.confidence_interval.high)


def difficulty_adjusted(
    rows: Iterable[tuple[str, str, float]], unfitted: Iterable[str] = (ALWAYS_HALF,)
) -> dict[str, float]:
    """Each forecaster's difficulty-adjusted Brier score from ``(forecaster, question,
    brier)`` rows (the module's doc). The forecasters in ``unfitted`` take no part in the fit,
    as ForecastBench leaves its dummy forecasters out. Every question needs a fitted
    forecaster, and ``ALWAYS_HALF`` must have answered, as it sets the scale."""
    from scipy import sparse  # as in interval()
    from scipy.sparse.linalg import lsqr

    rows = list(rows)
    skipped = set(unfitted)
    fitted = [r for r in rows if r[0] not in skipped]
    questions = sorted({q for _, q, _ in rows})
    unasked = sorted(set(questions) - {q for _, q, _ in fitted})
    if unasked:
        raise ValueError(f"no fitted forecaster answered {len(unasked)} questions: {unasked[:5]}")
    if not any(f == ALWAYS_HALF for f, _, _ in rows):
        raise ValueError(f"{ALWAYS_HALF} answered nothing, and its score sets the scale")
    forecasters = sorted({f for f, _, _ in fitted})
    column = {q: i for i, q in enumerate(questions)}
    column |= {f: len(questions) + i for i, f in enumerate(forecasters)}
    # brier = question effect + forecaster effect, one row per forecast; the design is
    # rank-deficient by one (a constant moves between the two), which the rescale cancels.
    n = len(fitted)
    design = sparse.csr_matrix(
        (
            np.ones(2 * n),
            (np.repeat(np.arange(n), 2), [column[k] for f, q, _ in fitted for k in (q, f)]),
        ),
        shape=(n, len(column)),
    )
    solution = lsqr(design, np.array([b for _, _, b in fitted]), atol=1e-12, btol=1e-12)[0]
    effect = {q: solution[column[q]] for q in questions}
    adjusted: dict[str, list[float]] = {}
    for forecaster, question, score in rows:
        adjusted.setdefault(forecaster, []).append(score - effect[question])
    means = {f: float(np.mean(v)) for f, v in adjusted.items()}
    shift = 0.25 - means[ALWAYS_HALF]
    return {f: m + shift for f, m in sorted(means.items())}
