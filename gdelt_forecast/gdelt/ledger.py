"""``bronze/slots.parquet``: one row per (slot, stream, table) saying what became of it."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from gdelt_forecast.ground.parquet_io import write_parquet
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


def read(path: Path) -> dict[Key, dict]:
    if not path.exists():
        return {}
    return {_key(row): row for row in pq.read_table(path, schema=SCHEMA).to_pylist()}


def update(path: Path, rows: list[dict]) -> None:
    """Replace the ledger rows of these keys, keep the others; safe across processes (and
    machines, on an s3:// data root)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with shared_file(path):
        merged = read(path)
        merged.update({_key(row): row for row in rows})
        table = pa.Table.from_pylist(list(merged.values()), schema=SCHEMA)
        table = table.take(
            pc.sort_indices(table, [(c, "ascending") for c in ("slot", "stream", "table")])
        )
        write_parquet(table, path)
