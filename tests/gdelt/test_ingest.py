"""End-to-end ingest against mirrors served from 127.0.0.1 and file://, with real rows."""

import hashlib
from datetime import datetime

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from gdelt_forecast.gdelt import mirror
from gdelt_forecast.gdelt.ingest import ingest
from gdelt_forecast.gdelt.masterfile import MasterfileError
from gdelt_forecast.gdelt.schema import EXPORT, MENTIONS
from gdelt_forecast.ground.files import FILE_MODE
from tests.conftest import EXPORT_CSV, FIXTURES, MENTIONS_CSV, SLOT, line_count

START, END = datetime(2025, 8, 7, 22, 0), datetime(2025, 8, 7, 23, 45)
TABLES = ["export", "mentions"]


def bronze_rows(cfg, table_dir):
    root = cfg.data_root / "bronze" / table_dir
    return ds.dataset(root, format="parquet", partitioning="hive").to_table()


def ledger(cfg):
    rows = pq.read_table(cfg.data_root / "bronze" / "slots.parquet").to_pylist()
    return {(r["slot"], r["table"]): r for r in rows}


def test_real_slot_lands_in_bronze_with_exact_counts(http_mirror, make_config):
    http_mirror.add_real_slot()
    cfg = make_config(http_mirror.url)
    summary = ingest(cfg, START, END, TABLES)
    n_export, n_mentions = line_count(EXPORT_CSV), line_count(MENTIONS_CSV)
    assert (summary.slots, summary.files, summary.downloaded) == (1, 2, 2)
    assert summary.rows_written == summary.lines_read == n_export + n_mentions == 4275
    assert summary.rows_rejected == 0

    events = pq.read_table(cfg.data_root / "bronze/events/date=2025-08-07" / f"{SLOT}.parquet")
    assert events.num_rows == n_export == 909
    assert events.schema.names == [*EXPORT.names, "_slot", "_source_file"]
    assert set(events["_slot"].to_pylist()) == {int(SLOT)}
    assert set(events["_source_file"].to_pylist()) == {f"{SLOT}.export.CSV.zip"}
    mentions = bronze_rows(cfg, "mentions")
    assert mentions.num_rows == n_mentions == 3366
    assert mentions.schema.field("GLOBALEVENTID").type == MENTIONS.field("GLOBALEVENTID").type

    book = ledger(cfg)
    zipped = (http_mirror.root / f"{SLOT}.export.CSV.zip").read_bytes()
    assert book[(SLOT, "export")]["md5"] == hashlib.md5(zipped).hexdigest()
    assert book[(SLOT, "export")]["status"] == "downloaded"
    assert (book[(SLOT, "export")]["rows"], book[(SLOT, "mentions")]["rows"]) == (909, 3366)
    assert book[(SLOT, "export")]["partitions"] == ["2025-08-07"]
    raw = cfg.data_root / "raw/gdelt/export/20250807" / f"{SLOT}.export.CSV.zip"
    assert raw.read_bytes() == zipped
    # Downloads and bronze files are readable as any new file (not mkstemp's owner-only).
    assert {p.stat().st_mode & 0o777 for p in cfg.data_root.rglob("*.CSV.zip")} == {FILE_MODE}
    bronze = (cfg.data_root / "bronze").rglob("*.parquet")
    assert {p.stat().st_mode & 0o777 for p in bronze} == {FILE_MODE}


def test_rerun_uses_the_cache_and_writes_no_duplicates(http_mirror, make_config):
    http_mirror.add_real_slot()
    cfg = make_config(http_mirror.url)
    ingest(cfg, START, END, TABLES)
    again = ingest(cfg, START, END, TABLES)
    assert (again.cached, again.downloaded, again.rows_written) == (2, 0, 4275)
    assert http_mirror.requests[f"{SLOT}.export.CSV.zip"] == 1
    assert bronze_rows(cfg, "events").num_rows == 909
    assert bronze_rows(cfg, "mentions").num_rows == 3366
    assert len(ledger(cfg)) == 2
    assert {r["status"] for r in ledger(cfg).values()} == {"cached"}


