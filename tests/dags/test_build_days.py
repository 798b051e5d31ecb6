"""The build_days DAG: triggered by the ingest DAG's day asset, or by hand for a range; its
days' events and news, then the warehouse once."""

import shutil

import pyarrow.parquet as pq

from gdelt_forecast.articles.warc import write_pages
from gdelt_forecast.events.normalize import normalize
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.ground.duck import open_warehouse
from gdelt_forecast.warehouse.build import build_database
from tests.articles.conftest import DAY, HTML, quad_urls
from tests.conftest import EXPORT_CSV, MENTIONS_CSV, SLOT, write_bronze
from tests.dags.conftest import parsed, python


def test_dag_parses_and_listens_to_the_ingest_asset(airflow_env):
    info = parsed(
        "build_days",
        """
        "tasks": sorted(dag.task_dict),
        "pools": {t: dag.task_dict[t].pool for t in ("database", "fetch_day")},
        "after": sorted(dag.task_dict["database"].upstream_task_ids),
        "listens": str(dag.timetable.asset_condition),
        "emits": [a.name for a in dags["gdelt_ingest"].task_dict["mark_day"].outlets],
        """,
        airflow_env,
    )
    assert info["tasks"] == [
        "database",
        "days",
        "fetch_day",
        "normalize_day",
        "pools",
        "process_day",
    ]
    assert info["pools"] == {"database": "warehouse_writer", "fetch_day": "article_fetch"}
    assert info["after"] == ["process_day"]  # the warehouse is built once, with the news
    assert info["emits"] == ["gdelt_bronze_day"]
    assert "name='gdelt_bronze_day'" in info["listens"]


def test_manual_run_builds_events_and_news_from_an_archive(airflow_env, tmp_path):
    data_root = tmp_path / "data"
    write_bronze(data_root, SLOT, "export", EXPORT_CSV.read_bytes())
    write_bronze(data_root, SLOT, "mentions", MENTIONS_CSV.read_bytes())
    overrides = ["events.min_daily_mentions=1"]
    cfg = load_config(None, overrides, data_root)
    normalize(cfg, DAY, DAY)
    build_database(cfg)  # only to learn the day's source URLs for the archive
    url = quad_urls(cfg)[0]
    body = (HTML / "5.html").read_bytes()
    warc = write_pages(tmp_path / "pages.warc.gz", {url: body})
    (data_root / "warehouse.duckdb").unlink()
    shutil.rmtree(data_root / "silver")
    overrides.append(f"articles.archives=[{warc}]")
    result = python(
        f"""
        from datetime import datetime, UTC
        from airflow.dag_processing.dagbag import DagBag
        dag = DagBag().dags["build_days"]
        run = dag.test(
            logical_date=datetime(2025, 8, 8, tzinfo=UTC),
            run_conf={{"data_root": {str(data_root)!r}, "start_date": "2025-08-07",
                       "end_date": "2025-08-07", "set": {overrides!r}}},
        )
        print("STATE", run.state)
        """,
        airflow_env,
    )
    assert "STATE success" in result.stdout, (result.stdout + result.stderr)[-5000:]
    silver = pq.read_table(data_root / "silver/events/date=2025-08-07/part-0.parquet")
    assert silver.num_rows > 0
    with open_warehouse(cfg) as con:
        assert con.execute("SELECT url FROM news").fetchall() == [(url,)]
        assert con.execute("SELECT max(n_docs) FROM quads").fetchone() == (1,)
