"""``bronze/slots.parquet``: one row per (slot, stream, table) saying what became of it."""

from __future__ import annotations

from collections.abc import Iterable
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
    machines, on an s3:// data root). The kept rows stay Arrow: a year's ledger is merged in
    a few column operations, not a dict a row."""
    path.parent.mkdir(parents=True, exist_ok=True)
    new = pa.Table.from_pylist(list({_key(row): row for row in rows}.values()), schema=SCHEMA)
    with shared_file(path):
        table = new
        if path.exists():
            old = pq.read_table(path, schema=SCHEMA)
            replaced = pc.is_in(_keys(old), value_set=_keys(new))
            table = pa.concat_tables([old.filter(pc.invert(replaced)), new])
        table = table.take(
            pc.sort_indices(table, [(c, "ascending") for c in ("slot", "stream", "table")])
        )
        write_parquet(table, path)


def _keys(table: pa.Table) -> pa.ChunkedArray:
    return pc.binary_join_element_wise(table["slot"], table["stream"], table["table"], "\t")