def test_md5_mismatch_is_quarantined_and_the_run_goes_on(http_mirror, make_config):
    http_mirror.add(EXPORT_CSV.name, EXPORT_CSV.read_bytes(), md5="0" * 32)
    http_mirror.add(MENTIONS_CSV.name, MENTIONS_CSV.read_bytes())
    cfg = make_config(http_mirror.url, "download.verify_attempts=2")
    summary = ingest(cfg, START, END, TABLES)
    assert (summary.corrupt, summary.downloaded, summary.rows_written) == (1, 1, 3366)
    assert http_mirror.requests[f"{SLOT}.export.CSV.zip"] == 2
    assert (cfg.data_root / "raw/gdelt/_quarantine/export" / f"{SLOT}.export.CSV.zip").exists()
    assert not (cfg.data_root / "raw/gdelt/export/20250807" / f"{SLOT}.export.CSV.zip").exists()
    row = ledger(cfg)[(SLOT, "export")]
    assert row["status"] == "corrupt" and row["rows"] is None and "md5" in row["detail"]
    # The ledger reaches the release: it names the file within the data root, not this machine.
    assert row["detail"].endswith(f"kept in raw/gdelt/_quarantine/export/{SLOT}.export.CSV.zip")
    assert not (cfg.data_root / "bronze/events").exists()


def test_slot_missing_upstream_is_recorded(http_mirror, make_config):
    http_mirror.add_real_slot()
    http_mirror.add("20250807221500.export.CSV", EXPORT_CSV.read_bytes(), listed_only=True)
    summary = ingest(make_config(http_mirror.url), START, END, TABLES)
    assert (summary.slots, summary.files, summary.missing, summary.downloaded) == (2, 3, 1, 2)
    assert summary.problems == ["20250807221500 export: missing (HTTP 404)"]


def test_server_errors_are_retried_then_succeed(http_mirror, make_config):
    http_mirror.add_real_slot()
    http_mirror.faults[f"{SLOT}.export.CSV.zip"] += [503, 502]
    summary = ingest(make_config(http_mirror.url), START, END, TABLES)
    assert summary.downloaded == 2 and summary.failed == 0
    assert http_mirror.requests[f"{SLOT}.export.CSV.zip"] == 3


def test_lasting_errors_fail_the_file_not_the_run(http_mirror, make_config):
    http_mirror.add_real_slot()
    http_mirror.faults[f"{SLOT}.export.CSV.zip"] += [403] * 5
    summary = ingest(make_config(http_mirror.url), START, END, TABLES)
    assert (summary.failed, summary.downloaded, summary.rows_written) == (1, 1, 3366)
    assert ledger(make_config(http_mirror.url))[(SLOT, "export")]["detail"] == "HTTP 403"


def test_broken_transfers_are_retried_then_fail(http_mirror, make_config):
    http_mirror.add_real_slot()
    http_mirror.faults[f"{SLOT}.export.CSV.zip"] += ["truncate"] * 3
    http_mirror.faults[f"{SLOT}.mentions.CSV.zip"] += ["truncate"]
    cfg = make_config(http_mirror.url, "download.verify_attempts=3", "download.retries=0")
    summary = ingest(cfg, START, END, TABLES)
    assert (summary.failed, summary.downloaded, summary.rows_written) == (1, 1, 3366)
    assert http_mirror.requests[f"{SLOT}.export.CSV.zip"] == 3
    assert "ChunkedEncodingError" in ledger(cfg)[(SLOT, "export")]["detail"]
    assert not list((cfg.data_root / "raw/gdelt/export/20250807").iterdir())


