"""Shipped reference tables: in step with their build, complete, and right on hand-checked rows."""

import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from gdelt_forecast.reference import build, tables

SOURCES = build.SOURCES


def rows(table: pa.Table, key: str) -> dict[str, dict]:
    return {row[key]: row for row in table.to_pylist()}


def tsv(name: str) -> dict[str, str]:
    lines = (SOURCES / name).read_text(encoding="utf-8").splitlines()[1:]
    return dict(line.split("\t") for line in lines)


RELATIONS = rows(tables.relations(), "code")
COUNTRIES = rows(tables.countries(), "iso3")
CAMEO_COUNTRIES = rows(tables.cameo_countries(), "cameo_code")
COUNTRY_NAMES = tables.country_names().to_pylist()
# Fragments of UTF-8 read as Latin-1/Windows-1252 ("Ã", "â€") or as Mac Roman ("‚Ä", "¬").
MOJIBAKE = ("\u00c3", "\u00e2\u20ac", "\u201a\u00c4", "\u00ac", "\u00c2")


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


def test_every_mirai_code_has_a_one_sentence_description():
    mirai = [row for row in RELATIONS.values() if row["level"] <= 2]
    assert len(mirai) == 169
    for row in mirai:
        text = row["description"]
        assert text and text == text.strip() and text.endswith("."), row["code"]
        assert not re.search(r"\.\s+[A-Z]", text), row["code"]  # a second sentence
    # MIRAI's API maps each description back to its code.
    assert len({row["description"] for row in mirai}) == len(mirai)


def test_descriptions_carry_no_mojibake():
    described = [row for row in RELATIONS.values() if row["description"] is not None]
    assert len(described) == 313 - 4  # the four cut-off level-3 texts stay null
    for row in described:
        assert not any(bad in row["description"] for bad in MOJIBAKE), row["code"]
        assert row["description"] == row["description"].strip(), row["code"]


def test_codebook_mojibake_is_repaired_or_fails_the_build():
    assert build._repair("somebody else\u201a\u00c4\u00f4s") == "somebody else\u2019s"
    assert build._repair("\u201a\u00c4\u00fasix-party\u201a\u00c4\u00f9") == "\u201csix-party\u201d"
    with pytest.raises(ValueError):
        build._repair("Ankara\u201a\u00c4\u00f4s C\u00ac? ankaya")  # a usage example, unused


@pytest.mark.parametrize(
    ("code", "description"),
    [
        ("010", "All public statements expressed verbally or in action not otherwise specified."),
        ("01", "All public statements expressed verbally or in action."),
        ("04", "All consultations and meetings."),
        (
            "1711",
            "Use force to take control of somebody else\u2019s property, confiscate, expropriate.",
        ),
        (
            "044",
            "Meet, come together, gather with others at a neutral location, some place with "
            "which none of the attending parties are associated.",
        ),
        ("106", "Require, order party(ies) to meet, negotiate."),
        ("151", "Heighten police readiness and caution; be prepared to use force."),
        ("153", "Increase the number of police personnel and/or weapons."),
        ("155", build.WRITTEN["155"][1]),
        ("176", build.WRITTEN["176"][1]),
        ("0254", None),
    ],
)
def test_descriptions(code, description):
    assert RELATIONS[code]["description"] == description


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


def test_every_country_has_its_names_preferred_first():
    names: dict[str, list[str]] = {}
    for row in COUNTRY_NAMES:
        assert row["rank"] == len(names.setdefault(row["iso3"], []))
        names[row["iso3"]].append(row["name"])
    assert list(names) == sorted(COUNTRIES)
    assert all(names[iso3][0] == row["name"] for iso3, row in COUNTRIES.items())


def test_country_names_are_distinct_ignoring_case():
    keys = [(row["iso3"], row["name"].lower()) for row in COUNTRY_NAMES]
    assert len(set(keys)) == len(keys)
    assert all(row["name"] and row["name"] == row["name"].strip() for row in COUNTRY_NAMES)


@pytest.mark.parametrize(
    ("iso3", "name"),
    [
        ("CHN", "China"),
        ("CHN", "People's Republic of China"),
        ("USA", "United States"),
        ("USA", "United States of America"),
        ("RUS", "Russia"),
        ("RUS", "Russian Federation"),
        ("GBR", "United Kingdom"),
        ("KOR", "South Korea"),
        ("KOR", "Republic of Korea"),
        ("PRK", "North Korea"),
        ("IRN", "Iran"),
        ("SYR", "Syria"),
        ("TLS", "East Timor"),  # CAMEO's label, via the crosswalk TMP -> TLS
        ("XKX", "Republic of Kosovo"),
    ],
)
def test_country_names(iso3, name):
    assert (iso3, name) in {(row["iso3"], row["name"]) for row in COUNTRY_NAMES}


def test_cameo_misspellings_are_not_country_names():
    names = {(row["iso3"], row["name"]) for row in COUNTRY_NAMES}
    assert ("COL", "Colombia") in names and ("COL", "Columbia") not in names
    assert ("REU", "Runion") not in names


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


def test_build_without_the_dev_extra_exits_2_with_one_line(tmp_path: Path):
    result = run_python(
        "import runpy, sys\n"
        "sys.modules['pycountry'] = None\n"
        f"sys.argv = ['build', '--out', {str(tmp_path)!r}]\n"
        "runpy.run_module('gdelt_forecast.reference.build', run_name='__main__')\n"
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == build.DEV_EXTRA + "\n"
    assert list(tmp_path.iterdir()) == []


def test_tables_need_only_pyarrow():
    result = run_python(
        "import sys\n"
        "for name in ('pycountry', 'country_converter', 'pandas'):\n"
        "    sys.modules[name] = None\n"
        "from gdelt_forecast.reference import tables\n"
        "print(sum(getattr(tables, name)().num_rows for name in tables.SCHEMAS))\n"
    )
    assert result.returncode == 0, result.stderr
    loaded = (COUNTRIES, COUNTRY_NAMES, CAMEO_COUNTRIES, RELATIONS)
    assert int(result.stdout) == sum(len(table) for table in loaded)
