"""Shipped reference tables: in step with their build, complete, and right on hand-checked rows."""

from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.reference import build, tables

SOURCES = build.SOURCES


def rows(table: pa.Table, key: str) -> dict[str, dict]:
    return {row[key]: row for row in table.to_pylist()}


def tsv(name: str) -> dict[str, str]:
    lines = (SOURCES / name).read_text(encoding="utf-8").splitlines()[1:]
    return dict(line.split("\t") for line in lines)


RELATIONS = rows(tables.relations(), "code")
COUNTRIES = rows(tables.countries(), "iso3")
CAMEO_COUNTRIES = rows(tables.cameo_countries(), "cameo_code")


def test_shipped_csvs_equal_a_fresh_build(tmp_path: Path):
    build.build(tmp_path)
    for name in tables.SCHEMAS:
        shipped = (tables.DATA_DIR / f"{name}.csv").read_bytes()
        assert shipped == (tmp_path / f"{name}.csv").read_bytes(), f"rebuild {name}.csv"


def test_loaders_keep_codes_as_strings_and_types_explicit():
    for name, schema in tables.SCHEMAS.items():
        assert getattr(tables, name)().schema == schema
    assert RELATIONS["010"]["level"] == 2 and RELATIONS["01"]["parent"] is None
    assert CAMEO_COUNTRIES["EUR"]["iso3"] is None


def test_relations_cover_every_official_code_plus_106():
    lines = (SOURCES / "CAMEO.eventcodes.txt").read_text(encoding="utf-8").splitlines()[1:]
    official = {line.split("\t")[0] for line in lines}
    assert (len(official), "106" in official) == (310, False)
    assert official | {"106"} <= RELATIONS.keys()
    assert RELATIONS["106"]["name"] == "Demand meeting or negotiation"
    assert RELATIONS["106"]["cameo_name"] == "Demand withdrawal"
    # The 1056 line the 106 text was fused onto keeps only its own text.
    assert RELATIONS["1056"]["cameo_name"] == "Demand de-escalation of military engagement"
    assert (RELATIONS["1056"]["level"], RELATIONS["1056"]["parent"]) == (3, "105")


def test_044_mojibake_is_repaired():
    assert RELATIONS["044"]["cameo_name"] == "Meet at a \u201cthird\u201d location"
    assert RELATIONS["044"]["name"] == "Meet at a third location"


def test_every_mirai_name_is_present():
    mirai = tsv("mirai_relations.tsv")
    assert sum(len(code) == 2 for code in mirai) == 20
    assert sum(len(code) == 3 for code in mirai) == 149
    assert {code: row["name"] for code, row in RELATIONS.items() if row["level"] <= 2} == mirai
    assert RELATIONS["155"]["cameo_name"] is None  # MIRAI-only cyber code


def test_levels_and_parents_are_consistent():
    for code, row in RELATIONS.items():
        assert row["level"] == len(code) - 1
        if row["level"] == 1:
            assert row["parent"] is None
        else:
            assert row["parent"] == code[: row["level"]]
            assert RELATIONS[row["parent"]]["level"] == row["level"] - 1
    levels = [row["level"] for row in RELATIONS.values()]
    assert (levels.count(1), levels.count(2), levels.count(3)) == (20, 149, 144)


@pytest.mark.parametrize(
    ("code", "binary", "quad", "label"),
    [
        ("010", "cooperation", 1, "verbal cooperation"),
        ("04", "cooperation", 1, "verbal cooperation"),
        ("057", "cooperation", 2, "material cooperation"),
        ("084", "cooperation", 2, "material cooperation"),
        ("090", "conflict", 3, "verbal conflict"),
        ("155", "conflict", 3, "verbal conflict"),
        ("17", "conflict", 4, "material conflict"),
        ("190", "conflict", 4, "material conflict"),
    ],
)
def test_mirai_classes(code, binary, quad, label):
    row = RELATIONS[code]
    assert (row["binary_class"], row["quad_class"], row["quad_label"]) == (binary, quad, label)


@pytest.mark.parametrize(
    ("cameo", "iso3"),
    [
        ("ROM", "ROU"),
        ("TMP", "TLS"),
        ("IMY", "IMN"),
        ("MTN", "MNE"),
        ("KSV", "XKX"),
        ("USA", "USA"),
        ("SSD", "SSD"),
    ],
)
def test_crosswalk(cameo, iso3):
    assert (CAMEO_COUNTRIES[cameo]["iso3"], CAMEO_COUNTRIES[cameo]["kind"]) == (iso3, "country")


@pytest.mark.parametrize(
    ("cameo", "kind"),
    [
        ("EUR", "region"),
        ("MEA", "region"),
        ("WST", "region"),
        ("AFR", "region"),
        ("WSB", "other"),
        ("ANT", "other"),
    ],
)
def test_regions_and_others_have_no_iso3(cameo, kind):
    assert (CAMEO_COUNTRIES[cameo]["iso3"], CAMEO_COUNTRIES[cameo]["kind"]) == (None, kind)


def test_every_official_cameo_country_code_is_classified():
    assert tsv("CAMEO.country.txt").keys() <= CAMEO_COUNTRIES.keys()
    mapped = {row["iso3"] for row in CAMEO_COUNTRIES.values()} - {None}
    assert mapped <= COUNTRIES.keys()


def test_every_mirai_country_exists():
    assert tsv("mirai_countries.tsv").keys() <= COUNTRIES.keys()


def test_countries_have_names_continents_and_regions():
    assert all(row["name"] and row["continent"] and row["un_region"] for row in COUNTRIES.values())
    assert COUNTRIES["XKX"]["name"] == "Kosovo"


@pytest.mark.parametrize(
    ("iso3", "continent"),
    [
        ("FRA", "Europe"),
        ("BRA", "America"),
        ("CHN", "Asia"),
        ("NGA", "Africa"),
        ("AUS", "Oceania"),
        ("XKX", "Europe"),
        ("ATA", "Antarctica"),
    ],
)
def test_continents(iso3, continent):
    assert COUNTRIES[iso3]["continent"] == continent
