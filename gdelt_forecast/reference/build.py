"""Regenerate the shipped reference tables: `python -m gdelt_forecast.reference.build [--out DIR]`.

Inputs: the files in sources/ (official GDELT lookups, MIRAI's appendix lists, the CAMEO
codebook of the R package icews), pycountry and country_converter (dev-only dependencies).
Output: countries.csv, country_names.csv, cameo_countries.csv and relations.csv (UTF-8, LF,
one header line, rows sorted by code). The few hand-written facts below are checked against
the sources, so a changed source fails the build instead of silently changing a table.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import io
import re
from pathlib import Path
from types import ModuleType

from gdelt_forecast.reference.tables import DATA_DIR, SCHEMAS

SOURCES = Path(__file__).parent / "sources"
KOSOVO = "XKX"
DEV_EXTRA = (
    "python -m gdelt_forecast.reference.build needs the [dev] extra: "
    "pip install 'gdelt-forecast[dev]'"
)

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
# CAMEO's misspelt labels (Colombia, Réunion): kept as cameo_label, never offered as a name.
MISSPELT = {"COL": "Columbia", "REU": "Runion"}
# Names that MIRAI's prompts and name lookup use, which every rebuild must keep.
KNOWN_NAMES = {
    "CHN": "China",
    "USA": "United States",
    "RUS": "Russia",
    "GBR": "United Kingdom",
    "KOR": "South Korea",
    "PRK": "North Korea",
    "IRN": "Iran",
    "SYR": "Syria",
}

# Two defects of the official CAMEO.eventcodes.txt, repaired here. 044 was written as Mac
# Roman curly quotes and read back as Latin-1 (the quotes became Ò/Ó, the "t" and a space
# were lost); the CAMEO manual reads “third” location.
MOJIBAKE = {"044": ("Meet at a \u00d2hird\u00d3location", "Meet at a \u201cthird\u201d location")}
# 106 has no line of its own: its code, Goldstein score and text are fused onto the 1056 line.
FUSED = re.compile(r"(?P<text>.*?)(?P<code>\d{3,4}):\[-?\d+\.\d\] (?P<fused>.*)")
# MIRAI lists CAMEO's two cyber codes, which GDELT's file (and coder) lack; kept without a
# cameo_name so the relation space is MIRAI's.
MIRAI_ONLY = frozenset({"155", "176"})

# The CAMEO codebook's definitions as the R package icews ships them: Windows-1252 text whose
# quotes had been through a UTF-8 -> Mac Roman misreading ("’" became "‚Äô"), which
# encoding back to Mac Roman and decoding as UTF-8 undoes.
CODEBOOK = SOURCES / "cameo-codes.csv"
# All the non-ASCII a repaired text may hold; anything else is mojibake left over.
TYPOGRAPHIC = frozenset("\u2018\u2019\u201c\u201d\u2013\u2014")
# The codebook defines no category (01-20). Each takes its residual code's (X0) definition less
# the residual clause, as MIRAI's own table does (04: "All consultations and meetings."), so
# that it stays distinct from X0's: MIRAI's API maps each description back to one code.
RESIDUAL = re.compile(r"(?P<definition>.+?),? not otherwise specified\.")
# 044's definition runs on with a coding rule (042's and 043's usage note); dropped.
RUN_ON = {
    "044": " If mediation or negotiation is mentioned specifically as having taken place, "
    "those events take precedence over unspecified visits or meetings."
}
# Level-3 definitions cut off mid-phrase ("... stops or eases economic "); left null.
TRUNCATED = frozenset({"0254", "0354", "1124", "1244"})
# Hand-written definitions of MIRAI codes whose codebook text is unusable, each with the text
# it replaces (None: the codebook has no such code), so a changed source fails the build.
WRITTEN = {
    # Cut off after "and"; completed as 081 words the same sanctions.
    "132": (
        "Threaten to impose or expand non-force administrative restrictions and",
        "Threaten to impose or expand non-force administrative restrictions and penalties, "
        "not otherwise specified.",
    ),
    # A placeholder; 152's definition, said of the police.
    "151": (
        "Need new description.",
        "Heighten police readiness and caution; be prepared to use force.",
    ),
    # A copy of 154's definition (armed forces) on the police code.
    "153": (
        "Increase the number of military personnel and/or weapons.",
        "Increase the number of police personnel and/or weapons.",
    ),
    # MIRAI's cyber codes (MIRAI_ONLY), worded as their siblings 154 and 171-175 are.
    "155": (None, "Increase the number of cyber-forces personnel and/or cyber weapons."),
    "176": (
        None,
        "Attack computer systems or networks to disrupt, damage, or take control of them.",
    ),
}

QUAD_LABELS = {
    1: "verbal cooperation",
    2: "material cooperation",
    3: "verbal conflict",
    4: "material conflict",
}


class MissingDevExtra(ImportError):
    """pycountry or country_converter, which only the [dev] extra installs, is missing."""


def _dev_import(name: str) -> ModuleType:
    # Imported on use: the shipped tables need neither package, so a plain install only
    # fails when it rebuilds them, and then with a hint.
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise MissingDevExtra(DEV_EXTRA) from e


def _read_tsv(path: Path) -> list[list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines[1:]]


def _country_converter_rows() -> dict[str, dict[str, str]]:
    # Its table is read as text: CountryConverter() cannot load it under pandas 3 (Namibia's
    # ISO2 "NA" comes back as NaN), and a plain reader needs no pandas.
    data_file = _dev_import("country_converter.country_converter").COUNTRY_DATA_FILE
    with open(data_file, encoding="utf-8", newline="") as f:
        rows = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        return {row["ISO3"]: row for row in rows if not row["obsolete"]}


def country_rows() -> list[tuple[str, str, str, str]]:
    regions = _country_converter_rows()
    mirai = dict(_read_tsv(SOURCES / "mirai_countries.tsv"))
    iso = _dev_import("pycountry").countries
    names = {c.alpha_3: getattr(c, "common_name", c.name) for c in iso}
    names |= {code: mirai[code] for code in MIRAI_NAMED}
    names[KOSOVO] = regions[KOSOVO]["name_short"]
    rows = []
    for iso3 in sorted(names):
        region = regions.get(iso3, {})
        if not (region.get("continent") and region.get("UNregion")):
            raise ValueError(f"country_converter has no continent or UN region for {iso3}")
        rows.append((iso3, names[iso3], region["continent"], region["UNregion"]))
    return rows


def country_name_rows(
    countries: list[tuple[str, str, str, str]], cameo_countries: list[tuple[str, str, str, str]]
) -> list[tuple[str, int, str]]:
    """Each country's distinct English names, rank 0 its countries.csv name, then pycountry's
    name, official and common names, country_converter's short and official names, MIRAI's
    name and CAMEO's labels; a name differing only in case from an earlier one is dropped."""
    iso = _dev_import("pycountry").countries
    converter = _country_converter_rows()
    mirai = dict(_read_tsv(SOURCES / "mirai_countries.tsv"))
    if stale := MISSPELT.items() - {(code, label) for code, label, _, _ in cameo_countries}:
        raise ValueError(f"MISSPELT out of date with CAMEO.country.txt: {stale}")
    cameo: dict[str, list[str]] = {}
    for code, label, iso3, _ in cameo_countries:
        if iso3 and MISSPELT.get(code) != label:
            cameo.setdefault(iso3, []).append(label)
    rows = []
    for iso3, name, *_ in countries:
        entry = iso.get(alpha_3=iso3)
        attrs = ("name", "official_name", "common_name")
        candidates = [
            name,
            *(getattr(entry, attr, "") for attr in attrs),
            converter[iso3]["name_short"],
            converter[iso3]["name_official"],
            mirai.get(iso3, ""),
            *cameo.get(iso3, []),
        ]
        seen: set[str] = set()
        for candidate in filter(None, (c.strip() for c in candidates)):
            if candidate.casefold() not in seen:
                seen.add(candidate.casefold())
                rows.append((iso3, len(seen) - 1, candidate))
    names = {(iso3, name) for iso3, _, name in rows}
    if missing := set(KNOWN_NAMES.items()) - names:
        raise ValueError(f"country names lost: {sorted(missing)}")
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


