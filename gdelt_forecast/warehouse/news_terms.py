"""The warehouse's ``news_terms``: every document of a month's ``news`` as the terms MIRAI's BM25
search splits it into, so a search reads term counts instead of tokenizing texts.

MIRAI's ``get_events`` and ``get_news_articles`` rank the candidate articles with rank_bm25's
``BM25Okapi`` over ``title + " " + text`` split on single spaces, built per call: seconds
for a month's articles, and every text in memory. This table holds what that ranking needs,
written once: per (document, term) its count, its first position (the order rank_bm25 meets
terms in, which its idf average is summed in) and the document's length, so
:mod:`gdelt_forecast.environment.bm25` gives the same scores from a few columns. A term is also
what keyword matching needs: a keyword without a space occurs in a text exactly when it
occurs in one of its terms.

Written one day at a time (``sql/warehouse/news_terms.sql``), so memory holds one day's
terms whatever the month's size; the rows depend only on the month's ``news``, and a release
carries them as it carries the news.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import duckdb
import pyarrow as pa

from gdelt_forecast.ground import duck
from gdelt_forecast.ground.parquet_io import write_reader

SCHEMA = pa.schema([("doc_id", pa.string()), ("date", pa.date32()), ("term", pa.string()),
                    ("tf", pa.int32()), ("first", pa.int32()), ("tokens", pa.int32())])  # fmt: skip


def write_news_terms(
    con: duckdb.DuckDBPyConnection,
    window: tuple[date, date],
    folder: Path,
    rows_per_file: int,
    stem: str,
) -> list[Path]:
    """``folder/<stem>part-*.parquet`` from the days of ``window`` of the table ``news`` of
    ``con``."""
    days = con.execute(
        "SELECT DISTINCT date FROM news WHERE date BETWEEN ? AND ? ORDER BY date", list(window)
    ).fetchall()

    def batches() -> Iterator[pa.RecordBatch]:
        for (day,) in days:
            table = duck.relation(con, "warehouse/news_terms.sql", day=day).to_arrow_table()
            yield from table.cast(SCHEMA).to_batches()

    reader = pa.RecordBatchReader.from_batches(SCHEMA, batches())
    return write_reader(reader, folder, rows_per_file, stem=stem)
