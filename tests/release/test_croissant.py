"""Croissant metadata of a small release: mlcroissant validates it and reads every table back."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import mlcroissant
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gdelt_forecast.release.croissant import croissant, license_url

META = {
    "name": "gdelt-forecast-test",
    "version": "1.0.0",
    "description": "A tiny release for the Croissant test.",
    "license": "cc-by-nc-4.0",
    "citation": "@misc{gdelt-forecast, title={gdelt-forecast}}",
    "url": "https://example.org/gdelt-forecast",
    "date_published": "2025-08-31",
    "creator": "gdelt-forecast",
}
REASONS = pa.list_(pa.struct([("reason", pa.string()), ("rows", pa.int64())]))


def _events(first_id: int) -> pa.Table:
    ids = [first_id, first_id + 1]
    return pa.table(
        {
            "event_id": pa.array(ids, pa.int64()),
            "root_code": pa.array(["04", "19"], pa.string()),
            "url": pa.array([f"https://news.example/{i}" for i in ids], pa.large_string()),
            "quad_class": pa.array([1, 4], pa.int8()),
            "num_mentions": pa.array([3, 7], pa.int16()),
            "day": pa.array([20250807, 20250808], pa.int32()),
            "goldstein": pa.array([1.5, -10.0], pa.float32()),
            "avg_tone": pa.array([0.25, -3.5], pa.float64()),
            "is_root": pa.array([True, False]),
            "date": pa.array([dt.date(2025, 8, 7), dt.date(2025, 8, 8)], pa.date32()),
            "added": pa.array([dt.datetime(2025, 8, 7, 22, 15)] * 2, pa.timestamp("us", tz="UTC")),
            "seen": pa.array([dt.datetime(2025, 8, 7, 22)] * 2, pa.timestamp("s")),
        }
    )


TABLES = {
    "events/part-00000.parquet": _events(1),
    "events/part-00001.parquet": _events(3),
    "funnel/part-00000.parquet": pa.table({
        "rule": ["dedup", "countries"],
        "rows_in": pa.array([10, 8], pa.int64()),
        "top_reasons": pa.array(
            [[{"reason": "duplicate", "rows": 2}, {"reason": "late", "rows": 1}], []], REASONS
        ),
    }),
    "testset/queries.parquet": pa.table({
        "query_id": ["q1", "q2", "q3"],
        "date": pa.array([dt.date(2025, 8, 1 + i) for i in range(3)], pa.date32()),
        "answers": pa.array([["042", "043"], [], None], pa.list_(pa.string())),
    }),
    "reference/relations.parquet": pa.table({"code": ["01", "010"], "level": [1, 2]}),
    # an empty split (the demo's STF train): its file travels, no record set yields nothing
    "tasks/STF/train.parquet": pa.table({"id": pa.array([], pa.string())}),
}  # fmt: skip


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    root = tmp_path_factory.mktemp("release")
    files = []
    for path, table in TABLES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, root / path, compression="zstd")
        data = (root / path).read_bytes()
        files.append(
            {
                "path": path,
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "rows": table.num_rows,
            }
        )
    return root, files


@pytest.fixture(scope="module")
def dataset(release: tuple[Path, list[dict]]) -> mlcroissant.Dataset:
    root, files = release
    path = root / "croissant.json"
    path.write_text(json.dumps(croissant(root, META, files), indent=2, ensure_ascii=False))
    return mlcroissant.Dataset(jsonld=str(path))


def _records(dataset: mlcroissant.Dataset, name: str) -> list[dict]:
    return list(dataset.records(record_set=name))


def test_mlcroissant_validates_without_warnings(dataset: mlcroissant.Dataset) -> None:
    assert not dataset.metadata.ctx.issues.errors
    assert not dataset.metadata.ctx.issues.warnings


def test_every_table_reads_back_with_its_row_count(dataset: mlcroissant.Dataset) -> None:
    rows = {"events": 4, "funnel": 2, "relations": 2, "queries": 3}  # in layout.TABLES order
    assert [rs.name for rs in dataset.metadata.record_sets] == list(rows)
    assert {name: len(_records(dataset, name)) for name in rows} == rows
    files = {f.name for f in dataset.metadata.distribution}
    assert "tasks/STF/train.parquet" in files


def test_values_read_back(dataset: mlcroissant.Dataset) -> None:
    events = sorted(_records(dataset, "events"), key=lambda r: r["events/event_id"])
    assert [r["events/event_id"] for r in events] == [1, 2, 3, 4]
    first = events[0]
    assert first["events/root_code"] == b"04"
    assert first["events/url"] == b"https://news.example/1"
    assert first["events/quad_class"] == 1
    assert first["events/goldstein"] == pytest.approx(1.5)
    assert first["events/is_root"] is True
    assert first["events/date"] == pd.Timestamp("2025-08-07")
    assert first["events/added"] == pd.Timestamp("2025-08-07 22:15", tz="UTC")
    assert first["events/seen"] == pd.Timestamp("2025-08-07 22:00")

    queries = _records(dataset, "queries")
    assert [q["queries/answers"] for q in queries] == [[b"042", b"043"], [], None]
    assert queries[2]["queries/date"] == pd.Timestamp("2025-08-03")

    funnel = _records(dataset, "funnel")
    assert funnel[0]["funnel/top_reasons"] == [
        {"funnel/top_reasons/reason": b"duplicate", "funnel/top_reasons/rows": 2},
        {"funnel/top_reasons/reason": b"late", "funnel/top_reasons/rows": 1},
    ]
    assert funnel[1]["funnel/top_reasons"] == []
    assert _records(dataset, "relations")[1] == {"relations/code": b"010", "relations/level": 2}


def test_every_sha256_comes_from_the_manifest(release: tuple[Path, list[dict]]) -> None:
    root, files = release
    flipped = [{**f, "sha256": f["sha256"][::-1]} for f in files]
    text = json.dumps(croissant(root, META, flipped))
    assert all(f'"sha256": "{f["sha256"]}"' in text for f in flipped)


def test_deterministic_and_dataset_properties(release: tuple[Path, list[dict]]) -> None:
    root, files = release
    first = croissant(root, META, files)
    assert croissant(root, META, list(reversed(files))) == first
    assert first["license"] == "https://creativecommons.org/licenses/by-nc/4.0/"
    assert first["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    assert "url" not in croissant(root, {**META, "url": None}, files)


def test_license_url() -> None:
    assert license_url("CC0-1.0") == "https://creativecommons.org/publicdomain/zero/1.0/"
    assert license_url("cc-by-sa-4.0") == "https://creativecommons.org/licenses/by-sa/4.0/"
    assert license_url("mit") == "mit"


def test_nested_lists_are_refused(tmp_path: Path) -> None:
    table = pa.table({"x": pa.array([[["a"]]], pa.list_(pa.list_(pa.string())))})
    pq.write_table(table, tmp_path / "subset.parquet")
    files = [{"path": "testset/subset.parquet", "bytes": 1, "sha256": "0" * 64, "rows": 1}]
    (tmp_path / "testset").mkdir()
    (tmp_path / "subset.parquet").rename(tmp_path / "testset/subset.parquet")
    with pytest.raises(TypeError, match="subset/x"):
        croissant(tmp_path, META, files)
