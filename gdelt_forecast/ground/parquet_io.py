"""Parquet writes that never leave a half-written file where a reader could see it, and the
rows of a file that may not have been written yet."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from gdelt_forecast.ground.files import replacing


def write_parquet(table: pa.Table, path: Path, compression: str = "zstd") -> None:
    """Write to a temporary file beside ``path``, then rename over it."""
    with replacing(path) as tmp:
        pq.write_table(table, tmp, compression=compression)


def read_rows(path: Path, columns: list[str] | None = None) -> list[dict]:
    """The rows of ``path`` (only ``columns``, if given) as dicts; none where it is absent."""
    return pq.read_table(path, columns=columns).to_pylist() if path.exists() else []