def test_bad_lines_go_to_rejects_and_are_counted(http_mirror, make_config):
    lines = EXPORT_CSV.read_bytes().split(b"\n")[:-1]
    lines[2] = b"\t".join(lines[2].split(b"\t")[:30])
    lines[4] += b"\textra"
    http_mirror.add(EXPORT_CSV.name, b"\n".join(lines) + b"\n")
    cfg = make_config(http_mirror.url)
    summary = ingest(cfg, START, END, ["export"])
    assert (summary.rows_written, summary.rows_rejected, summary.lines_read) == (907, 2, 909)
    rejects = pq.read_table(
        cfg.data_root / "bronze/rejects/events/date=2025-08-07" / f"{SLOT}.parquet"
    ).to_pylist()
    assert [(r["line_no"], r["source_file"]) for r in rejects] == [
        (3, f"{SLOT}.export.CSV.zip"),
        (5, f"{SLOT}.export.CSV.zip"),
    ]
    row = ledger(cfg)[(SLOT, "export")]
    assert (row["rows"], row["rejected"]) == (907, 2)
    assert bronze_rows(cfg, "events").num_rows == 907


def test_file_mirror_and_translation_stream(file_mirror, make_config):
    file_mirror.add_real_slot()
    translated = file_mirror.root / "masterfilelist-translation.txt"
    translated.write_text(
        (file_mirror.root / "masterfilelist.txt")
        .read_text()
        .replace(".export.", ".translation.export.")
        .replace(".mentions.", ".translation.mentions.")
    )
    for table in TABLES:
        plain = file_mirror.root / f"{SLOT}.{table}.CSV.zip"
        (file_mirror.root / f"{SLOT}.translation.{table}.CSV.zip").write_bytes(plain.read_bytes())
    cfg = make_config(file_mirror.url, "gdelt.translation=true")
    summary = ingest(cfg, START, END, TABLES)
    assert (summary.slots, summary.files, summary.downloaded) == (2, 4, 4)
    assert summary.rows_written == 2 * 4275
    events = cfg.data_root / "bronze/events/date=2025-08-07"
    assert sorted(p.name for p in events.iterdir()) == [
        f"{SLOT}.parquet",
        f"{SLOT}.translation.parquet",
    ]


def test_rerun_removes_partitions_a_slot_no_longer_writes(file_mirror, make_config):
    # The spark-gdelt mentions mix MentionTimeDate days of 2015 and 2020.
    spark = (FIXTURES / "spark-gdelt_mentions.csv").read_bytes()
    file_mirror.add("20200318000000.mentions.CSV", spark)
    cfg = make_config(file_mirror.url)
    day = datetime(2020, 3, 18)
    first = ingest(cfg, day, day, ["mentions"])
    assert first.rows_written == 100
    parts = sorted(p.name for p in (cfg.data_root / "bronze/mentions").iterdir())
    assert parts == ["date=2015-02-18", "date=2020-03-18"]

    only_2020 = b"".join(line for line in spark.splitlines(True) if b"\t20200318" in line)
    file_mirror.entries.clear()
    file_mirror.add("20200318000000.mentions.CSV", only_2020)
    second = ingest(cfg, day, day, ["mentions"])
    assert (second.downloaded, second.rows_written) == (1, 50)
    assert not (cfg.data_root / "bronze/mentions/date=2015-02-18/20200318000000.parquet").exists()
    assert bronze_rows(cfg, "mentions").num_rows == 50


def test_unreachable_master_list_is_an_error(make_config, tmp_path):
    with pytest.raises(MasterfileError, match="masterfilelist.txt: HTTP 404"):
        ingest(make_config((tmp_path / "nowhere").as_uri()), START, END, TABLES)


def test_listed_file_that_is_no_zip_is_corrupt(file_mirror, make_config):
    blob = b"<html>not a zip</html>"
    (file_mirror.root).mkdir(parents=True)
    (file_mirror.root / f"{SLOT}.export.CSV.zip").write_bytes(blob)
    entry = (len(blob), hashlib.md5(blob).hexdigest(), f"{SLOT}.export.CSV.zip")
    mirror.write_masterfile(file_mirror.root, [entry])
    cfg = make_config(file_mirror.url)
    summary = ingest(cfg, START, END, ["export"])
    assert (summary.corrupt, summary.rows_written) == (1, 0)
    assert "File is not a zip file" in ledger(cfg)[(SLOT, "export")]["detail"]
