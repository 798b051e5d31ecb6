"""bench/month/audit.py on a simulated day run through the stages as a month's refresh runs
them (ingest from the month mirror, normalize, fetch from the news web, process): every
check holds, and a row dropped on the way is named by the check that owns it."""

from __future__ import annotations

import shutil
from datetime import date, datetime

import pyarrow as pa
import pyarrow.parquet as pq

from bench.month import audit as month_audit
from bench.month import mirror as month_mirror
from bench.month import news_web
from gdelt_forecast.gdelt.ingest import ingest
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.pipeline.runner import run

DAY = date(2025, 8, 1)
SHARES = {"robots": 0.2, "limited": 0.0, "slow": 0.0, "dead": 0.1, "redirect": 0.1, "binary": 0.1}


def test_a_simulated_day_loses_nothing_and_a_planted_loss_is_named(tmp_path):
    with news_web.NewsWeb(20, seed=5, shares=SHARES) as web:
        made = month_mirror.build(tmp_path / "mirror", [DAY], per_day=4, hosts=20,
                                  port=web.port, missing=1, corrupt=1, seed=5)  # fmt: skip
        cfg = load_config(None, [
            f"gdelt.base_url={(tmp_path / 'mirror').as_uri()}", *web.fetch_config(),
            "events.min_daily_mentions=10", "articles.per_host_delay_s=0",
            "articles.backoff_s=0", "articles.retries=1",
        ], tmp_path / "data")  # fmt: skip
        ingest(cfg, datetime(2025, 8, 1), datetime(2025, 8, 1, 23, 45), ["export", "mentions"])
        run("normalize", cfg, DAY, DAY)
        run("fetch", cfg, DAY, DAY)
        run("process", cfg, DAY, DAY)
    root = cfg.data_root
    report = month_audit.audit(tmp_path / "mirror", root, made.missing, made.corrupt)
    assert report["ok"], report
    assert report["ingest"]["served"] == 6 and report["funnel"]["days"] == 1
    assert report["urls"]["urls"] > 20 and report["urls"]["kept"] > 0
    assert report["urls"]["excluded"] > 0 and report["pages"]["fetched"] > 0

    copy = tmp_path / "planted"
    shutil.copytree(root, copy)
    docs = next((copy / "articles/docs").rglob("*.parquet"))
    table = pq.read_table(docs)
    lost = table["url"][0].as_py()
    pq.write_table(table.slice(1), docs)  # a kept document gone
    ledger = pq.read_table(copy / "bronze/slots.parquet")
    slots = ledger.to_pylist()
    slots[0]["rows"] -= 1  # a line gone between the zip and bronze
    pq.write_table(pa.Table.from_pylist(slots, schema=ledger.schema), copy / "bronze/slots.parquet")
    report = month_audit.audit(tmp_path / "mirror", copy, made.missing, made.corrupt)
    assert not report["ok"] and report["funnel"]["ok"]
    assert lost in report["urls"]["lost"] and lost in report["pages"]["lost"]
    assert (
        report["ingest"]["problems"] and "rejects != its lines" in report["ingest"]["problems"][0]
    )
