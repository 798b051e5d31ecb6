"""The MIRAI side of sound questions: no article first seen on or after a query's cutoff
reaches the query, neither through the environment as the baselines (and agents) open it nor
through MIRAI's own files, whose article dates are the days GDELT first saw them."""

from __future__ import annotations

import shutil
from datetime import timedelta

import duckdb
import pyarrow.parquet as pq

from gdelt_forecast.environment import Date, DateRange, ISOCode, open_environment
from tests.environment.conftest import add_rows, terms


def title(n: int) -> str:
    return f"Quokka{n} island declares a sweeping trade embargo"


def test_an_article_first_seen_on_the_query_day_reaches_no_query(release, tmp_path):
    queries = pq.read_table(release / "testset" / "queries.parquet").to_pylist()
    assert queries
    out = tmp_path / release.name
    shutil.copytree(release, out)
    days = sorted({q["date"] for q in queries})
    for n, day in enumerate(days):  # one planted article on each query day, with its quad
        doc, quad, text = f"planted-doc-{n}", f"planted-quad-{n}", f"{title(n)}. It is total."
        rows = {
            "quads": {"head": "TUV", "relation": "163", "tail": "NRU", "quad_id": quad},
            "quad_docs": {"quad_id": quad, "doc_id": doc},
            "news": {"doc_id": doc, "title": title(n), "text": text},
        }
        for table, values in rows.items():
            add_rows(out, table, [values | {"date": day}], f"z-{doc}")
        add_rows(
            out,
            "news_terms",
            [r | {"date": day} for r in terms(doc, f"{title(n)} {text}")],
            f"z-{doc}",
        )
    everything = DateRange(Date("2000-01-01"), Date("2100-01-01"))
    for q in queries:
        n = days.index(q["date"])
        # As the baselines open it: the query's last visible day is its `cutoff`.
        with open_environment(out, q["cutoff"] + timedelta(days=1)) as env:
            assert env.count_news_articles(everything, keywords=[f"Quokka{n}"]) == 0
            found = env.get_news_articles(everything, text_description=title(n))
            assert title(n) not in [t for _, t in found]
            seen = {e.date.date for e in env.get_events(everything, head_entities=[ISOCode("TUV")])}
            assert all(day < q["date"].isoformat() for day in seen)
    with open_environment(out, days[-1] + timedelta(days=1)) as later:  # the plants are real
        assert later.count_news_articles(everything, keywords=["Quokka0"]) == 1
        assert later.count_events(everything, head_entities=[ISOCode("TUV")]) == len(days)


def test_mirais_news_file_dates_each_article_by_the_day_gdelt_first_saw_it(release):
    con = duckdb.connect()
    mismatched, rows = con.execute(
        f"""SELECT count(*) FILTER (WHERE m.Date::DATE IS DISTINCT FROM n.date), count(*)
        FROM read_csv('{release / "mirai" / "MIRAI" / "data_news.csv"}', delim='\\t',
                      header=true, all_varchar=true) AS m
        LEFT JOIN read_parquet('{release / "news" / "*.parquet"}') AS n ON n.doc_id = m.Docid"""
    ).fetchone()
    assert rows == pq.read_table(release / "news").num_rows > 0
    assert mismatched == 0
