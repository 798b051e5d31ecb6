"""Regenerate the shipped reference tables: `python -m pipeline.reference.build [--out DIR]`.

Inputs: the files in sources/ (official GDELT lookups, MIRAI's appendix lists), pycountry and
country_converter (dev-only dependencies). Output: countries.csv, cameo_countries.csv and
relations.csv (UTF-8, LF, one header line, rows sorted by code). The few hand-written facts
below are checked against the sources, so a changed source fails the build instead of
silently changing a table.
"""

from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path

import pycountry
from country_converter.country_converter import COUNTRY_DATA_FILE

from pipeline.reference.tables import DATA_DIR, SCHEMAS

SOURCES = Path(__file__).parent / "sources"
KOSOVO = "XKX"

# pycountry has no common_name for these and its ISO name is a formal or inverted form
# ("Congo, The Democratic Republic of the"), so they take MIRAI's short name instead.
MIRAI_NAMED = ("COD", "FLK", "FSM", "PSE", "RUS", "VAT", "VGB", "VIR")

# The CAMEO codes of current countries that are not their ISO-3166 alpha-3 code (found by
# checking every code of CAMEO.country.txt against pycountry; the build re-checks each run).
CROSSWALK = {
    "ROM": "ROU",  # Romania: ISO's code until 2002
    "TMP": "TLS",  # East Timor: ISO's code until 2002
    "IMY": "IMN",  # Isle of Man: CAMEO's own code
    "MTN": "MNE",  # Montenegro: CAMEO's own code (ISO has MNE since 2006)
    "KSV": KOSOVO,  # Kosovo: no ISO code; XKX as in MIRAI's tables and the World Bank
}
# Country codes that CAMEO.country.txt, older than both countries, lacks.
SUPPLEMENT = {
    "KSV": "Kosovo",  # the code of the CAMEO-based Phoenix dictionaries; not yet seen in GDELT
    "SSD": "South Sudan",  # independent in 2011; GDELT uses it (2025-08-07 22:00 export)
}
# Regional codes: not a country, so never one side of a relation quadruple.
REGIONS = frozenset(
    {
        *("AFR", "CFR", "EAF", "NAF", "SAF", "WAF"),  # Africa and its parts
        *("ASA", "CAS", "EIN", "MEA", "PGS", "SAS", "SEA"),  # Asia, Middle East, Persian Gulf
        *("BLK", "CAU", "CEU", "EEU", "EUR", "MDT", "SCN"),  # Europe, Caucasus, Mediterranean
        *("CRB", "LAM", "NMR", "SAM", "WST"),  # the Americas and "The West"
    }
)
# Neither a country nor a region: places inside one country (West Bank and Gaza Strip in
# PSE, Baghdad in IRQ) and the Netherlands Antilles, split in 2010 into CUW, SXM and BES.
# Left unmapped, as in MIRAI, which kept only actor codes that are ISO codes.
OTHER = frozenset({"ANT", "BAG", "GZS", "WSB"})

# Two defects of the official CAMEO.eventcodes.txt, repaired here. 044 was written as Mac
# Roman curly quotes and read back as Latin-1 (the quotes became Ò/Ó, the "t" and a space
# were lost); the CAMEO manual reads “third” location.
MOJIBAKE = {"044": ("Meet at a \u00d2hird\u00d3location", "Meet at a \u201cthird\u201d location")}
# 106 has no line of its own: its code, Goldstein score and text are fused onto the 1056 line.
FUSED = re.compile(r"(?P<text>.*?)(?P<code>\d{3,4}):\[-?\d+\.\d\] (?P<fused>.*)")
# MIRAI lists CAMEO's two cyber codes, which GDELT's file (and coder) lack; kept without a
# cameo_name so the relation space is MIRAI's.
MIRAI_ONLY = frozenset({"155", "176"})

QUAD_LABELS = {
    1: "verbal cooperation",
    2: "material cooperation",
    3: "verbal conflict",
    4: "material conflict",
}


def _read_tsv(path: Path) -> list[list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines[1:]]


def _country_converter_rows() -> dict[str, dict[str, str]]:
    # Its table is read as text: CountryConverter() cannot load it under pandas 3 (Namibia's
    # ISO2 "NA" comes back as NaN), and a plain reader needs no pandas.
    with open(COUNTRY_DATA_FILE, encoding="utf-8", newline="") as f:
        rows = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        return {row["ISO3"]: row for row in rows if not row["obsolete"]}


