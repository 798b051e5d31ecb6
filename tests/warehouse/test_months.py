"""The warehouse by month (issue 51): a month's files are written once, a refresh writes only
the month that changed and those after it, the months built one by one are the history built
whole, and a release whose history starts within a month keeps its days from the start
(tests/release/test_release.py shows a release's files linked to the warehouse's)."""

from __future__ import annotations

import json
import os
import shutil
from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gdelt_forecast.ground.data_root import WAREHOUSE_SOURCES
from gdelt_forecast.ground.duck import open_warehouse
from gdelt_forecast.ground.files import sha256
from gdelt_forecast.release.build import ReleaseError, link_history
from gdelt_forecast.warehouse.build import WarehouseError, build_database
from tests.release.conftest import demo_month

JULY, AUGUST = "2025-07", "2025-08"


@pytest.fixture
def demo(demo_built, tmp_path):
    """A copy of the demo month: silver and documents of two days of July and three of August."""
    return demo_month(demo_built, tmp_path / "data", tmp_path / "mirror")


def _files(root: Path) -> dict[str, tuple[str, int]]:
    """Each of the warehouse's month files: its sha256 and inode (a file written again is a
    new inode, renamed into place)."""
    folder = root / "warehouse"
    return {
        p.relative_to(folder).as_posix(): (sha256(p), p.stat().st_ino)
        for p in sorted(folder.rglob("*.parquet"))
    }


def _set_aside(root: Path, month: str, aside: Path) -> None:
    for folder in WAREHOUSE_SOURCES:
        for day in sorted((root / folder).glob(f"date={month}-*")):
            (aside / folder).mkdir(parents=True, exist_ok=True)
            shutil.move(day, aside / folder / day.name)


def _bring_back(root: Path, aside: Path) -> None:
    for folder in WAREHOUSE_SOURCES:
        for day in sorted((aside / folder).glob("date=*")):
            shutil.move(day, root / folder / day.name)


def test_a_new_month_writes_only_itself_and_equals_the_history_built_whole(demo, tmp_path):
    root = demo.data_root
    whole = _files(root)  # the demo's warehouse: both months built at once
    assert {p.split("/")[1][:7] for p in whole} == {JULY, AUGUST}
    shutil.rmtree(root / "warehouse")
    _set_aside(root, AUGUST, tmp_path / "aside")
    assert build_database(demo).written == [JULY]
    july = _files(root)
    _bring_back(root, tmp_path / "aside")
    summary = build_database(demo)
    assert (summary.written, summary.months, summary.days) == ([AUGUST], 2, 5)
    after = _files(root)
    assert {p: v for p, v in after.items() if JULY in p} == july  # not written again
    assert {p: digest for p, (digest, _) in after.items()} == {
        p: digest for p, (digest, _) in whole.items()
    }
    assert build_database(demo).written == []


def test_a_document_seen_again_in_a_later_month_stays_the_first_months(demo, tmp_path):
    root = demo.data_root
    july = (root / "articles/docs").glob(f"date={JULY}-*/part-0.parquet")
    august = next((root / "articles/docs").glob(f"date={AUGUST}-*/part-0.parquet"))
    seen = next(row for p in sorted(july) for row in pq.ParquetFile(p).read().to_pylist())
    again = {**seen, "url": seen["url"] + "&seen-again", "date": date(2025, 8, 2)}
    docs = pq.ParquetFile(august).read()
    pq.write_table(pa.concat_tables([docs, pa.Table.from_pylist([again], docs.schema)]), august)
    assert build_database(demo).written == [AUGUST]
    with open_warehouse(demo) as con:
        rows = con.execute(
            "SELECT date, url FROM news WHERE doc_id = ?", [seen["doc_id"]]
        ).fetchall()
        ids, n = con.execute("SELECT count(DISTINCT doc_id), count(*) FROM news").fetchone()
    assert rows == [(seen["date"], seen["url"])] and ids == n
    incremental = _files(root)
    shutil.rmtree(root / "warehouse")
    assert build_database(demo).written == [JULY, AUGUST]
    assert {p: d for p, (d, _) in _files(root).items()} == {
        p: d for p, (d, _) in incremental.items()
    }


def test_a_changed_month_writes_itself_and_every_later_month(demo):
    funnel = next((demo.data_root / "silver/funnel").glob(f"date={JULY}-*/part-0.parquet"))
    pq.write_table(pq.read_table(funnel), funnel, compression="gzip")  # new bytes, same rows
    before = _files(demo.data_root)
    assert build_database(demo).written == [JULY, AUGUST]
    after = _files(demo.data_root)
    assert {p: d for p, (d, _) in after.items()} == {p: d for p, (d, _) in before.items()}
    assert all(after[p][1] != before[p][1] for p in after)


def test_a_month_whose_sources_are_gone_loses_its_files(demo, tmp_path):
    _set_aside(demo.data_root, AUGUST, tmp_path / "aside")
    summary = build_database(demo)
    assert (summary.written, summary.months) == ([], 1)
    assert all(JULY in p for p in _files(demo.data_root))
    index = json.loads((demo.data_root / "warehouse/months.json").read_text())
    assert list(index["months"]) == [JULY]
    with open_warehouse(demo) as con:
        assert con.execute("SELECT max(date) FROM events").fetchone()[0] < date(2025, 8, 1)


def test_documents_of_a_month_without_silver_events_are_refused(demo, tmp_path):
    shutil.rmtree(next((demo.data_root / "silver/events").glob(f"date={JULY}-22")))
    shutil.rmtree(next((demo.data_root / "silver/events").glob(f"date={JULY}-28")))
    with pytest.raises(WarehouseError, match=f"{JULY} has silver/funnel, articles/docs but no "
                       "silver events: run normalize for its days"):  # fmt: skip
        build_database(demo)


def test_a_history_starting_within_a_month_keeps_its_days_from_the_start(demo, tmp_path):
    out = tmp_path / "release"
    link_history(demo, date(2025, 7, 25), date(2025, 8, 31), out)
    july = pq.read_table(out / "events/2025-07-part-0.parquet")
    whole = pq.read_table(demo.data_root / "warehouse/events/2025-07-part-0.parquet")
    kept = [r for r in whole.to_pylist() if r["date"] >= date(2025, 7, 25)]
    assert 0 < len(kept) < whole.num_rows and july.to_pylist() == kept
    august = out / "events/2025-08-part-0.parquet"
    assert (
        os.stat(august).st_ino
        == os.stat(demo.data_root / "warehouse/events/2025-08-part-0.parquet").st_ino
    )


def test_a_warehouse_file_changed_since_it_was_written_is_refused(demo, tmp_path):
    quads = demo.data_root / "warehouse/quads/2025-07-part-0.parquet"
    quads.write_bytes(quads.read_bytes()[:-1] + b"\x00")
    with pytest.raises(ReleaseError, match="gone or changed since the warehouse wrote it: run "
                       "`gdelt-forecast database` again"):  # fmt: skip
        link_history(demo, date(2025, 1, 1), date(2025, 8, 31), tmp_path / "release")
    # Edited by hand: the next database writes the month again (its key, and so the next
    # month's, is the same: the sources did not change).
    assert build_database(demo).written == ["2025-07"]
    link_history(demo, date(2025, 1, 1), date(2025, 8, 31), tmp_path / "release")
    quads.unlink()  # deleted by hand: the same
    with pytest.raises(ReleaseError, match="gone or changed"):
        link_history(demo, date(2025, 1, 1), date(2025, 8, 31), tmp_path / "again")
    assert build_database(demo).written == ["2025-07"] and quads.is_file()
