"""warehouse.duckdb: rebuilt whole from silver, read-only for readers, and its stats."""

import json
from datetime import date

import duckdb
import pyarrow.parquet as pq
import pytest

from gdelt_forecast.events.normalize import normalize
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.duck import open_warehouse
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.pipeline.stages import STAGES
from gdelt_forecast.warehouse.build import WarehouseError, build_database
from gdelt_forecast.warehouse.stats import render, stats

DAY = date(2025, 8, 7)


@pytest.fixture
def cfg(real_day):
    config = load_config(None, ["events.min_daily_mentions=1"], real_day)
    normalize(config, DAY, DAY)
    return config


def test_tables_are_built_from_silver(cfg):
    summary = build_database(cfg)
    silver = pq.read_table(cfg.data_root / "silver/events/date=2025-08-07/part-0.parquet")
    quads = {r["quad_id"] for r in silver.to_pylist()}
    assert (summary.events, summary.quads) == (silver.num_rows, len(quads))
    with open_warehouse(cfg) as con:
        tables = {r[0] for r in con.execute("SHOW TABLES").fetchall()}
        assert tables == {
            "events",
            "quads",
            "quad_urls",
            "funnel",
            "countries",
            "cameo_countries",
            "relations",
            "news",
            "news_terms",
            "quad_docs",
        }
        n_records, n_urls = con.execute("SELECT sum(n_records), sum(n_urls) FROM quads").fetchone()
        assert n_records == silver.num_rows
        assert n_urls == con.execute("SELECT count(*) FROM quad_urls").fetchone()[0]
        assert con.execute("SELECT count(*) FROM funnel").fetchone()[0] == 7
        assert con.execute("SELECT name FROM relations WHERE code = '106'").fetchone() == (
            "Demand meeting or negotiation",
        )
        with pytest.raises(duckdb.Error):
            con.execute("DELETE FROM quads")


def test_rebuild_from_scratch_gives_the_same_tables(cfg):
    build_database(cfg)
    with open_warehouse(cfg) as con:
        before = con.execute("SELECT * FROM quads ORDER BY quad_id").fetchall()
    (cfg.data_root / "warehouse.duckdb").unlink()
    build_database(cfg)
    build_database(cfg)  # and again over an existing one
    with open_warehouse(cfg) as con:
        assert con.execute("SELECT * FROM quads ORDER BY quad_id").fetchall() == before
    assert not list(cfg.data_root.glob(".warehouse.duckdb.tmp*"))


def test_missing_inputs_are_clear_errors(tmp_path):
    cfg = load_config(None, [], tmp_path)
    with pytest.raises(WarehouseError, match="no silver events"):
        build_database(cfg)
    with pytest.raises(StageError, match="no warehouse at"):
        open_warehouse(cfg)


def test_the_database_stage_records_the_sources_it_was_built_from(cfg):
    root = DataRoot(cfg.data_root)
    database = STAGES["database"]
    assert database.stale(cfg, root).startswith("it has no record")
    summary = run("database", cfg, run_id="manual-1")
    record = json.loads(root.warehouse_record.read_text())
    assert (record["stage"], record["partition"], record["params"]) == ("database", "all", {})
    assert record["run"]["id"] == "manual-1" and record["run"]["runs"] == 1
    assert record["summary"]["events"] == summary.events > 0 and record["files"] == []
    assert len(record["inputs"]["sources"]) == 64 and len(record["config_sha256"]) == 64
    assert database.stale(cfg, root) is None
    # The day's silver rebuilt with another threshold: the warehouse no longer describes it.
    normalize(cfg.model_copy(update={"events": cfg.events.model_copy(
        update={"min_daily_mentions": 3})}), DAY, DAY)  # fmt: skip
    assert database.stale(cfg, root) == "its input changed since it ran (sources)"
    run("database", cfg)
    again = json.loads(root.warehouse_record.read_text())
    assert again["run"]["runs"] == 2 and again["inputs"] != record["inputs"]
    assert database.stale(cfg, root) is None


def test_stats_show_the_funnel_and_the_top_lists(cfg):
    build_database(cfg)
    report = stats(cfg, DAY, DAY, top=3)
    steps = {r["rule"]: r for r in report["funnel"]}
    assert steps["bronze"]["rows_in"] == 909
    assert steps["same_day"]["removed"] == 14
    assert len(report["relations"]) == 3 and len(report["pairs"]) == 3
    with open_warehouse(cfg) as con:
        best = con.execute(
            "SELECT relation, count(*) AS n FROM quads GROUP BY 1 ORDER BY n DESC, 1 LIMIT 1"
        ).fetchone()
    assert (report["relations"][0]["relation"], report["relations"][0]["quads"]) == best
    text = render(report)
    assert "same_day" in text and "SQLDATE 7 day(s) before the publish day (8)" in text
    empty = stats(cfg, date(2024, 1, 1), date(2024, 1, 2))
    assert empty["funnel"] == [] and empty["relations"] == []
