"""``bronze/slots.parquet``: one row per (slot, stream, table) saying what became of it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from gdelt_forecast.ground.parquet_io import upsert
from gdelt_forecast.storage.working_copy import shared_file

SCHEMA = pa.schema(
    [
        ("slot", pa.string()),
        ("stream", pa.string()),
        ("table", pa.string()),
        ("url", pa.string()),
        ("size", pa.int64()),
        ("md5", pa.string()),
        ("status", pa.string()),
        ("rows", pa.int64()),
        ("rejected", pa.int64()),
        ("partitions", pa.list_(pa.string())),
        ("detail", pa.string()),
    ]
)
Key = tuple[str, str, str]


def _key(row: dict) -> Key:
    return row["slot"], row["stream"], row["table"]


def read(path: Path, slots: Iterable[str] | None = None) -> dict[Key, dict]:
    """The ledger's rows by key: all, or those of ``slots`` (a day's or a run's, without
    turning a year's rows into dicts)."""
    if not path.exists():
        return {}
    table = pq.read_table(path, schema=SCHEMA)
    if slots is not None:
        table = table.filter(pc.is_in(table["slot"], pa.array(sorted(set(slots)), pa.string())))
    return {_key(row): row for row in table.to_pylist()}


def update(path: Path, rows: list[dict]) -> None:
    """Replace the ledger rows of these keys, keep the others; safe across processes (and
    machines, on an s3:// data root)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    new = pa.Table.from_pylist(list({_key(row): row for row in rows}.values()), schema=SCHEMA)
    with shared_file(path):
        upsert(path, new, ("slot", "stream", "table"))
