"""``llm_calls.parquet``: one row per request of a stage, how its answer was obtained.

``error`` is null when there was none; for a ``fallback`` row it says why the JSON answer
was refused. ``reason`` names its kind (``gdelt_forecast.llm.client.REASONS``: "cut at
max_tokens", "invalid JSON", "schema", "transport", "refused"), null for a clean answer.
Cached rows repeat the counts of the run that obtained the answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa

from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.llm.request import Result

CALLS_SCHEMA = pa.schema(
    [
        ("hash", pa.string()),
        ("key", pa.string()),
        ("step", pa.string()),
        ("model", pa.string()),
        ("status", pa.string()),
        ("cached", pa.bool_()),
        ("attempts", pa.int32()),
        ("prompt_tokens", pa.int64()),
        ("completion_tokens", pa.int64()),
        ("latency_s", pa.float64()),
        ("error", pa.string()),
        ("reason", pa.string()),
    ]
)


def write_calls(path: Path, results: Iterable[Result]) -> None:
    rows = [
        {
            "hash": r.hash,
            "key": r.key,
            "step": r.step,
            "model": r.model,
            "status": r.status,
            "cached": r.cached,
            "attempts": r.attempts,
            "prompt_tokens": r.prompt_tokens,
            "completion_tokens": r.completion_tokens,
            "latency_s": r.latency_s,
            "error": r.error or None,
            "reason": r.reason or None,
        }
        for r in results
    ]
    write_parquet(pa.Table.from_pylist(rows, schema=CALLS_SCHEMA), path)
