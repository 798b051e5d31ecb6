"""A month's timelines as the stages after them read them: ``timelines.parquet`` (atomic
events) and ``complex_events.parquet`` (the stories, with their countries)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from gdelt_forecast.ground.errors import StageError


def read_timelines(folder: Path, month: str) -> tuple[dict[str, list[dict]], dict[str, tuple]]:
    """Each story's atomic events in timeline order, and each story's countries."""
    paths = [folder / "timelines.parquet", folder / "complex_events.parquet"]
    if not all(p.exists() for p in paths):
        raise StageError(f"no timelines of {month} at {folder}: run `timelines` first")
    table = pq.read_table(paths[0])
    if "source_date" not in table.column_names:
        raise StageError(
            f"the timelines at {folder} record no source dates (built by an "
            "older version): run `timelines` again"
        )
    atoms: dict[str, list[dict]] = {}
    order = [("complex_event_id", "ascending"), ("seq", "ascending")]
    for row in table.sort_by(order).to_pylist():
        atoms.setdefault(row["complex_event_id"], []).append(row)
    countries = {
        row["complex_event_id"]: tuple(row["countries"])
        for row in pq.read_table(paths[1], columns=["complex_event_id", "countries"]).to_pylist()
    }
    return atoms, countries
