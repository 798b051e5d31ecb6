"""bench/month/audit.py's ``chain`` check on the demo month's release: silver events to quads
to test queries add up, and each planted break is named."""

from __future__ import annotations

import json
import shutil

import pyarrow.parquet as pq

from bench.month import audit as month_audit
from tests.release.conftest import MONTH


def test_the_chain_adds_up_and_a_break_is_named(demo_cfg, release, tmp_path):
    root = demo_cfg.data_root
    check = month_audit.chain(root, release, MONTH)
    assert check["ok"], check["problems"]
    assert check["silver_events"] > check["quads"] >= check["pairs"] > 0
    assert check["queries"] > 0 and check["candidates"] >= check["queries"]

    broken = tmp_path / "release"
    shutil.copytree(release, broken)
    table = pq.read_table(release / "quads")
    rows = table.to_pylist()
    # A quad of the month lost on the way.
    lost = next(i for i, q in enumerate(rows) if q["date"].isoformat().startswith(MONTH))
    dropped = rows[lost]
    kept = table.take([i for i in range(table.num_rows) if i != lost])
    shutil.rmtree(broken / "quads")
    (broken / "quads").mkdir()
    pq.write_table(kept, broken / "quads/part-0.parquet")  # one file for the history
    check = month_audit.chain(root, broken, MONTH)
    assert not check["ok"]
    assert "counted in quads" in check["problems"][-1]
    assert check["quads"] == table.num_rows - 1 and dropped["n_records"] > 0

    record = root / "testset" / MONTH / "_record.json"
    saved = record.read_text()
    try:
        said = json.loads(saved)
        said["summary"]["queries"] += 1  # the record counted a query the release lacks
        record.write_text(json.dumps(said))
        problems = month_audit.chain(root, release, MONTH)["problems"]
        assert problems and "queries released, the record says" in problems[-1]
    finally:
        record.write_text(saved)
