"""Parsing real GDELT files: exact counts, types, leading zeros, and every kind of reject."""

import zipfile

import pyarrow as pa
import pytest

from gdelt_forecast.gdelt.parse import ParseError, parse_bytes, read_member
from gdelt_forecast.gdelt.schema import EXPORT, MENTIONS
from tests.conftest import EXPORT_CSV, FIXTURES, MENTIONS_CSV, line_count

SPARK_EVENTS = FIXTURES / "spark-gdelt_events.csv"
SPARK_MENTIONS = FIXTURES / "spark-gdelt_mentions.csv"


def real_lines(path):
    return path.read_bytes().split(b"\n")[:-1]


@pytest.mark.parametrize(
    "path, table, schema",
    [
        (EXPORT_CSV, "export", EXPORT),
        (MENTIONS_CSV, "mentions", MENTIONS),
        (SPARK_EVENTS, "export", EXPORT),
        (SPARK_MENTIONS, "mentions", MENTIONS),
    ],
)
def test_every_real_line_becomes_a_typed_row(path, table, schema):
    parsed = parse_bytes(path.read_bytes(), table, path.name)
    assert parsed.lines == line_count(path)
    assert parsed.rows.num_rows == parsed.lines
    assert parsed.rejects.num_rows == 0
    assert parsed.rows.schema == schema


def test_values_keep_codebook_types_and_leading_zeros():
    rows = parse_bytes(EXPORT_CSV.read_bytes(), "export", EXPORT_CSV.name).rows.to_pylist()
    first = rows[0]
    assert first["GLOBALEVENTID"] == 1256322770
    assert first["SQLDATE"] == 20240807
    assert first["EventCode"] == "080" and first["EventRootCode"] == "08"
    assert first["GoldsteinScale"] == 5.0
    assert first["Actor1Geo_ADM2Code"] == "25312"
    assert first["Actor1Geo_FeatureID"] == "-3096949"
    assert first["Actor2Code"] is None  # an empty field is null, not ""
    assert first["DATEADDED"] == 20250807220000
    assert rows[2]["EventCode"] == "010"
    assert rows[1]["ActionGeo_FeatureID"] == "JO"
    assert "Zangezur, Syunik', Armenia" in {r["Actor1Geo_FullName"] for r in rows}


def test_mentions_values():
    rows = parse_bytes(MENTIONS_CSV.read_bytes(), "mentions", "m").rows.to_pylist()
    assert rows[0]["GLOBALEVENTID"] == 1191495374
    assert rows[0]["EventTimeDate"] == 20240807220000
    assert rows[0]["Actor1CharOffset"] == -1
    assert rows[0]["MentionDocTone"] == pytest.approx(-12.8676470588236)
    assert rows[0]["MentionDocTranslationInfo"] is None


def test_truncated_line_and_extra_field_are_rejected_with_line_numbers():
    lines = real_lines(EXPORT_CSV)
    truncated = b"\t".join(lines[2].split(b"\t")[:30])
    extra = lines[4] + b"\textra"
    data = b"\n".join([*lines[:2], truncated, lines[3], extra, *lines[5:]]) + b"\n"
    parsed = parse_bytes(data, "export", "x.zip")
    assert parsed.rows.num_rows == 907
    rejects = parsed.rejects.to_pylist()
    assert [r["line_no"] for r in rejects] == [3, 5]
    assert rejects[0]["reason"] == "30 fields, expected 61"
    assert rejects[1]["reason"] == "62 fields, expected 61"
    assert rejects[1]["raw_line"] == extra.decode()
    assert {r["source_file"] for r in rejects} == {"x.zip"}


def test_value_that_does_not_cast_is_rejected_after_a_skipped_line():
    lines = real_lines(EXPORT_CSV)
    fields = lines[6].split(b"\t")
    fields[31] = b"abc"  # NumMentions
    bad = b"\t".join(fields)
    data = b"\n".join([*lines[:3], b"cut\tshort", *lines[3:6], bad, *lines[7:]]) + b"\n"
    parsed = parse_bytes(data, "export", "x.zip")
    rejects = parsed.rejects.to_pylist()
    assert [r["line_no"] for r in rejects] == [4, 8]
    assert rejects[1]["reason"] == "NumMentions: 'abc' is not int32"
    assert rejects[1]["raw_line"] == bad.decode()
    assert parsed.rows.num_rows == 908
    kept = set(parsed.rows["GLOBALEVENTID"].to_pylist())
    assert int(fields[0]) not in kept and int(lines[5].split(b"\t")[0]) in kept


