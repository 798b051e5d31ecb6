"""MIRAI's released data layout, so MIRAI's own agents and evaluation run on our data
unchanged: tab-separated ``data_kg.csv`` and ``data_news.csv`` (the release's database) and
``test/`` and ``test_subset/relation_query.csv`` (the test set's queries of the smallest
horizon: MIRAI's agents date their history themselves).

Column names, order and string forms follow MIRAI's dataset_construction scripts 6-9: lists
and dicts as Python literals (MIRAI reads them back with ``eval``), ``QueryId`` numbered
from 1, ``QueryCode`` "(2023-11-03, AUS, ?, CHN)", ``DateNLP`` "November 03, 2023".
"""

from __future__ import annotations

import csv
import json
from datetime import date
from itertools import chain, groupby
from operator import itemgetter
from pathlib import Path

from gdelt_forecast import duck

RELATION_QUERY = [
    "QueryId", "DateStr", "Actor1CountryCode", "Actor2CountryCode", "EventBaseCode",
    "Actor1CountryName", "Actor2CountryName", "Actor1Region", "Actor1SubRegion",
    "Actor2Region", "Actor2SubRegion", "EventRootCode", "query", "NumDailyMentions",
    "news_count", "min_news_count", "answer", "answer_len", "QueryCode", "AnswerList",
    "AnswerDict", "DateNLP",
]  # fmt: skip


def write_database(con, out: Path, first: date, last: date) -> None:
    """data_kg.csv and data_news.csv of the days first..last from an open warehouse."""
    out.mkdir(parents=True, exist_ok=True)
    days = {"first_date": first, "last_date": last}
    news = duck.sql("release/mirai_news.sql")
    con.execute(
        f"COPY ({news}) TO {duck.literal(out / 'data_news.csv')} "
        "(FORMAT csv, DELIMITER '\\t', HEADER)",
        days,
    )
    _write_kg(con.execute(duck.sql("release/mirai_kg.sql"), days), out / "data_kg.csv")


def _write_kg(result, path: Path) -> None:
    """data_kg.csv from its sorted rows, adding to each the Docids of its quad. MIRAI's form
    repeats a quad's whole list on each of its rows, so the file grows with the square of a
    quad's documents (786 MB for a simulated week at GDELT's volume): DuckDB sorting rows
    that carry their lists ran out of memory there, so the rows come sorted without them and
    each quad's list is made here from its rows, one quad at a time. Written with the csv
    module as DuckDB's COPY writes a tab-separated file (minimal quoting, NULL empty)."""
    columns = [c[0] for c in result.description]
    rows = chain.from_iterable(iter(lambda: result.fetchmany(10_000), []))
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t", lineterminator="\n")
        writer.writerow([*columns, "Docids"])
        for _, group in groupby(rows, key=itemgetter(columns.index("QuadEventCode"))):
            quad = list(group)
            docids = "[" + ", ".join(f"'{row[-1]}'" for row in quad) + "]"
            writer.writerows((*row, docids) for row in quad)


def relation_query_rows(queries: list[dict]) -> list[dict]:
    rows = []
    for number, q in enumerate(queries, 1):
        day = q["date"].isoformat()
        answer = list(q["answer_list"])
        rows.append(
            {
                "QueryId": number,
                "DateStr": day,
                "Actor1CountryCode": q["subject"],
                "Actor2CountryCode": q["object"],
                "EventBaseCode": answer[0],
                "Actor1CountryName": q["subject_name"],
                "Actor2CountryName": q["object_name"],
                "Actor1Region": q["subject_region"],
                "Actor1SubRegion": q["subject_subregion"],
                "Actor2Region": q["object_region"],
                "Actor2SubRegion": q["object_subregion"],
                "EventRootCode": answer[0][:2],
                "query": f"{day} {q['subject']} {q['object']}",
                "NumDailyMentions": q["daily_mentions"],
                "news_count": q["min_docs"],
                "min_news_count": q["min_docs"],
                "answer": repr(answer),
                "answer_len": len(answer),
                "QueryCode": f"({day}, {q['subject']}, ?, {q['object']})",
                "AnswerList": repr(answer),
                "AnswerDict": repr(json.loads(q["answer"])),
                "DateNLP": q["date_nlp"],
            }
        )
    return rows


def write_queries(path: Path, queries: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, RELATION_QUERY, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(relation_query_rows(queries))
