"""MIRAI's query files, so MIRAI's own agents and evaluation run on our data unchanged:
``test/`` and ``test_subset/relation_query.csv`` (the test set's queries of the smallest
horizon: MIRAI's agents date their history themselves). Its database files are built from a
release's tables (:mod:`gdelt_forecast.release.mirai_database`).

Column names, order and string forms follow MIRAI's dataset_construction scripts 6-9: lists
and dicts as Python literals (MIRAI reads them back with ``eval``), ``QueryId`` numbered
from 1, ``QueryCode`` "(2023-11-03, AUS, ?, CHN)", ``DateNLP`` "November 03, 2023".
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

RELATION_QUERY = [
    "QueryId", "DateStr", "Actor1CountryCode", "Actor2CountryCode", "EventBaseCode",
    "Actor1CountryName", "Actor2CountryName", "Actor1Region", "Actor1SubRegion",
    "Actor2Region", "Actor2SubRegion", "EventRootCode", "query", "NumDailyMentions",
    "news_count", "min_news_count", "answer", "answer_len", "QueryCode", "AnswerList",
    "AnswerDict", "DateNLP",
]  # fmt: skip


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
