"""Parquet writes that never leave a half-written file where a reader could see it, the rows
of a file that may not have been written yet, and tables streamed into files of fixed row
groups, the same bytes every time.

DuckDB hands Arrow batches of whatever size its pipeline produced; pyarrow's dataset writer
re-cuts them into row groups of a fixed size, one thread, order preserved, so the files
depend only on the rows. Memory stays at a few row groups whatever the table's size.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from gdelt_forecast.ground import duck
from gdelt_forecast.ground.files import replacing

ROW_GROUP = 100_000
BATCH = 50_000


def write_parquet(
    table: pa.Table, path: Path, compression: str = "zstd", dictionary: bool = True
) -> None:
    """Write to a temporary file beside ``path``, then rename over it."""
    with replacing(path) as tmp:
        pq.write_table(table, tmp, compression=compression, use_dictionary=dictionary)


def upsert(path: Path, new: pa.Table, keys: Sequence[str]) -> None:
    """``path`` (a ledger) with ``new``'s rows in place of the rows of the same ``keys``,
    sorted by them, renamed over the old file. The kept rows stay Arrow: a year's ledger is
    merged in a few column operations, not a dict a row. The caller holds the file's lock."""
    table = new
    if path.exists():
        old = pq.read_table(path, schema=new.schema)
        replaced = pc.is_in(_key(old, keys), value_set=_key(new, keys))
        table = pa.concat_tables([old.filter(pc.invert(replaced)), new])
    write_parquet(table.take(pc.sort_indices(table, [(k, "ascending") for k in keys])), path)


def _key(table: pa.Table, keys: Sequence[str]):
    if len(keys) == 1:
        return table[keys[0]]
    return pc.binary_join_element_wise(*(table[k] for k in keys), "\t")


def read_rows(path: Path, columns: list[str] | None = None) -> list[dict]:
    """The rows of ``path`` (only ``columns``, if given) as dicts; none where it is absent."""
    return pq.read_table(path, columns=columns).to_pylist() if path.exists() else []


def write_query(
    con: duckdb.DuckDBPyConnection,
    name: str,
    folder: Path,
    rows_per_file: int,
    row_group: int = ROW_GROUP,
    stem: str = "",
    **params,
) -> list[Path]:
    """Rows of ``gdelt_forecast/sql/<name>`` as ``folder/<stem>part-0.parquet``, ``part-1``,
    ... (one file with no rows when the query has none, so every table keeps its schema)."""
    reader = duck.relation(con, name, **params).to_arrow_reader(BATCH)
    return write_reader(reader, folder, rows_per_file, row_group, stem)


def write_reader(
    reader: pa.RecordBatchReader,
    folder: Path,
    rows_per_file: int,
    row_group: int = ROW_GROUP,
    stem: str = "",
) -> list[Path]:
    """``reader``'s rows as ``folder/<stem>part-<i>.parquet``; ``folder`` holds no such file
    before (the dataset writer refuses to mix its files with others)."""
    folder.mkdir(parents=True, exist_ok=True)
    ds.write_dataset(
        reader,
        folder,
        format="parquet",
        basename_template=f"{stem}part-{{i}}.parquet",
        file_options=ds.ParquetFileFormat().make_write_options(compression="zstd"),
        min_rows_per_group=min(row_group, rows_per_file),
        max_rows_per_group=min(row_group, rows_per_file),
        max_rows_per_file=rows_per_file,
        use_threads=False,
        preserve_order=True,  # without it pyarrow may write batches out of ORDER BY order
        existing_data_behavior="error",
    )
    files = sorted(
        folder.glob(f"{stem}part-*.parquet"),
        key=lambda p: int(p.stem.removeprefix(f"{stem}part-")),
    )
    if not files:  # the dataset writer writes nothing for an empty input
        files = [folder / f"{stem}part-0.parquet"]
        pq.write_table(reader.schema.empty_table(), files[0], compression="zstd")
    return files