def _repair(text: str) -> str:
    if text.isascii():
        return text
    try:
        repaired = text.encode("mac_roman").decode("utf-8")
    except UnicodeError as e:
        raise ValueError(f"codebook text is not the known mojibake: {text!r}") from e
    if left := {ch for ch in repaired if not ch.isascii()} - TYPOGRAPHIC:
        raise ValueError(f"mojibake {left} left in {repaired!r}")
    return repaired


def _expect(code: str, text: str | None, expected: str | None) -> None:
    if text != expected:
        raise ValueError(f"codebook text of {code} changed: {text!r}, expected {expected!r}")


def codebook_descriptions() -> dict[str, str]:
    """One-sentence definitions from the icews codebook, repaired, keyed by CAMEO code;
    categories take their residual code's, and WRITTEN's codes the hand-written ones."""
    text = CODEBOOK.read_bytes().decode("cp1252")
    # Every definition ends with a space; "NA" is R's missing value (the 20 categories).
    raw = {
        row["code"]: _repair(row["description"]).strip()
        for row in csv.DictReader(io.StringIO(text))
        if row["description"] != "NA"
    }
    for code, (replaced, _) in WRITTEN.items():
        _expect(code, raw.get(code), replaced)
    for code, run_on in RUN_ON.items():
        _expect(code, raw[code][-len(run_on) :], run_on)
        raw[code] = raw[code][: -len(run_on)]
    descriptions = {code: written for code, (_, written) in WRITTEN.items()}
    for code, definition in raw.items():
        if code in WRITTEN:
            continue
        if definition.endswith(".") == (code in TRUNCATED):
            raise ValueError(f"TRUNCATED out of date with the codebook on {code}: {definition!r}")
        if code not in TRUNCATED:
            descriptions[code] = definition
    for root in sorted({code[:2] for code in descriptions} - descriptions.keys()):
        if not (residual := RESIDUAL.fullmatch(descriptions[root + "0"])):
            raise ValueError(f"{root}0 has no residual clause: {descriptions[root + '0']!r}")
        descriptions[root] = residual["definition"] + "."
    if len(set(descriptions.values())) < len(descriptions):
        raise ValueError("two codes share a description")
    return descriptions


