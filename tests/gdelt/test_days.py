"""A day is complete once every file listed for it has a final outcome in the ledger."""

from datetime import date

from gdelt_forecast.gdelt.days import day_status
from gdelt_forecast.gdelt.ingest import ingest
from tests.conftest import EXPORT_CSV, SLOT
from tests.gdelt.test_ingest import END, START, TABLES

DAY = date(2025, 8, 7)


def test_day_completes_when_every_listed_file_has_an_outcome(http_mirror, make_config):
    http_mirror.add_real_slot()
    http_mirror.add("20250807221500.export.CSV", EXPORT_CSV.read_bytes(), listed_only=True)
    cfg = make_config(http_mirror.url)
    before = day_status(cfg, DAY)
    assert (before.listed, before.complete) == (3, False)
    assert before.statuses == {"not ingested": 3}

    http_mirror.faults[f"{SLOT}.mentions.CSV.zip"] += [403]
    ingest(cfg, START, END, TABLES)
    failed = day_status(cfg, DAY)
    assert failed.pending == [f"{SLOT}.mentions.CSV.zip"] and not failed.complete

    ingest(cfg, START, END, TABLES)
    done = day_status(cfg, DAY)
    assert done.complete and done.pending == []
    assert done.statuses == {"cached": 1, "downloaded": 1, "missing": 1}


def test_a_day_nothing_is_listed_for_is_not_complete(http_mirror, make_config):
    http_mirror.add_real_slot()
    status = day_status(make_config(http_mirror.url), date(2025, 8, 9))
    assert (status.listed, status.complete) == (0, False)
