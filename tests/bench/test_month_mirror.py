"""bench/month/mirror.py: a simulated GDELT month at real volume, drawn from the real slot,
that ingest takes as GDELT's own: every served line a bronze row or a reject, the missing
file a 404, the corrupt one quarantined."""

from __future__ import annotations

import zipfile
from datetime import date, datetime
from pathlib import Path

import pyarrow.dataset as ds

from bench.month import mirror as month_mirror
from gdelt_forecast.gdelt.ingest import ingest
from gdelt_forecast.ground.config import load_config


def lines(path: Path) -> int:
    with zipfile.ZipFile(path) as zf:
        return sum(zf.read(n).count(b"\n") for n in zf.namelist())


def test_a_day_of_eight_slots_ingests_with_every_line_accounted_for(tmp_path):
    mirror = tmp_path / "mirror"
    made = month_mirror.build(mirror, [date(2025, 8, 1)], per_day=8, hosts=20,
                              missing=1, corrupt=1, seed=7)  # fmt: skip
    assert made.slots[:2] == ["20250801000000", "20250801030000"] and len(made.slots) == 8
    assert made.rows == {"export": 8 * 1_350, "mentions": 8 * 3_360}
    assert {urlsplit_host(u) for u in made.urls} <= {f"news-{n}.sim.test" for n in range(20)}
    listed = (mirror / "masterfilelist.txt").read_text().splitlines()
    assert len(listed) == 16
    served = [p for p in mirror.glob("*.zip") if p.name not in made.corrupt]
    assert len(served) == 14 and not (mirror / made.missing[0]).exists()
    cfg = load_config(None, [f"gdelt.base_url={mirror.as_uri()}"], tmp_path / "data")
    summary = ingest(cfg, datetime(2025, 8, 1), datetime(2025, 8, 1, 23, 45),
                     ["export", "mentions"])  # fmt: skip
    assert (summary.missing, summary.corrupt, summary.failed) == (1, 1, 0)
    bronze = sum(ds.dataset(tmp_path / "data/bronze" / t, partitioning="hive").count_rows()
                 for t in ("events", "mentions"))  # fmt: skip
    rejects = tmp_path / "data/bronze/rejects"
    rejected = ds.dataset(rejects, partitioning="hive").count_rows() if rejects.exists() else 0
    assert bronze + rejected == sum(lines(p) for p in served)
    # the same seed gives the same month, byte for byte
    again = month_mirror.build(tmp_path / "again", [date(2025, 8, 1)], per_day=8,
                               hosts=20, missing=1, corrupt=1, seed=7)  # fmt: skip
    assert (tmp_path / "again/masterfilelist.txt").read_text() == "\n".join(listed) + "\n"
    assert again.missing == made.missing and again.corrupt == made.corrupt


def urlsplit_host(url: str) -> str:
    return url.split("/")[2].split(":")[0]
