"""``round verify``: a sound round passes every check from the data alone, and each planted
breach is named: a question file changed after opening, a history day changed, a row first
seen on the open date planted in the history, a kept
forecast file whose bytes changed, a submission recorded after the deadline, and an answer
changed after resolution."""

from __future__ import annotations

import json
from datetime import timedelta

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.rounds.ledger import LEDGER, ledger_rows
from gdelt_forecast.rounds.questions import open_round
from gdelt_forecast.rounds.resolve import resolve_round
from gdelt_forecast.rounds.verify import verify_round
from tests.rounds.conftest import NOW, OPEN, demo_root


@pytest.fixture
def resolved(demo_built, tmp_path) -> Config:
    cfg = demo_root(demo_built, tmp_path, later_days=True, grace_days=0)
    open_round(cfg, "demo", OPEN, replay=True, now=NOW)
    resolve_round(cfg, "demo")
    return cfg


def folder(cfg: Config):
    return cfg.data_root / "rounds/demo"


def problems(cfg: Config) -> list[str]:
    return verify_round(cfg, "demo").problems


def test_a_sound_round_passes_every_check(resolved):
    summary = verify_round(resolved, "demo")
    assert summary.problems == [] and len(summary.checks) == 14


def test_a_question_file_changed_after_opening_is_named(resolved):
    path = folder(resolved) / "questions.parquet"
    table = pq.read_table(path)
    write_parquet(table.slice(1), path)
    found = problems(resolved)
    assert "questions file as pinned: questions.parquet is not the file round.json pinned" in found
    # its forecasts no longer answer its questions, nor do its answers
    assert any(p.startswith("scores recomputed: the forecasts in force cannot be") for p in found)


def test_a_history_day_changed_after_opening_is_named(resolved):
    day = resolved.data_root / "silver/events/date=2025-07-28/part-0.parquet"
    table = pq.read_table(day, partitioning=None)
    write_parquet(table.slice(1), day)
    found = problems(resolved)
    assert any(p.startswith("questions rebuilt from the history") for p in found)
    assert any(p.startswith("the history's files as pinned") for p in found)


def test_a_row_first_seen_on_the_open_date_in_a_days_history_is_named(resolved):
    """The round's rule from the data alone: a row GDELT added on the open date, planted in
    the last history day's partition, is what no question may read."""
    day = resolved.data_root / "silver/events/date=2025-08-02/part-0.parquet"
    rows = pq.read_table(day, partitioning=None).to_pylist()
    late = {**rows[0], "GLOBALEVENTID": rows[0]["GLOBALEVENTID"] + 1,
            "DATEADDED": int(OPEN.strftime("%Y%m%d")) * 1_000_000 + 1500}  # fmt: skip
    write_parquet(pa.Table.from_pylist([*rows, late], schema=pq.read_schema(day)), day)
    found = problems(resolved)
    assert (
        "no row added on or after the open date: rows added on or after the open date were read"
        in found
    )


def test_a_kept_forecast_changed_or_received_late_is_named(resolved):
    rows = ledger_rows(folder(resolved))
    kept = folder(resolved) / rows[3]["file"]  # always-0.5's
    kept.write_text(kept.read_text().replace("0.5", "0.9"))
    rows[1]["received"] += timedelta(days=1)
    write_parquet(pa.Table.from_pylist(rows, schema=LEDGER),
                  folder(resolved) / "submissions/ledger.parquet")  # fmt: skip
    found = problems(resolved)
    assert any("every kept file has its recorded sha256: 1 files differ" in p for p in found)
    assert any(f"accepted after 2025-08-03T23:59:59Z: ['{rows[1]['forecaster']} submit']" in p
               for p in found)  # fmt: skip


def test_an_answer_changed_after_resolution_is_named(resolved):
    path = folder(resolved) / "resolution.parquet"
    rows = pq.read_table(path).to_pylist()
    binary = next(r for r in rows if r["kind"] == "binary")
    binary["outcome"] = 1 - binary["outcome"]
    write_parquet(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    found = problems(resolved)
    assert (
        "resolution file as pinned: resolution.parquet is not the file round.json pinned" in found
    )
    pinned = json.loads((folder(resolved) / "round.json").read_text())
    assert pinned["state"] == "resolved"
