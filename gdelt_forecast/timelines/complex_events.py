"""Complex events: the month's kept documents grouped into developing stories.

GDELT gives the structure first: a document belongs to the country pair (unordered) of most
of the quads it stands behind, and only documents of one pair can share a story. Within a
pair, two documents are linked when they are at most ``timelines.max_gap_days`` apart and
the TF-IDF cosine similarity of their titles and leads reaches ``timelines.min_similarity``;
a story is a connected group of links (single linkage), so it can run for weeks through
documents days apart. TF-IDF rather than the embedding model: it is exact arithmetic on
word counts, so the same corpus gives the same groups on any machine (a float threshold on
neural embeddings can flip between CPUs), it needs no model load, and within one country
pair and a few days, shared names and words are what tell two stories apart.

A story becomes a complex event when it has ``timelines.min_documents`` documents and at
least one of them is dated in the month; the documents before the month (up to
``timelines.history_days``) are its history. It keeps its latest
``timelines.max_documents`` documents. Its id hashes its document ids, so the same story
gets the same id in every run; its title is the title of its most central document.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from gdelt_forecast.ground.config import TimelinesConfig

_BLOCK = 256  # documents whose similarities are computed at once


@dataclass(frozen=True)
class ComplexEvent:
    complex_event_id: str
    title: str
    country_a: str
    country_b: str
    first_date: date
    last_date: date
    documents: list[dict]  # the document rows, in date order


def group(docs: list[dict], first: date, cfg: TimelinesConfig) -> list[ComplexEvent]:
    """Complex events of ``docs`` (rows of ``timelines/documents.sql``, in its order) whose
    stories reach the month starting ``first``; in order of first date, then id."""
    if not docs:
        return []
    texts = [f"{d['title'] or ''}\n{d['lead'] or ''}" for d in docs]
    # Imported here: scikit-learn takes 2 s to load, and the stages that read timelines
    # import this module for ComplexEvent alone.
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectors = TfidfVectorizer(sublinear_tf=True, stop_words="english").fit_transform(texts)
    events = []
    pair_of = [(d["country_a"], d["country_b"]) for d in docs]
    start = 0
    while start < len(docs):  # the rows come sorted by pair: one block per pair
        end = start
        while end < len(docs) and pair_of[end] == pair_of[start]:
            end += 1
        events += _stories(docs[start:end], vectors[start:end], first, cfg)
        start = end
    return sorted(events, key=lambda e: (e.first_date, e.complex_event_id))


def _stories(docs: list[dict], vectors, first: date, cfg: TimelinesConfig) -> list[ComplexEvent]:
    if len(docs) < cfg.min_documents:
        return []  # most pairs have a single document: no story to look for
    _, labels = connected_components(_links(vectors, docs, cfg), directed=False)
    stories = []
    for label in sorted(set(labels)):
        members = [i for i in range(len(docs)) if labels[i] == label]
        if len(members) < cfg.min_documents or all(docs[i]["date"] < first for i in members):
            continue
        members = members[-cfg.max_documents :]
        # The most central document (highest summed similarity) names the story.
        similarity = (vectors[members] @ vectors[members].T).toarray()
        central = max(range(len(members)), key=lambda k: (similarity[k].sum(), -members[k]))
        chosen = [docs[i] for i in members]
        ids = "\n".join(d["doc_id"] for d in chosen)
        stories.append(
            ComplexEvent(
                complex_event_id="ce-" + hashlib.sha256(ids.encode()).hexdigest()[:16],
                title=docs[members[central]]["title"] or "",
                country_a=chosen[0]["country_a"],
                country_b=chosen[0]["country_b"],
                first_date=chosen[0]["date"],
                last_date=chosen[-1]["date"],
                documents=chosen,
            )
        )
    return stories


def _links(vectors, docs: list[dict], cfg: TimelinesConfig) -> csr_matrix:
    """The pair's links as a sparse matrix, computed ``_BLOCK`` documents at a time against
    the documents within ``max_gap_days`` of them (``docs`` are in date order): a dense
    similarity matrix of a month's busiest pair (tens of thousands of documents) takes
    gigabytes. Each similarity is the same dot product of the same two rows as in the full
    product, so the links do not depend on the block size."""
    days = np.array([d["date"].toordinal() for d in docs])
    if np.any(np.diff(days) < 0):
        raise ValueError("documents of a pair must come in date order")
    rows, cols = [], []
    for start in range(0, len(docs), _BLOCK):
        end = min(start + _BLOCK, len(docs))
        lo = int(np.searchsorted(days, days[start] - cfg.max_gap_days, side="left"))
        hi = int(np.searchsorted(days, days[end - 1] + cfg.max_gap_days, side="right"))
        similarity = (vectors[start:end] @ vectors[lo:hi].T).toarray()
        near = np.abs(days[start:end, None] - days[None, lo:hi]) <= cfg.max_gap_days
        i, j = np.nonzero((similarity >= cfg.min_similarity) & near)
        rows.append(i + start)
        cols.append(j + lo)
    edges = (np.concatenate(rows), np.concatenate(cols))
    return csr_matrix((np.ones(len(edges[0]), dtype=bool), edges), shape=(len(docs), len(docs)))
