"""The balanced subset: a seeded greedy draw that evens out dates, continents and
first-level CAMEO codes (MIRAI's 8_generate_test_subset.py, made deterministic).

Each pick draws ``attempts`` candidate queries with the seeded generator and keeps the one
that leaves the lowest balance score: the variance of the subset's counts per date, per
continent (both countries) and per first-level code (every code of the answer). MIRAI drew
its candidates with an unseeded ``df.sample``, so its subset could not be rebuilt.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import pvariance

DIMENSIONS = ("date", "region", "first_level")


@dataclass(frozen=True)
class Item:
    key: str
    date: str
    regions: tuple[str, ...]
    first_levels: tuple[str, ...]


def _counts(items: Sequence[Item]) -> dict[str, Counter]:
    counts = {dimension: Counter() for dimension in DIMENSIONS}
    for item in items:
        _add(counts, item, 1)
    return counts


def _add(counts: dict[str, Counter], item: Item, sign: int) -> None:
    counts["date"][item.date] += sign
    for region in item.regions:
        counts["region"][region] += sign
    for code in item.first_levels:
        counts["first_level"][code] += sign


def _score(counts: dict[str, Counter], universe: dict[str, list[str]]) -> float:
    # Every value of the full set counts, zeros included: a date left out is imbalance.
    return sum(
        pvariance([counts[d][value] for value in universe[d]]) if len(universe[d]) > 1 else 0.0
        for d in DIMENSIONS
    )


def balanced_subset(items: Sequence[Item], size: int, seed: int, attempts: int) -> list[str]:
    """Keys of up to ``size`` items; the same items, size and seed give the same keys."""
    rng = random.Random(seed)
    pool = sorted(items, key=lambda item: item.key)
    universe = {d: sorted(c) for d, c in _counts(pool).items()}
    chosen: list[str] = []
    counts = {dimension: Counter() for dimension in DIMENSIONS}
    while pool and len(chosen) < size:
        best, best_score = None, float("inf")
        for index in rng.sample(range(len(pool)), min(attempts, len(pool))):
            _add(counts, pool[index], 1)
            score = _score(counts, universe)
            _add(counts, pool[index], -1)
            if score < best_score:
                best, best_score = index, score
        _add(counts, pool[best], 1)
        chosen.append(pool.pop(best).key)
    return chosen


def balance(items: Sequence[Item]) -> dict[str, dict]:
    """Per dimension: the count per value and the coefficient of variation of the counts."""
    report = {}
    for dimension, counter in _counts(items).items():
        values = list(counter.values())
        mean = sum(values) / len(values) if values else 0.0
        cv = (pvariance(values) ** 0.5 / mean) if len(values) > 1 and mean else 0.0
        report[dimension] = {
            "values": len(values),
            "cv": round(cv, 4),
            "counts": dict(sorted(counter.items())),
        }
    return report
