"""Selecting slots from the master file list: inclusive range, tables, streams, bad lines."""

from datetime import datetime

from gdelt_forecast.gdelt.masterfile import parse_lines

BASE = "http://127.0.0.1:1/gdeltv2"
UP = "http://data.gdeltproject.org/gdeltv2"
LINES = [
    f"61099 712ecc958a6d2ceb2087560a92c0c5a0 {UP}/20250807214500.export.CSV.zip",
    f"61099 712ecc958a6d2ceb2087560a92c0c5a0 {UP}/20250807220000.export.CSV.zip",
    f"123670 5bbf4b81171333cd3a5c9f6dd7a449b0 {UP}/20250807220000.mentions.CSV.zip",
    f"9999 0123456789abcdef0123456789abcdef {UP}/20250807220000.gkg.csv.zip",
    f"61099 712ecc958a6d2ceb2087560a92c0c5a0 {UP}/20250807223000.translation.export.CSV.zip",
    f"61099 712ecc958a6d2ceb2087560a92c0c5a0 {UP}/20250807234500.export.CSV.zip",
    f"61099 712ecc958a6d2ceb2087560a92c0c5a0 {UP}/20250808000000.export.CSV.zip",
    f" {UP}/20250807224500.export.CSV.zip",  # upstream has a few lines without size or md5
    "",
    f"61099 712ecc958a6d2ceb2087560a92c0c5a0 {UP}/20250807220000.export.CSV.zip",  # repeated
]
START, END = datetime(2025, 8, 7, 22, 0), datetime(2025, 8, 7, 23, 45)


def test_range_is_inclusive_and_urls_point_at_the_configured_mirror():
    listing = parse_lines(LINES, BASE, "english", START, END, ["export", "mentions"])
    assert [(f.slot, f.table) for f in listing.files] == [
        ("20250807220000", "export"),
        ("20250807220000", "mentions"),
        ("20250807234500", "export"),
    ]
    first = listing.files[0]
    assert first.url == f"{BASE}/20250807220000.export.CSV.zip"
    assert (first.size, first.md5, first.key) == (
        61099,
        "712ecc958a6d2ceb2087560a92c0c5a0",
        "20250807220000",
    )
    assert listing.lines == 9 and listing.malformed == 1


def test_tables_filter_and_translation_stream():
    only_mentions = parse_lines(LINES, BASE, "english", START, END, ["mentions"])
    assert [f.table for f in only_mentions.files] == ["mentions"]
    translated = parse_lines(LINES, BASE, "translation", START, END, ["export"])
    assert [f.key for f in translated.files] == ["20250807223000.translation"]
