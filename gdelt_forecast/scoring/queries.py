"""MIRAI queries files, as ``evaluate`` reads them: the test set builder's Parquet
(``queries/subset.parquet``) or a JSONL of the same fields, each query its id, its answer
(first-level code -> second-level codes) and its horizon."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from gdelt_forecast.ground.wellformed import wellformed
from gdelt_forecast.scoring.answers import answer_dict, load_dict
from gdelt_forecast.scoring.predictions import BadLine, describe, json_lines

QUERY_COLUMNS = ("query_id", "answer", "answer_list", "horizon")


@dataclass(frozen=True)
class Query:
    query_id: str
    answer: dict[str, list[str]]
    horizon: int | None = None


def load_queries(path: Path) -> list[Query]:
    """Queries from the builder's Parquet (queries/subset.parquet) or a JSONL of the same fields."""
    with open(path, "rb") as f:
        is_parquet = f.read(4) == b"PAR1"
    if is_parquet:
        present = pq.read_schema(path).names
        columns = [c for c in QUERY_COLUMNS if c in present]  # skip the prompts and the rest
        records = pq.read_table(path, columns=columns).to_pylist()
    else:
        records = list(_jsonl(path))
    return [_query(record, path) for record in records]


def _query(record: object, path: Path) -> Query:
    """One query; a ValueError naming it (never its hostile content) when it is malformed."""
    if not isinstance(record, dict) or "query_id" not in record:
        raise ValueError(f"{path}: a query is {describe(record, 'query_id')}")
    query_id = wellformed(str(record["query_id"]), "queries")
    answer = record.get("answer")
    if isinstance(answer, str):
        answer = load_dict(answer)  # JSON from the builder; Python repr from MIRAI's CSVs
    elif answer is None and _codes(record.get("answer_list")):
        answer = answer_dict(record["answer_list"])
    # answer_codes checks the codes; their types are checked here (a code that is no
    # string, or a key that lists no codes, is no answer).
    if not isinstance(answer, dict) or not all(_codes(codes) for codes in answer.values()):
        raise ValueError(f"{path}: query {query_id} has no readable answer")
    horizon = record.get("horizon")
    try:
        horizon = None if horizon is None else int(horizon)
    except (TypeError, ValueError, OverflowError):  # a list, a word, NaN, Infinity
        raise ValueError(f"{path}: query {query_id} has no whole-number horizon") from None
    return Query(query_id, answer, horizon)


def _codes(value: object) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(code, str) for code in value)


def _jsonl(path: Path) -> Iterator[object]:
    for number, record in json_lines(path):
        if isinstance(record, BadLine):
            raise ValueError(f"{path}:{number}: {record.why}")
        yield record
