"""The release's tkg/ folder: RE-Net's layout, read here as RE-GCN's loader reads it
(tab-split lines, int ids), mapping one to one onto the release's quads, each quad in the
split its date says."""

from __future__ import annotations

import json
import shutil
from datetime import date, timedelta

import pyarrow.parquet as pq

from gdelt_forecast.release import verify
from gdelt_forecast.release.tkg import write_tkg
from tests.environment.conftest import add_rows


def _read(folder):
    """RE-GCN's _read_dictionary and _read_triplets_as_list, over the three splits."""
    ids = {}
    for kind in ("entity", "relation"):
        lines = (folder / f"{kind}2id.txt").read_text().splitlines()
        ids[kind] = {int(i): name for name, i in (line.split("\t") for line in lines)}
    splits = {
        split: [
            [int(v) for v in line.strip().split("\t")]
            for line in (folder / f"{split}.txt").read_text().splitlines()
        ]
        for split in ("train", "valid", "test")
    }
    return ids, splits


def _decoded(folder, start: date) -> dict[str, set]:
    ids, splits = _read(folder)
    return {
        split: {
            (start + timedelta(days=t), ids["entity"][s], ids["relation"][r], ids["entity"][o])
            for s, r, o, t, zero in rows
            if zero == 0
        }
        for split, rows in splits.items()
    }


def _quads(release) -> list[tuple]:
    table = pq.read_table(release / "quads", columns=["date", "head", "relation", "tail"])
    return [tuple(r.values()) for r in table.to_pylist()]


def test_tkg_maps_one_to_one_onto_the_quads(release):
    manifest = json.loads((release / "manifest.json").read_text())
    folder = release / "tkg"
    ids, splits = _read(folder)
    assert sorted(ids["entity"]) == list(range(len(ids["entity"]))) == list(range(250))
    assert sorted(ids["relation"]) == list(range(len(ids["relation"])))
    assert (folder / "stat.txt").read_text() == f"{len(ids['entity'])}\t{len(ids['relation'])}\n"
    assert all(len(code) == 3 for code in ids["relation"].values())
    decoded = _decoded(folder, date.fromisoformat(manifest["history"]["start"]))
    quads = _quads(release)
    assert sum(len(rows) for rows in splits.values()) == len(quads) == len(set(quads)) > 0
    # The demo's August days are the test month; its July days (2025-07-22 and 07-28) lie in
    # the 30 days before it: valid.
    valid_from = date(2025, 8, 1) - timedelta(days=manifest["config"]["release"]["tkg_valid_days"])
    assert decoded["test"] == {q for q in quads if q[0] >= date(2025, 8, 1)}
    assert decoded["valid"] == {q for q in quads if valid_from <= q[0] < date(2025, 8, 1)}
    assert decoded["valid"] and not decoded["train"]
    assert manifest["tkg"] | {"t": None} == {
        "entities": 250,
        "relations": len(ids["relation"]),
        "train": 0,
        "valid": len(decoded["valid"]),
        "test": len(decoded["test"]),
        "t": None,
    }
    assert "`tkg/` holds the quadruples in RE-Net's layout" in (release / "README.md").read_text()


def split_of(day: date) -> str:
    """The split of a day when the month is 2025-08 and valid_days 30."""
    return "test" if day >= date(2025, 8, 1) else "valid" if day >= date(2025, 7, 2) else "train"


def test_quads_fall_in_the_split_their_date_says(release, tmp_path):
    out = tmp_path / release.name
    shutil.copytree(release, out)
    planted = [
        ("2025-06-30", "train"),
        ("2025-07-01", "train"),
        ("2025-07-02", "valid"),
        ("2025-07-31", "valid"),
        ("2025-08-01", "test"),
    ]
    rows = [
        {
            "date": date.fromisoformat(d),
            "head": "JPN",
            "relation": "042",
            "tail": "KOR",
            "quad_id": d,
        }
        for d, _ in planted
    ]
    add_rows(out, "quads", rows, "planted")
    counts = write_tkg(out, date(2025, 1, 1), date(2025, 8, 1), valid_days=30)
    decoded = _decoded(out / "tkg", date(2025, 1, 1))
    for day, split in planted:
        assert (date.fromisoformat(day), "JPN", "042", "KOR") in decoded[split], day
    before = {
        split: sum(1 for q in _quads(release) if split_of(q[0]) == split)
        for split in ("train", "valid", "test")
    }
    assert counts["train"] == before["train"] + 2 and counts["valid"] == before["valid"] + 2
    assert counts["test"] == before["test"] + 1


def test_verify_catches_a_quad_without_its_line(release, tmp_path):
    out = tmp_path / release.name
    shutil.copytree(release, out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert verify._tkg(out, manifest) == []
    lines = (out / "tkg/test.txt").read_text().splitlines()
    (out / "tkg/test.txt").write_text("\n".join(lines[1:]) + "\n")
    assert verify._tkg(out, manifest) == [
        "tkg/: 1 quads of quads/ have no line, 0 lines match no quad"
    ]
    (out / "tkg/valid.txt").write_text(lines[0] + "\n")  # an August quad filed as valid
    assert "belongs in test.txt" in verify._tkg(out, manifest)[0]
