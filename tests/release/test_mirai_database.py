"""MIRAI's database files, built from a release's Parquet by `release mirai` (not shipped):
MIRAI's columns and the history window, the manifest's sha256 of the bytes the release build
measured, the command that builds them into a release or elsewhere, and `release verify`
building them itself or holding the built ones to those hashes."""

from __future__ import annotations

import csv
import json
import shutil
from datetime import date

import duckdb

from gdelt_forecast.cli import main
from gdelt_forecast.contract.names import MANIFEST
from gdelt_forecast.ground import duck
from gdelt_forecast.release import mirai_database
from gdelt_forecast.release.mirai_database import FILES, differences, measure, write
from gdelt_forecast.release.verify import verify
from tests.testset.test_build import D8, QUADS, warehouse

KG, NEWS = FILES["data_kg"], FILES["data_news"]


def read_tsv(path):
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def test_mirai_database_files_have_mirai_columns_and_the_window(tmp_path):
    """From tables laid out as a release's (a warehouse's, exported), the days D8..Aug 31."""
    root = warehouse(tmp_path / "data", QUADS)
    release = tmp_path / "release"
    places = {"quads": "quads/0.parquet", "quad_docs": "quad_docs/0.parquet",
              "news": "news/0.parquet", "countries": "reference/countries.parquet",
              "relations": "reference/relations.parquet"}  # fmt: skip
    with duckdb.connect(str(root / "warehouse.duckdb"), read_only=True) as con:
        for table, place in places.items():
            (release / place).parent.mkdir(parents=True, exist_ok=True)
            con.execute(f"COPY {table} TO {duck.literal(release / place)} (FORMAT parquet)")
    write(release, tmp_path / "out", D8, date(2025, 8, 31))
    kg, news = read_tsv(tmp_path / "out" / KG), read_tsv(tmp_path / "out" / NEWS)
    assert list(kg[0]) == [
        "DateStr",
        "Actor1CountryCode",
        "Actor2CountryCode",
        "EventBaseCode",
        "Actor1CountryName",
        "Actor2CountryName",
        "RelName",
        "QuadEventCode",
        "QuadEventName",
        "Docid",
        "Docids",
    ]
    assert list(news[0]) == ["Docid", "MD5", "URL", "Date", "Title", "Text", "Abstract"]
    korea = [r for r in kg if r["QuadEventCode"] == "2025-08-08, KOR, 042, CHN"]
    assert len(korea) == 9 and korea[0]["RelName"] == "Make a visit"
    assert korea[0]["QuadEventName"] == "2025-08-08, South Korea, Make a visit, China"
    assert eval(korea[0]["Docids"]) == sorted(r["Docid"] for r in korea)  # how MIRAI reads it
    assert {r["DateStr"] for r in kg} == {"2025-08-08"}  # D7 before the window, September after
    assert len(news) == sum(q[5] for q in QUADS if q[0] == D8)


def test_the_release_lists_them_as_built_and_release_mirai_builds_those_bytes(
    release, tmp_path, capsys
):
    shipped = tmp_path / "shipped"
    shutil.copytree(release, shipped)
    for path in FILES.values():
        (shipped / path).unlink()  # the release as the build leaves it
    manifest = json.loads((shipped / MANIFEST).read_text())
    assert {f["path"] for f in manifest["files"]}.isdisjoint(FILES.values())
    assert [b["path"] for b in manifest["built"]] == [KG, NEWS]
    assert all(b["command"] == "gdelt-forecast release mirai DIR" for b in manifest["built"])
    assert verify(shipped) == []  # verify builds them itself, and checks them

    elsewhere = tmp_path / "elsewhere"
    assert main(["release", "mirai", str(shipped), "--out", str(elsewhere)]) == 0
    assert not (shipped / KG).exists()
    assert differences(elsewhere, manifest["built"]) == []
    for item in manifest["built"]:
        # the header, then a part per month of the history (Jan. 1 to the demo's August)
        assert [p["part"] for p in item["parts"]] == ["header", *(f"2025-{m:02d}" for m in
                                                                 range(1, 9))]  # fmt: skip
        assert (elsewhere / item["path"]).stat().st_size == item["bytes"]
        assert (elsewhere / item["path"]).read_bytes() == (release / item["path"]).read_bytes()
    for _ in range(2):  # into the release itself, and again: the same bytes
        assert main(["release", "mirai", str(shipped)]) == 0
        assert (shipped / KG).read_bytes() == (elsewhere / KG).read_bytes()
    assert f"{shipped / KG}: " in capsys.readouterr().out
    assert verify(shipped) == []  # the built files are no unlisted files


