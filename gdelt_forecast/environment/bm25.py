"""MIRAI's text search ranking, rank_bm25's ``BM25Okapi`` over ``title + " " + text`` split
on single spaces, computed from the release's ``news_terms`` instead of the texts.

Written by hand: rank_bm25 builds its index from tokenized texts held in memory, which is
the cost this avoids, and no library scores BM25 from stored term counts with rank_bm25's
own arithmetic. That arithmetic is followed step for step (the idf floor of ``epsilon`` times
the average idf, summed in the order the corpus first uses each term; the same numpy
expressions in the same order), so the scores are the same floats and ``np.argsort`` picks
the same articles, ties included.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

K1, B, EPSILON = 1.5, 0.75, 0.25  # BM25Okapi's defaults, which MIRAI keeps


def scores(
    lengths: np.ndarray,
    counts: dict[str, np.ndarray],
    query: list[str],
    vocabulary: Callable[[], np.ndarray],
) -> np.ndarray:
    """BM25Okapi's ``get_scores(query)`` for a corpus of ``len(lengths)`` documents.

    ``lengths``: each document's number of terms, in corpus order; ``counts``: for each term
    of the query that the corpus holds, its count in every document; ``vocabulary``: the
    document frequency of every term of the corpus, in the order the corpus first uses them,
    asked for only when a query term is in more than half of the documents (its idf is then
    floored at a share of the average idf over the whole vocabulary).
    """
    n = len(lengths)
    idf = {term: _idf(n, int(np.count_nonzero(c))) for term, c in counts.items()}
    if any(value < 0 for value in idf.values()):
        frequencies = vocabulary()
        distinct, index = np.unique(frequencies, return_inverse=True)
        per_frequency = np.array([_idf(n, int(f)) for f in distinct])
        # rank_bm25 adds the idfs one after the other: cumsum does too, pairwise sum() would not.
        average = np.cumsum(per_frequency[index])[-1] / len(frequencies)
        floor = EPSILON * float(average)
        idf = {term: floor if value < 0 else value for term, value in idf.items()}
    doc_len = lengths.astype(np.int64)
    avgdl = int(doc_len.sum()) / n
    absent = np.zeros(n, np.int64)
    score = np.zeros(n)
    for q in query:
        q_freq = counts.get(q, absent)
        score += (idf.get(q) or 0) * (
            q_freq * (K1 + 1) / (q_freq + K1 * (1 - B + B * doc_len / avgdl))
        )
    return score


def _idf(n: int, frequency: int) -> float:
    return math.log(n - frequency + 0.5) - math.log(frequency + 0.5)