def test_undecodable_bytes_are_replaced_not_dropped():
    lines = real_lines(EXPORT_CSV)
    fields = lines[0].split(b"\t")
    fields[6] = b"JERUS\xffALEM"
    data = b"\n".join([b"\t".join(fields), *lines[1:]]) + b"\n"
    parsed = parse_bytes(data, "export", "x.zip")
    assert parsed.rows.num_rows == 909
    assert parsed.rows["Actor1Name"][0].as_py() == "JERUS\ufffdALEM"


def test_quote_characters_are_data():
    lines = real_lines(EXPORT_CSV)
    fields = lines[0].split(b"\t")
    fields[6] = b'"JERUSALEM'
    fields[60] = b"http://example.org/a\"b'c"
    data = b"\n".join([b"\t".join(fields), *lines[1:]]) + b"\n"
    row = parse_bytes(data, "export", "x.zip").rows.slice(0, 1).to_pylist()[0]
    assert row["Actor1Name"] == '"JERUSALEM'
    assert row["SOURCEURL"] == "http://example.org/a\"b'c"


def test_empty_line_missing_id_and_bad_dateadded_are_rejected():
    lines = real_lines(EXPORT_CSV)
    no_id = b"\t".join([b"", *lines[1].split(b"\t")[1:]])
    bad_date = lines[2].split(b"\t")
    bad_date[59] = b"20251399220000"
    data = b"\n".join([lines[0], b"", no_id, b"\t".join(bad_date), *lines[3:]])
    parsed = parse_bytes(data, "export", "x.zip")  # and no final newline
    assert parsed.lines == 910
    reasons = {r["line_no"]: r["reason"] for r in parsed.rejects.to_pylist()}
    assert reasons == {
        2: "GLOBALEVENTID is empty",
        3: "GLOBALEVENTID is empty",
        4: "DATEADDED 20251399220000 is not YYYYMMDDHHMMSS",
    }
    assert parsed.rows.num_rows == 907


def test_stray_carriage_return_stays_inside_its_field():
    lines = real_lines(MENTIONS_CSV)
    fields = lines[0].split(b"\t")
    fields[5] = fields[5] + b"\r"
    data = b"\n".join([b"\t".join(fields), *lines[1:]]) + b"\n"
    parsed = parse_bytes(data, "mentions", "m.zip")
    assert parsed.rows.num_rows == 3366
    assert parsed.rows["MentionIdentifier"][0].as_py().endswith("\ufffd")


def test_zip_must_hold_one_readable_member(tmp_path):
    not_zip = tmp_path / "x.zip"
    not_zip.write_bytes(b"not a zip")
    with pytest.raises(ParseError, match="x.zip"):
        read_member(str(not_zip))


def _zipped(tmp_path, data: bytes, method: int = zipfile.ZIP_DEFLATED):
    path = tmp_path / "20250807220000.export.CSV.zip"
    with zipfile.ZipFile(path, "w", method) as zf:
        zf.writestr("20250807220000.export.CSV", data)
    return path


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])
def test_a_real_zip_reads_as_zipfile_reads_it(tmp_path, method):
    path = _zipped(tmp_path, EXPORT_CSV.read_bytes(), method)
    assert read_member(str(path)) == EXPORT_CSV.read_bytes()


def test_a_damaged_member_is_a_parse_error_naming_the_file(tmp_path):
    path = _zipped(tmp_path, EXPORT_CSV.read_bytes())
    blob = bytearray(path.read_bytes())
    start = 30 + len("20250807220000.export.CSV")  # the local header, then the deflated data
    blob[start + 5000 : start + 5004] = b"\xff\x00\xff\x00"  # the inflated bytes change
    path.write_bytes(bytes(blob))
    with pytest.raises(ParseError, match="export.CSV.zip"):
        read_member(str(path))
    # Cut short: the central directory is gone with the end.
    path.write_bytes(bytes(blob[: len(blob) // 2]))
    with pytest.raises(ParseError, match="export.CSV.zip"):
        read_member(str(path))


def test_rejects_schema_is_stable_when_empty():
    parsed = parse_bytes(SPARK_EVENTS.read_bytes(), "export", "s")
    assert parsed.rejects.schema.field("line_no").type == pa.int64()