def test_release_mirai_refuses_bytes_that_are_not_the_manifests(release, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    manifest = json.loads((copy / MANIFEST).read_text())
    august = manifest["built"][0]["parts"][-1]
    right, august["sha256"] = august["sha256"], "0" * 64  # as if the Parquet or code changed
    (copy / MANIFEST).write_text(json.dumps(manifest))
    assert main(["release", "mirai", str(copy)]) == 1
    assert f"{KG}: " in capsys.readouterr().err
    assert verify(copy) == [
        f"{KG}: the rows of 2025-08 ({august['bytes']} bytes) has sha256 {right[:12]}..., the "
        "manifest says 000000000000... "
        "(`gdelt-forecast release mirai DIR` builds it from the release's Parquet)"
    ]


def test_verify_reads_no_built_file_but_mirais_two(release, tmp_path):
    """A manifest is outside text: a built path that is not MIRAI's data_kg.csv or
    data_news.csv (one outside the release, here) is refused before any file is read."""
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    outside = tmp_path / "outside.csv"
    outside.write_text("not the release's\n")
    manifest = json.loads((copy / MANIFEST).read_text())
    manifest["built"][0]["path"] = "../outside.csv"
    (copy / MANIFEST).write_text(json.dumps(manifest))
    (problem,) = verify(copy)
    assert problem.startswith(f"{MANIFEST}: unreadable (its built files ")
    assert "are not MIRAI's two" in problem


def test_a_release_measures_the_months_it_shares_with_the_last_from_the_cache(
    release, tmp_path, monkeypatch
):
    """A month's part is a function of its key (the warehouse's, for its files) and what else
    shapes the bytes: measured once, read back after; a month with a new key, or the window's
    cut month, is measured again. The parts in order are the whole file's bytes."""
    manifest = json.loads((release / MANIFEST).read_text())
    keys = {f"2025-{m:02d}": f"key-{m}" for m in range(1, 9)}
    measured = []
    real = mirai_database._month_parts
    monkeypatch.setattr(
        mirai_database, "_month_parts", lambda *a: measured.append(a[1:3]) or real(*a)
    )
    first, last = date(2025, 1, 1), date(2025, 8, 31)
    cache = tmp_path / "cache"
    built = measure(release, first, last, "1GB", keys, cache)
    assert len(measured) == 8 and len(list(cache.iterdir())) == 8
    assert built == manifest["built"] and differences(release, built) == []
    measured.clear()
    assert measure(release, first, last, "1GB", keys, cache) == built
    assert measured == []
    keys["2025-08"] = "another key"  # the month written again
    assert measure(release, first, last, "1GB", keys, cache) == built
    assert measured == [(date(2025, 8, 1), last)]
    measured.clear()
    cut = measure(release, date(2025, 7, 25), last, "1GB", keys, cache)  # July cut: measured
    assert measured == [(date(2025, 7, 25), date(2025, 7, 31))]
    assert [p["part"] for p in cut[0]["parts"]] == ["header", "2025-07", "2025-08"]


def test_verify_names_a_built_file_changed_after_it_was_built(release, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    lines = (copy / KG).read_text(encoding="utf-8").splitlines()  # one line per row
    (copy / KG).write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    problems = verify(copy)
    assert problems[0].startswith(f"{KG}: ") and "the manifest says" in problems[0]
    assert f"{KG}: a (quad, document) of quad_docs without its line (1 rows" in "".join(problems)
    (copy / NEWS).unlink()  # half built: verify builds both, and still holds the other one
    assert [p for p in verify(copy) if "the manifest says" in p] == problems[:1]
