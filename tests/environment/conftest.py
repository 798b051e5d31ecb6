"""The demo month's release (built once per session, as tests/release builds it), and a copy
of it with a planted future: a quad, its document and the document's news row and terms
dated after the month, which a cutoff before them must hide."""

from __future__ import annotations

import shutil
from collections import Counter
from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.release.conftest import demo_cfg, offline_hub, release  # noqa: F401 (fixtures)

FUTURE_DAY = date(2025, 8, 20)
FUTURE_TITLE = "Tuvalu and Nauru sign a sweeping fisheries pact"
FUTURE_ROWS = {
    "quads": {"head": "TUV", "relation": "057", "tail": "NRU", "quad_id": "future-quad"},
    "quad_docs": {"quad_id": "future-quad", "doc_id": "future-doc"},
    "news": {"doc_id": "future-doc", "title": FUTURE_TITLE,
             "text": f"{FUTURE_TITLE}. Fisheries trade between the two grows."},
}  # fmt: skip


@pytest.fixture(scope="session")
def planted(release: Path, tmp_path_factory) -> Path:  # noqa: F811 (the imported fixture)
    """The release with one future quad (TUV 057 NRU on 2025-08-20) and its news row, each
    a copy of the table's first row with these values, in a Parquet file of its own."""
    out = tmp_path_factory.mktemp("planted") / release.name
    shutil.copytree(release, out)
    for table, values in FUTURE_ROWS.items():
        add_rows(out, table, [values | {"date": FUTURE_DAY}], "z-future")
    add_rows(
        out,
        "news_terms",
        [
            row | {"date": FUTURE_DAY}
            for row in terms(
                "future-doc", f"{FUTURE_ROWS['news']['title']} {FUTURE_ROWS['news']['text']}"
            )
        ],
        "z-future",
    )
    return out


def terms(doc_id: str, text: str) -> list[dict]:
    """``news_terms`` rows of a document, split as MIRAI's BM25 splits it."""
    tokens = text.split(" ")
    first = {term: tokens.index(term) for term in dict.fromkeys(tokens)}
    return [
        {"doc_id": doc_id, "term": term, "tf": n, "first": first[term], "tokens": len(tokens)}
        for term, n in Counter(tokens).items()
    ]


def add_rows(folder: Path, table: str, rows: list[dict], name: str) -> None:
    """Write ``rows`` as ``<table>/<name>.parquet``: each a copy of the table's first row
    with the given values, so every other column keeps a real value and the schema."""
    first = pq.read_table(sorted((folder / table).glob("*.parquet"))[0])
    template = first.slice(0, 1).to_pylist()[0]
    table_rows = [template | row for row in rows]
    pq.write_table(
        pa.Table.from_pylist(table_rows, schema=first.schema), folder / table / f"{name}.parquet"
    )
