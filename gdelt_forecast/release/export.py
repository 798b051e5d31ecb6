"""Tables streamed from DuckDB into a release's Parquet files, the same bytes every time.

DuckDB hands Arrow batches of whatever size its pipeline produced; pyarrow's dataset writer
re-cuts them into row groups of a fixed size, one thread, order preserved, so the files
depend only on the rows. Memory stays at a few row groups whatever the table's size.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from gdelt_forecast.ground import duck

ROW_GROUP = 100_000
BATCH = 50_000


def write_query(
    con: duckdb.DuckDBPyConnection,
    name: str,
    folder: Path,
    rows_per_file: int,
    row_group: int = ROW_GROUP,
    **params,
) -> list[Path]:
    """Rows of ``gdelt_forecast/sql/<name>`` as ``folder/part-0.parquet``, ``part-1``, ... (one
    file with no rows when the query has none, so every table keeps its schema)."""
    reader = duck.relation(con, name, **params).to_arrow_reader(BATCH)
    return write_reader(reader, folder, rows_per_file, row_group)


def write_reader(
    reader: pa.RecordBatchReader, folder: Path, rows_per_file: int, row_group: int = ROW_GROUP
) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    ds.write_dataset(
        reader,
        folder,
        format="parquet",
        basename_template="part-{i}.parquet",
        file_options=ds.ParquetFileFormat().make_write_options(compression="zstd"),
        min_rows_per_group=min(row_group, rows_per_file),
        max_rows_per_group=min(row_group, rows_per_file),
        max_rows_per_file=rows_per_file,
        use_threads=False,
        preserve_order=True,  # without it pyarrow may write batches out of ORDER BY order
        existing_data_behavior="error",
    )
    files = sorted(folder.glob("part-*.parquet"), key=lambda p: int(p.stem[5:]))
    if not files:  # the dataset writer writes nothing for an empty input
        files = [folder / "part-0.parquet"]
        pq.write_table(reader.schema.empty_table(), files[0], compression="zstd")
    return files
