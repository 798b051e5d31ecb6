"""Parquet writes that never leave a half-written file where a reader could see it."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from gdelt_forecast.files import replacing


def write_parquet(table: pa.Table, path: Path, compression: str = "zstd") -> None:
    """Write to a temporary file beside ``path``, then rename over it."""
    with replacing(path) as tmp:
        pq.write_table(table, tmp, compression=compression)