def relation_rows() -> list[tuple[str, int, str, str, str, str, str, int, str]]:
    """Every CAMEO code: MIRAI's names on levels 1 and 2 (its relation space), the official
    text on level 3, which MIRAI drops as too noisy but a GDELT EventCode may carry; each
    with the codebook's definition (always on levels 1 and 2)."""
    mirai = dict(_read_tsv(SOURCES / "mirai_relations.tsv"))
    official = cameo_event_codes()
    descriptions = codebook_descriptions()
    short = {code for code in official if len(code) <= 3}
    if diff := (short | MIRAI_ONLY) ^ mirai.keys():
        raise ValueError(f"MIRAI's relations and CAMEO.eventcodes.txt disagree on {diff}")
    rows = []
    for code in sorted(official.keys() | MIRAI_ONLY):
        level = len(code) - 1
        binary, quad = _classes(code)
        parent = code[:level] if level > 1 else ""
        name = mirai.get(code, official.get(code, ""))
        description = descriptions.get(code, "")
        if level <= 2 and not description:
            raise ValueError(f"MIRAI code {code} has no description")
        cameo_name = official.get(code, "")
        rows.append(
            (code, level, parent, name, description, cameo_name, binary, quad, QUAD_LABELS[quad])
        )
    return rows


def build(out_dir: Path = DATA_DIR) -> dict[str, int]:
    """Write the four tables into out_dir; returns their row counts."""
    countries = country_rows()
    cameo_countries = cameo_country_rows({row[0] for row in countries})
    tables = {
        "countries": countries,
        "country_names": country_name_rows(countries, cameo_countries),
        "cameo_countries": cameo_countries,
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
        prog="python -m gdelt_forecast.reference.build",
        description="Regenerate the reference tables.",
    )
    parser.add_argument(
        "--out", type=Path, default=DATA_DIR, help="output folder (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    try:
        counts = build(args.out)
    except MissingDevExtra as e:
        parser.exit(2, f"{e}\n")
    print(
        ", ".join(f"{name}.csv: {n} rows" for name, n in counts.items()), f"written to {args.out}"
    )


if __name__ == "__main__":
    main()
