"""Months side by side (issue 51's backfill): a month's stages and release read the
warehouse up to their month, so a later month's day built beside them (its silver, the
warehouse rebuilt) leaves them current, while an earlier day not built yet, or a change to an
earlier month's silver, is refused until the warehouse and the month's stages are built
again: a release never holds a history with a hole."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gdelt_forecast.contract.months import read_index
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.release.build import ReleaseError
from tests.release.conftest import MONTH, demo_month


def test_a_later_months_day_leaves_a_month_current_and_an_earlier_change_does_not(
    demo_built, tmp_path
):
    cfg = demo_month(demo_built, tmp_path / "data", tmp_path / "mirror")
    root = DataRoot(cfg.data_root)
    keys = {m: e["key"] for m, e in read_index(root.warehouse_parts)["months"].items()}
    assert set(keys) == {"2025-07", MONTH}

    # A September day normalized and processed beside the August refresh, then its database.
    for folder in ("silver/events", "silver/funnel", "articles/docs"):
        day = root.path(folder) / "date=2025-08-12"
        shutil.copytree(day, root.path(folder) / "date=2025-09-01")
    run("database", cfg)
    after = {m: e["key"] for m, e in read_index(root.warehouse_parts)["months"].items()}
    assert set(after) == {"2025-07", MONTH, "2025-09"}
    assert {m: after[m] for m in keys} == keys  # a later month changes no earlier key
    first = Path(run("release", cfg, MONTH).path)
    assert first.is_dir()  # the month's stages are current though the warehouse changed

    # A July day not processed yet (a month before, still running beside this one): refused.
    docs = root.path("articles/docs") / "date=2025-07-28"
    shutil.move(docs, tmp_path / "docs")
    with pytest.raises(ReleaseError, match="2025-07-28 have bronze events but not yet their "):
        run("release", cfg, MONTH)
    shutil.move(tmp_path / "docs", docs)

    # An earlier month's silver changes: the release is refused, naming what to run.
    july = root.path("silver/events") / "date=2025-07-28" / "part-0.parquet"
    shutil.copyfile(root.path("silver/events") / "date=2025-07-22" / "part-0.parquet", july)
    refused = "not current up to 2025-08: silver changed since the warehouse wrote 2025-07, "
    with pytest.raises(ReleaseError, match=f"{refused}2025-08: run `gdelt-forecast database`"):
        run("release", cfg, MONTH)
    run("database", cfg)
    with pytest.raises(ReleaseError, match=f"testset {MONTH} .* is not current"):
        run("release", cfg, MONTH)
    assert sorted(p.name for p in root.releases.iterdir() if not p.name.startswith(".")) == [
        first.name, "LATEST"]  # fmt: skip
