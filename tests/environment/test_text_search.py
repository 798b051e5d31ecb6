"""Text search and keywords from the release's ``news_terms``: the same floats as rank_bm25's
BM25Okapi (the ranking MIRAI builds per call from the texts), and the same keyword matches
as a search of the texts."""

from __future__ import annotations

import random
from collections import Counter

import duckdb
import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from gdelt_forecast.environment import Date, ISOCode, open_environment
from gdelt_forecast.environment.bm25 import scores


def _corpus(seed: int, docs: int) -> list[list[str]]:
    """Documents over a Zipf-like vocabulary: a few words in nearly every document (their
    idf is negative, so the average over the vocabulary counts), empty terms from double
    spaces, and a long tail of rare words."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(3000)]
    weights = [1 / (i + 1) for i in range(len(words))]
    corpus = []
    for _ in range(docs):
        text = " ".join(rng.choices(words, weights, k=rng.randint(5, 300)))
        if rng.random() < 0.3:
            text = text.replace(" ", "  ", 2)
        corpus.append(text.split(" "))
    return corpus


def _index(corpus: list[list[str]], query: list[str]):
    """What news_terms holds, as the arguments of ``scores``."""
    counts = {}
    for i, doc in enumerate(corpus):
        for term, n in Counter(doc).items():
            if term in query:
                counts.setdefault(term, np.zeros(len(corpus), np.int64))[i] = n
    first_use: dict[str, int] = {}
    for doc in corpus:
        for term in dict.fromkeys(doc):
            first_use[term] = first_use.get(term, 0) + 1
    lengths = np.array([len(doc) for doc in corpus])
    return lengths, counts, lambda: np.array(list(first_use.values()))


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("text", [
    "w0 w1 w2",  # in nearly every document: negative idf, floored
    "w0 w1 w2 w0 w0",  # repeated terms count each time, as in rank_bm25
    "w17 w250 w2999 w0",
    "absent words only",
    "w5  w9",  # an empty term between two spaces
])  # fmt: skip
def test_scores_equal_bm25okapi_float_for_float(seed, text):
    corpus = _corpus(seed, 400)
    query = text.split(" ")
    expected = BM25Okapi(corpus).get_scores(query)
    lengths, counts, vocabulary = _index(corpus, query)
    got = scores(lengths, counts, query, vocabulary)
    assert np.array_equal(got, expected)
    assert list(np.argsort(got)[::-1][:30]) == list(np.argsort(expected)[::-1][:30])


def test_the_vocabulary_is_read_only_when_an_idf_is_negative():
    corpus = _corpus(4, 50)
    lengths, counts, _ = _index(corpus, ["w2999"])

    def refuse():
        raise AssertionError("no query term is in half of the documents")

    assert np.array_equal(
        scores(lengths, counts, ["w2999"], refuse), BM25Okapi(corpus).get_scores(["w2999"])
    )


@pytest.fixture(scope="module")
def env(release):
    with open_environment(release, "2025-08-13") as opened:  # every demo day is visible
        yield opened


@pytest.fixture(scope="module")
def articles(release) -> list[tuple]:
    """The articles behind the demo's events, in data_news.csv's order: (date, doc_id, title,
    text), as MIRAI's search sees them with no filter."""
    return duckdb.execute(
        f"SELECT date, doc_id, title, text FROM '{release}/news/*.parquet' WHERE doc_id IN "
        f"(SELECT doc_id FROM '{release}/quad_docs/*.parquet') ORDER BY date, doc_id"
    ).fetchall()


def test_news_terms_search_ranks_as_mirai_ranks_the_texts(env, articles):
    assert len(articles) > 4
    bm25 = BM25Okapi([f"{title} {text}".split(" ") for _, _, title, text in articles])
    common = Counter(t for a in articles for t in set(f"{a[2]} {a[3]}".split(" ")))
    frequent = [t for t, n in common.most_common(3)]  # in most articles: negative idf
    assert common[frequent[0]] > len(articles) / 2
    for text in [
        articles[0][2],
        articles[-1][2],
        " ".join(frequent),
        f"{frequent[0]}  trade",
        "trade talks between the two",
        "nothing-here",
    ]:
        best = np.argsort(bm25.get_scores(text.split(" ")))[::-1][:15]
        expected = [(Date(articles[i][0].isoformat()), articles[i][2]) for i in best]
        assert env.get_news_articles(text_description=text) == expected, text


@pytest.mark.parametrize("keywords", [
    ["trade"], ["TRADE"], ["the"], ["said."], ["xyzzy-none"], ["trade", "xyzzy-none"],
    ["United States"], ["of the", "xyzzy-none"], ["s"], [""],
])  # fmt: skip
def test_keywords_match_as_a_search_of_the_texts(env, articles, keywords):
    """Keywords without a space are matched in the terms, with one in the texts: either way
    the count is the texts' (case-insensitive, as text, in title or text)."""
    expected = sum(
        any(k.lower() in f"{title} {text}".lower() for k in keywords)
        for _, _, title, text in articles
    )
    assert env.count_news_articles(keywords=keywords) == expected
    listed = env.get_news_articles(keywords=keywords)
    assert len(listed) == min(expected, 15)


def test_keywords_and_search_keep_the_other_filters(env, articles):
    usa = [ISOCode("USA")]
    everything = env.count_news_articles(head_entities=usa)
    assert 0 < env.count_news_articles(head_entities=usa, keywords=["the"]) <= everything
    assert len(env.get_news_articles(head_entities=usa, text_description="the")) == min(
        everything, 15
    )


def test_events_of_the_best_articles_as_mirai_collects_them(env, articles, release):
    """get_events with a description: the events of the best-ranked articles, article by
    article, latest first, until 30 are found (checked before each article, as MIRAI does)."""
    links = duckdb.execute(
        f"SELECT d.doc_id, q.date, q.head, q.relation, q.tail FROM '{release}/quads/*.parquet' "
        f"AS q JOIN '{release}/quad_docs/*.parquet' AS d USING (quad_id) "
        "ORDER BY q.date DESC, q.head, q.relation, q.tail"
    ).fetchall()
    bm25 = BM25Okapi([f"{title} {text}".split(" ") for _, _, title, text in articles])
    for text in [articles[0][2], "the trade talks", "nothing-here"]:
        found: dict[tuple, None] = {}
        for i in np.argsort(bm25.get_scores(text.split(" ")))[::-1][:30]:
            if len(found) >= 30:
                break
            found.update(dict.fromkeys(row[1:] for row in links if row[0] == articles[i][1]))
        got = env.get_events(text_description=text)
        assert [
            (e.date.date, e.head_entity.code, e.relation.code, e.tail_entity.code) for e in got
        ] == [(d.isoformat(), h, r, t) for d, h, r, t in found]
        assert got
