"""A release's statistics (``stats/*.json``) and figures (``plots/*.png``).

Every file is a pure function of the release's tables, so the same data gives the same
bytes. Each JSON file is ``{"description": ..., "rows": [...]}``; "events" always counts
GDELT event records (rows of the ``events`` table).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from datetime import date
from pathlib import Path

import duckdb

from gdelt_forecast.contract.names import SPLITS, TASKS
from gdelt_forecast.ground import duck
from gdelt_forecast.release import plots

LEVEL2_PLOTTED = 30
FUNNEL_REASONS = 10
# The connection holds only the release's window, so the stats SQL may read all of it.
WHOLE = {"first_date": date.min, "last_date": date.max}

DESCRIPTIONS = {
    "relations_level1": "Quads and GDELT records per first-level CAMEO code (the root of "
    "the quad's relation); share is the code's fraction of all quads.",
    "relations_level2": "Quads and GDELT records per second-level CAMEO code (the quad's "
    "relation); share is the code's fraction of all quads.",
    "top_pairs": "The (subject, object) country pairs with the most quads, with their "
    "GDELT records and distinct relations.",
    "daily": "GDELT records, quads and kept news documents dated each day of the window.",
    "funnel": "Normalization rules in order, summed over the window's days: rows in, rows "
    "kept (rows_out) and removed. top_reasons sums each day's top reasons, so a reason that "
    "is frequent overall but never in a day's top list is missing or undercounted: reason "
    "totals are approximate.",
    "timelines": "Per complex event: its documents, and the atomic events of its timeline "
    "(dated_events: those with a date).",
    "tasks": "Records of each OpenForecast task and split, with the complex events and cut "
    "dates they come from.",
}


def write_stats(con: duckdb.DuckDBPyConnection, out: Path, top_pairs: int = 20) -> dict:
    """Write ``out/stats/*.json`` and ``out/plots/*.png``; return the headline numbers."""
    level1 = duck.records(con, "release/relations.sql", level=1)
    level2 = duck.records(con, "release/relations.sql", level=2)
    pairs = [
        {("events" if k == "records" else k): v for k, v in row.items()}
        for row in duck.records(con, "stats/top_pairs.sql", top=top_pairs, **WHOLE)
    ]
    daily = duck.records(con, "release/daily.sql")
    funnel = duck.records(con, "stats/funnel.sql", top=FUNNEL_REASONS, **WHOLE)
    (totals,) = duck.records(con, "release/totals.sql")
    timelines = duck.records(con, "release/timelines.sql")
    tasks = duck.records(con, "release/tasks.sql", tasks=list(TASKS), splits=list(SPLITS))
    tables = {
        "relations_level1": level1,
        "relations_level2": level2,
        "top_pairs": pairs,
        "daily": daily,
        "funnel": funnel,
        "timelines": timelines,
        "tasks": tasks,
    }
    files = {f"stats/{name}.json": _json(name, rows) for name, rows in tables.items()}
    files["plots/relations_level1.png"] = plots.bars(
        "Relations by first-level CAMEO code",
        [f"{r['code']} {r['name'] or ''}" for r in level1],
        [r["quads"] for r in level1],
        "quads",
    )
    files["plots/relations_level2.png"] = plots.bars(
        f"Top {LEVEL2_PLOTTED} second-level CAMEO codes",
        [f"{r['code']} {r['name'] or ''}" for r in level2[:LEVEL2_PLOTTED]],
        [r["quads"] for r in level2[:LEVEL2_PLOTTED]],
        "quads",
    )
    files["plots/top_pairs.png"] = plots.bars(
        f"Top {top_pairs} country pairs (subject → object)",
        [f"{r['head_name'] or r['head']} → {r['tail_name'] or r['tail']}" for r in pairs],
        [r["quads"] for r in pairs],
        "quads",
    )
    files["plots/daily.png"] = plots.daily("Records, quads and news documents per day", daily)
    files["plots/funnel.png"] = plots.bars(
        "Normalization funnel",
        [f"{r['step']} {r['rule']}" + ("" if r["enabled"] else " (off)") for r in funnel],
        [r["rows_out"] for r in funnel],
        "GDELT records kept after the rule",
    )
    lengths = Counter(row["atomic_events"] for row in timelines)
    files["plots/timeline_lengths.png"] = plots.bars(
        "Timeline lengths",
        [f"{n} atomic events" for n in sorted(lengths)],
        [lengths[n] for n in sorted(lengths)],
        "complex events",
    )
    files["plots/task_sizes.png"] = plots.bars(
        "Task records by split",
        [f"{r['task']} {r['split']}" for r in tasks],
        [r["records"] for r in tasks],
        "records",
    )
    # Everything is computed before anything is written: an error leaves the old files.
    for name, data in files.items():
        _write(out / name, data)
    return {
        **totals,
        "days": len(daily),
        "first_day": daily[0]["date"].isoformat() if daily else None,
        "last_day": daily[-1]["date"].isoformat() if daily else None,
        "funnel": [{k: v for k, v in r.items() if k != "top_reasons"} for r in funnel],
        "complex_events": len(timelines),
        "atomic_events": sum(r["atomic_events"] for r in timelines),
        "plots": sorted(name for name in files if name.startswith("plots/")),
    }


def _json(name: str, rows: list[dict]) -> bytes:
    data = {"description": DESCRIPTIONS[name], "rows": rows}
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=date.isoformat)
    return (text + "\n").encode("utf-8")


def _write(path: Path, data: bytes) -> None:
    """Write to a temporary file beside ``path``, then rename over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
