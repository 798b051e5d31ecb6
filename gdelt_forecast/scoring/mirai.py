"""MIRAI's metrics, per query and macro-averaged, as MIRAI's ``agent_evaluation/eval.py``
computes them.

Per query, with the answer A and the cleaned prediction P (both dicts first-level -> second-level):

- first level: the set of A's keys against the set of P's valid keys (keys only: a key counts
  even with an empty or all-invalid list, as in MIRAI, and second-level prefixes never add one);
- second level: A's codes against P's valid codes listed under their own key;
- binary / quad: the deduplicated classes of those first-level codes;
- precision = tp / |P| (0 when P is empty), recall = tp / |A| (0 when A is empty),
  F1 = 2PR / (P + R) (0 when P + R = 0), all in percent;
- KL(binary|quad) = sum over every class c of p(c) ln(p(c) / q(c)), where p and q are the class
  frequencies of A's and P's first-level codes (one class per code, not deduplicated; 0 for
  every class of an empty side) plus 1e-10 each, not renormalised.

Every metric is then the mean over queries (macro average).

Where this differs from MIRAI's code (none of it changes a score of a well-formed prediction):
MIRAI drops invalid and mismatched codes silently; here they are counted (the issue asks for
warning counts). MIRAI calls the binary classes "mediation"/"conflict"; the reference table's
labels "cooperation"/"conflict" are used.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from gdelt_forecast.contract.names import LEVELS
from gdelt_forecast.reference import tables

EPSILON = 1e-10  # MIRAI's constant against log(0), added to both distributions


@dataclass(frozen=True)
class Codebook:
    binary: dict[str, str]  # first-level code -> binary class
    quad: dict[str, str]  # first-level code -> quad label
    second_level: frozenset[str]
    binary_labels: tuple[str, ...]  # every class, in code order: the KL sums over all of them
    quad_labels: tuple[str, ...]


@cache
def codebook() -> Codebook:
    """Valid codes and classes from the project's relations table (level 1 and level 2)."""
    rows = tables.relations().to_pylist()
    first = sorted((r for r in rows if r["level"] == 1), key=lambda r: r["code"])
    return Codebook(
        binary={r["code"]: r["binary_class"] for r in first},
        quad={r["code"]: r["quad_label"] for r in first},
        second_level=frozenset(r["code"] for r in rows if r["level"] == 2),
        binary_labels=tuple(dict.fromkeys(r["binary_class"] for r in first)),
        quad_labels=tuple(
            dict.fromkeys(r["quad_label"] for r in sorted(first, key=lambda r: r["quad_class"]))
        ),
    )


@dataclass(frozen=True)
class CleanPrediction:
    first_level: frozenset[str]
    second_level: frozenset[str]
    invalid_codes: int = 0  # keys not level 1, values not level 2 (e.g. "999", "0211")
    prefix_mismatch: int = 0  # valid second-level codes listed under another key


def clean_prediction(prediction: Mapping) -> CleanPrediction:
    """Keep MIRAI's valid part of a prediction dict and count what it drops."""
    book = codebook()
    first: set[str] = set()
    second: set[str] = set()
    invalid = mismatch = 0
    for raw_key, raw_values in prediction.items():
        key = _code(raw_key)
        if key in book.binary:
            first.add(key)
        else:
            invalid += 1
        for raw in _as_list(raw_values):
            code = _code(raw)
            if code not in book.second_level:
                invalid += 1
            elif code[:2] != key:
                mismatch += 1
            else:
                second.add(code)
    return CleanPrediction(frozenset(first), frozenset(second), invalid, mismatch)


def _code(value: object) -> str | None:
    # Strings only: 1 or 10 as numbers lost their leading zero, so they are not guessed at.
    return value.strip() if isinstance(value, str) else None


def _as_list(values: object) -> list:
    if values is None:
        return []
    if isinstance(values, str):  # {"01": "011"}: one code, not its characters
        return [values]
    if isinstance(values, list | tuple | set | frozenset):
        return list(values)
    return [values]


def answer_codes(answer: Mapping) -> tuple[frozenset[str], frozenset[str]]:
    """The answer's first-level (its keys) and second-level (its listed) codes.

    Unlike a prediction, a bad code in an answer is a bug in the test set, so it raises.
    """
    book = codebook()
    bad = [key for key in answer if key not in book.binary]
    bad += [
        code
        for key, codes in answer.items()
        for code in codes
        if code not in book.second_level or code[:2] != key
    ]
    if bad:
        raise ValueError(f"answer {dict(answer)} has invalid codes {bad}")
    return frozenset(answer), frozenset(code for codes in answer.values() for code in codes)


def prf(predicted: Iterable[str], gold: Iterable[str]) -> dict[str, float]:
    """MIRAI's per-query precision, recall and F1 in percent; 0 where a denominator is 0."""
    predicted, gold = set(predicted), set(gold)
    tp = len(predicted & gold)
    precision = tp / len(predicted) if predicted else 0.0
    recall = tp / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"precision": 100 * precision, "recall": 100 * recall, "f1": 100 * f1}


def kl_divergence(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]) -> float:
    """D(P||Q) in nats, P and Q the class frequencies of `gold` and `predicted` + EPSILON each.

    Not renormalised (as MIRAI): an empty answer against a non-empty prediction gives a tiny
    negative value, about -2.3e-9 per class the prediction holds.
    """
    total = 0.0
    for label in labels:
        p = (gold.count(label) / len(gold) if gold else 0.0) + EPSILON
        q = (predicted.count(label) / len(predicted) if predicted else 0.0) + EPSILON
        total += p * math.log(p / q)
    return total


def score_query(answer: Mapping, prediction: Mapping) -> dict:
    """Metrics of one query: a block per level (kl on binary and quad) and its drop counts."""
    book = codebook()
    gold_first, gold_second = answer_codes(answer)
    clean = clean_prediction(prediction)
    result: dict[str, Any] = {
        "first_level": prf(clean.first_level, gold_first),
        "second_level": prf(clean.second_level, gold_second),
    }
    for level, classes, labels in (
        ("binary", book.binary, book.binary_labels),
        ("quad", book.quad, book.quad_labels),
    ):
        # One class per first-level code: deduplicated for P/R/F1, counted for the KL.
        gold = [classes[c] for c in sorted(gold_first)]
        predicted = [classes[c] for c in sorted(clean.first_level)]
        result[level] = prf(predicted, gold) | {"kl": kl_divergence(gold, predicted, labels)}
    result["warnings"] = {
        "invalid_codes": clean.invalid_codes,
        "prefix_mismatch": clean.prefix_mismatch,
    }
    return result


def aggregate(scores: Sequence[dict]) -> dict:
    """Macro average of per-query scores: ``n`` and a block per level (zeros when n = 0). A
    metric of None (the KL of a live round's empty answer, :mod:`.rounds`) is left out of its
    mean."""
    block: dict[str, Any] = {"n": len(scores)}
    for level in LEVELS:
        metrics = ("precision", "recall", "f1") + (("kl",) if level in ("binary", "quad") else ())
        block[level] = {}
        for m in metrics:
            values = [s[level][m] for s in scores if s[level][m] is not None]
            block[level][m] = sum(values) / len(values) if values else 0.0
    return block