def country_rows() -> list[tuple[str, str, str, str]]:
    regions = _country_converter_rows()
    mirai = dict(_read_tsv(SOURCES / "mirai_countries.tsv"))
    names = {c.alpha_3: getattr(c, "common_name", c.name) for c in pycountry.countries}
    names |= {code: mirai[code] for code in MIRAI_NAMED}
    names[KOSOVO] = regions[KOSOVO]["name_short"]
    rows = []
    for iso3 in sorted(names):
        region = regions.get(iso3, {})
        if not (region.get("continent") and region.get("UNregion")):
            raise ValueError(f"country_converter has no continent or UN region for {iso3}")
        rows.append((iso3, names[iso3], region["continent"], region["UNregion"]))
    return rows


def cameo_country_rows(iso3_codes: set[str]) -> list[tuple[str, str, str, str]]:
    labels = dict(_read_tsv(SOURCES / "CAMEO.country.txt"))
    if stale := (labels.keys() & SUPPLEMENT.keys()) | ((REGIONS | OTHER) - labels.keys()):
        raise ValueError(f"SUPPLEMENT, REGIONS or OTHER out of date with the source: {stale}")
    labels |= SUPPLEMENT
    rows = []
    for code in sorted(labels):
        if code in REGIONS or code in OTHER:
            iso3, kind = "", "region" if code in REGIONS else "other"
        else:
            iso3, kind = CROSSWALK.get(code, code), "country"
            if iso3 not in iso3_codes:
                raise ValueError(f"CAMEO code {code} ({labels[code]}) is not ISO and not listed")
        rows.append((code, labels[code], iso3, kind))
    return rows


def cameo_event_codes() -> dict[str, str]:
    """Every code of the official CAMEO.eventcodes.txt with its text, defects repaired."""
    codes: dict[str, str] = {}
    for code, text in _read_tsv(SOURCES / "CAMEO.eventcodes.txt"):
        entries = [(code, text)]
        if fused := FUSED.fullmatch(text):
            entries = [(code, fused["text"]), (fused["code"], fused["fused"])]
        for entry_code, entry_text in entries:
            if entry_code in MOJIBAKE:
                broken, repaired = MOJIBAKE[entry_code]
                if entry_text != broken:
                    raise ValueError(f"{entry_code} changed in the source: {entry_text!r}")
                entry_text = repaired
            if entry_code in codes:
                raise ValueError(f"CAMEO code {entry_code} listed twice")
            codes[entry_code] = entry_text.strip()
    return codes


def _classes(code: str) -> tuple[str, int]:
    # MIRAI's classes (Figure 2a; agent_evaluation/eval.py calls "cooperation" "mediation").
    # They differ from GDELT's QuadClass column, which splits roots 01-05/06-09/10-14/15-20.
    root = int(code[:2])
    quad = 1 if root <= 4 else 2 if root <= 8 else 3 if root <= 16 else 4
    return ("cooperation" if root <= 8 else "conflict"), quad


def relation_rows() -> list[tuple[str, int, str, str, str, str, int, str]]:
    """Every CAMEO code: MIRAI's names on levels 1 and 2 (its relation space), the official
    text on level 3, which MIRAI drops as too noisy but a GDELT EventCode may carry."""
    mirai = dict(_read_tsv(SOURCES / "mirai_relations.tsv"))
    official = cameo_event_codes()
    short = {code for code in official if len(code) <= 3}
    if diff := (short | MIRAI_ONLY) ^ mirai.keys():
        raise ValueError(f"MIRAI's relations and CAMEO.eventcodes.txt disagree on {diff}")
    rows = []
    for code in sorted(official.keys() | MIRAI_ONLY):
        level = len(code) - 1
        binary, quad = _classes(code)
        parent = code[:level] if level > 1 else ""
        name = mirai.get(code, official.get(code, ""))
        cameo_name = official.get(code, "")
        rows.append((code, level, parent, name, cameo_name, binary, quad, QUAD_LABELS[quad]))
    return rows


def build(out_dir: Path = DATA_DIR) -> dict[str, int]:
    """Write the three tables into out_dir; returns their row counts."""
    countries = country_rows()
    tables = {
        "countries": countries,
        "cameo_countries": cameo_country_rows({row[0] for row in countries}),
        "relations": relation_rows(),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        with (out_dir / f"{name}.csv").open("w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(SCHEMAS[name].names)
            writer.writerows(rows)
    return {name: len(rows) for name, rows in tables.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.reference.build", description="Regenerate the reference tables."
    )
    parser.add_argument(
        "--out", type=Path, default=DATA_DIR, help="output folder (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    counts = build(args.out)
    print(
        ", ".join(f"{name}.csv: {n} rows" for name, n in counts.items()), f"written to {args.out}"
    )


if __name__ == "__main__":
    main()
