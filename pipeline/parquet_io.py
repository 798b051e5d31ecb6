"""Parquet writes that never leave a half-written file where a reader could see it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def write_parquet(table: pa.Table, path: Path, compression: str = "zstd") -> None:
    """Write to a temporary file beside ``path``, then rename over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp, compression=compression)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
