"""The demo month's release: manifest, verify, reproducibility, immutability, and loading it
the ways consumers do (datasets, mlcroissant, DuckDB, MIRAI's data folder, another user)."""

import csv
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from datetime import date
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gdelt_forecast.cli import main
from gdelt_forecast.contract.layout import TABLES
from gdelt_forecast.contract.names import MANIFEST
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.ground.dates import MonthError, history
from gdelt_forecast.ground.files import DIR_MODE, FILE_MODE
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.pipeline.stages import STAGES
from gdelt_forecast.release import card
from gdelt_forecast.release.build import ReleaseError, next_version, update_latest
from gdelt_forecast.release.verify import verify
from gdelt_forecast.tasks.records import SCHEMA
from tests.environment.conftest import terms
from tests.release.conftest import MONTH, build_demo_month


def manifest(root: Path) -> dict:
    return json.loads((root / MANIFEST).read_text())


def table_rows(root: Path) -> dict[str, int]:
    rows: dict[str, int] = {}
    for item in manifest(root)["files"]:
        for table in TABLES:
            if Path(item["path"]).match(table.glob):
                rows[table.name] = rows.get(table.name, 0) + item["rows"]
    return rows


def test_manifest_lists_every_file_with_its_size_and_sha256(release):
    m = manifest(release)
    listed = {item["path"]: item for item in m["files"]}
    on_disk = {p.relative_to(release).as_posix() for p in release.rglob("*") if p.is_file()}
    built = {"mirai/MIRAI/data_kg.csv", "mirai/MIRAI/data_news.csv"}  # by `release mirai`
    assert set(listed) == on_disk - {MANIFEST} - built
    assert {item["path"] for item in m["built"]} == built
    for path, item in listed.items():
        data = (release / path).read_bytes()
        assert item["bytes"] == len(data) and item["sha256"] == hashlib.sha256(data).hexdigest()
        if path.endswith(".parquet"):
            assert item["rows"] == pq.ParquetFile(release / path).metadata.num_rows
    assert (m["name"], m["version"], m["month"]) == ("gdelt-forecast", "2025.08.0", MONTH)
    assert m["history"] == {"start": "2025-01-01", "end": "2025-08-31"}
    assert m["config"]["events"]["min_daily_mentions"] == 1  # the demo config, in full
    assert m["gdelt"]["slots"] == 5 and m["gdelt"]["files"] == 10  # the real one, 4 derived
    slots = pq.read_table(release / "gdelt/slots.parquet").to_pylist()
    assert {s["table"] for s in slots} == {"export", "mentions"}
    assert all(len(s["md5"]) == 32 for s in slots)
    assert [r["rule"] for r in m["funnel"]][:2] == ["bronze", "same_day"]
    assert m["funnel"][-1]["rows_out"] == table_rows(release)["events"] == 165
    assert m["embeddings"]["embedding_model"] == "all-MiniLM-L6-v2-onnx-int8"
    assert (release.parent / "LATEST").read_text() == "2025.08.0\n"


def test_the_history_is_the_warehouse_files_linked_and_listed_as_they_are(release, demo_cfg):
    # One file on the disk, two names: every release that holds a month holds this file.
    warehouse = demo_cfg.data_root / "warehouse"
    listed = {f["path"]: f["sha256"] for f in json.loads((release / MANIFEST).read_text())["files"]}
    for table in ("events", "quads", "news", "news_terms", "quad_docs", "funnel"):
        for month in ("2025-07", "2025-08"):
            name = f"{table}/{month}-part-0.parquet"
            assert (release / name).stat().st_ino == (warehouse / name).stat().st_ino, name
            assert listed[name] == hashlib.sha256((warehouse / name).read_bytes()).hexdigest()


def test_verify_passes_and_names_each_bad_file(release, tmp_path, capsys):
    assert verify(release) == []
    assert main(["release", "verify", str(release)]) == 0
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    quads = copy / "quads/2025-08-part-0.parquet"
    data = bytearray(quads.read_bytes())
    data[len(data) // 2] ^= 0x01
    quads.write_bytes(bytes(data))
    (copy / "plots/funnel.png").unlink()
    (copy / "notes.txt").write_text("added by hand\n")
    problems = verify(copy)
    assert problems == [
        "plots/funnel.png: listed in the manifest but missing",
        "quads/2025-08-part-0.parquet: sha256 differs from the manifest",
        "notes.txt: not listed in the manifest",
    ]
    assert main(["release", "verify", str(copy)]) == 1
    assert "quads/2025-08-part-0.parquet: sha256 differs" in capsys.readouterr().err


def _rewrite(root: Path, path: str, table: pa.Table) -> None:
    """Replace a table and re-list it, as a careless hand would, so only the content checks
    can catch it."""
    pq.write_table(table, root / path)
    _relist(root, path, rows=table.num_rows)


def _relist(root: Path, path: str, **listing) -> None:
    """List ``path`` in the manifest as it now is on disk (size, sha256, and ``listing``),
    among its files or what ``release mirai`` builds."""
    m = manifest(root)
    data = (root / path).read_bytes()
    for item in [*m["files"], *m["built"]]:
        if item["path"] == path:
            item.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest(), **listing)
            item.pop("parts", None)  # a built file listed whole, as before its parts
    (root / MANIFEST).write_text(json.dumps(m))


def test_verify_catches_leakage_and_schema_drift(release, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    queries = pq.read_table(copy / "testset/queries.parquet")
    late = queries.slice(0, 1).to_pylist()[0]
    late.update(query_id="late", date=late["date"].replace(month=9, day=1))
    late["cutoff"] = late["date"].replace(day=1, month=8, year=2025)
    _rewrite(
        copy,
        "testset/queries.parquet",
        pa.concat_tables([queries, pa.Table.from_pylist([late], queries.schema)]),
    )
    assert verify(copy) == [
        "testset/queries.parquet: cutoff not before the date by its horizon (1 rows, e.g. late)",
        "testset/queries.parquet: dated outside the test month (1 rows, e.g. late)",
    ]
    shutil.rmtree(copy)
    shutil.copytree(release, copy)
    events = pq.read_table(copy / "events/2025-08-part-0.parquet")
    _rewrite(copy, "events/2025-08-part-0.parquet", events.drop_columns(["daily_mentions"]))
    assert verify(copy) == [
        "events/2025-08-part-0.parquet: schema differs from the card's `events` features"
    ]


def test_a_second_build_gives_the_same_bytes(demo_built, release, tmp_path):
    # the same source URLs: the mirror the first was built from
    other = build_demo_month(tmp_path / "data", demo_built / "mirror")
    again = Path(run("release", other, MONTH).path)
    assert again.name == release.name
    first = {i["path"]: i["sha256"] for i in manifest(release)["files"]}
    second = {i["path"]: i["sha256"] for i in manifest(again)["files"]}
    assert first == second  # every file but manifest.json, which alone holds the time
    assert manifest(release)["created"] <= manifest(again)["created"]


def test_an_existing_version_is_refused_and_left_alone(demo_cfg, release, capsys):
    before = {p: p.stat().st_mtime_ns for p in release.rglob("*")}
    with pytest.raises(ReleaseError, match="exists .* releases are immutable"):
        run("release", demo_cfg, MONTH, version=release.name)
    args = [
        "release",
        "--month",
        MONTH,
        "--version",
        release.name,
        "--data-root",
        str(demo_cfg.data_root),
        "--config",
        "configs/demo.yaml",
    ]
    assert main(args) == 1
    assert "immutable" in capsys.readouterr().err
    assert {p: p.stat().st_mtime_ns for p in release.rglob("*")} == before
    assert not list(release.parent.glob(".*.tmp"))
    assert next_version(release.parent, MONTH) == "2025.08.1"
    with pytest.raises(ReleaseError, match="version '../x'"):
        run("release", demo_cfg, MONTH, version="../x")


def test_datasets_and_duckdb_load_every_table_with_the_manifest_counts(release):
    datasets = pytest.importorskip("datasets")
    datasets.disable_progress_bars()
    rows = table_rows(release)
    header = card.parse_header((release / "README.md").read_text())
    configs = {c["config_name"] for c in header["configs"]}
    by_config: dict[str, dict[str, int]] = {}  # config -> split -> rows (a task's splits)
    for table in TABLES:
        by_config.setdefault(table.config_name, {})[table.split] = rows.get(table.name, 0)
    # datasets reads no empty file: a config for every table or task with rows
    assert configs == {c for c, splits in by_config.items() if sum(splits.values())}
    assert {"STF", "MCNC", "VQA"} <= configs
    for name in sorted(configs):
        loaded = datasets.load_dataset(str(release), name)
        assert {k: v.num_rows for k, v in loaded.items()} == {
            split: n for split, n in by_config[name].items() if n
        }, name
    queries = datasets.load_dataset(str(release), "queries", split="test")
    assert queries[0]["answer_list"] and queries.features["date"].dtype == "date32"
    with duckdb.connect() as con:
        (n,) = con.execute(f"SELECT count(*) FROM '{release}/quads/*.parquet'").fetchone()
    assert n == rows["quads"] == 107


def test_card_features_are_what_datasets_writes(release):
    datasets = pytest.importorskip("datasets")
    header = card.parse_header((release / "README.md").read_text())
    assert header["license"] == "cc-by-nc-4.0"
    declared = {c["config_name"]: c["features"] for c in header["dataset_info"]}
    for table in TABLES:
        schema = pq.read_schema(next(release.glob(table.glob)))
        features = datasets.Features.from_arrow_schema(schema)._to_yaml_list()
        assert declared[table.config_name] == features


def test_croissant_validates_and_generates_every_record_set(release):
    mlc = pytest.importorskip("mlcroissant")
    dataset = mlc.Dataset(jsonld=str(release / "croissant.json"))
    rows = table_rows(release)
    counts = {
        rs.name: sum(1 for _ in dataset.records(record_set=rs.name))
        for rs in dataset.metadata.record_sets
    }
    # the card's tables (an empty split would have no record set: tests/release/test_croissant.py)
    assert counts == {name: n for name, n in rows.items() if n}
    assert 0 not in rows.values()  # every task family and split of the demo has records
    head = card.parse_header((release / "README.md").read_text())
    paths = {f["path"] for c in head["configs"] for f in c["data_files"]}
    globs = {t.name: t.glob for t in TABLES}
    assert paths == {globs[name] for name, n in rows.items() if n}


def test_mirai_info_covers_every_code_and_country_of_data_kg(release):
    info, mirai = release / "mirai/info", release / "mirai/MIRAI"
    relations = json.loads((info / "dict_code2relation.json").read_text())
    names = json.loads((info / "dict_iso2alternames_GeoNames.json").read_text())
    with (mirai / "data_kg.csv").open(encoding="utf-8", newline="") as fh:
        kg = list(csv.DictReader(fh, delimiter="\t"))
    assert kg and {r["DateStr"][:7] for r in kg} == {"2025-07", MONTH}
    for row in kg:
        assert row["Actor1CountryCode"] in names and row["Actor2CountryCode"] in names
        assert row["EventBaseCode"] in relations and row["EventBaseCode"][:2] in relations
    assert len(relations) == 169 and all(v["Name"] and v["Description"] for v in relations.values())
    assert names["CHN"][0] == "China" and "United States" in names["USA"]
    countries = np.load(info / "country_embeddings.npy")
    relation_vectors = np.load(info / "relation_embeddings.npy")
    assert countries.shape == (len(names), 384) and relation_vectors.shape == (169, 384)
    # The fuzzy look-up MIRAI does: a country's own name is nearest to its own row.
    keys = list(names)
    china = countries[keys.index("CHN")]
    scores = countries @ china / np.linalg.norm(countries, axis=1) / np.linalg.norm(china)
    assert keys[int(np.argmax(scores))] == "CHN"
    for folder in ("test", "test_subset"):
        assert (mirai / folder / "relation_query.csv").stat().st_size > 0


def test_history_window_and_latest(tmp_path):
    assert history("2025-08") == (date(2025, 1, 1), date(2025, 8, 31))  # MIRAI's default
    assert history("2024-02", date(2023, 12, 1)) == (date(2023, 12, 1), date(2024, 2, 29))
    with pytest.raises(MonthError, match="history start 2025-08-02 is after"):
        history("2025-08", date(2025, 8, 2))
    # The timelines take the release's start: the option, else the config's, else January 1st
    timelines = STAGES["timelines"].params
    later = load_config(None, ["release.history_start=2025-06-01"], tmp_path)
    assert timelines(later, "2025-08") == {"history_start": date(2025, 6, 1)}
    assert timelines(later, "2025-08", history_start=date(2025, 3, 1)) == {
        "history_start": date(2025, 3, 1)
    }
    assert timelines(load_config(None, [], tmp_path), "2025-08") == {
        "history_start": date(2025, 1, 1)
    }
    root = tmp_path / "releases"
    for version in ("2025.09.0", "2025.08.1"):  # an older month rebuilt after a newer one
        (root / version).mkdir(parents=True)
        update_latest(root, version)
    assert (root / "LATEST").read_text() == "2025.09.0\n"
    (root / "2025.10.0").mkdir()
    update_latest(root, "2025.10.0")
    assert (root / "LATEST").read_text() == "2025.10.0\n"


def test_verify_catches_a_timeline_that_sees_past_the_month(release, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    atoms = pq.read_table(copy / "timelines/timelines.parquet")
    assert atoms.num_rows and verify(copy) == []
    late = {**atoms.slice(0, 1).to_pylist()[0], "seq": 99, "date": "2025-09"}
    _rewrite(
        copy,
        "timelines/timelines.parquet",
        pa.concat_tables([atoms, pa.Table.from_pylist([late], atoms.schema)]),
    )
    assert verify(copy) == [
        "timelines/timelines.parquet: 1 atomic events dated after 2025-08-31",
        f"timelines/timelines.parquet: {late['complex_event_id']} event 99: dated 2025-09, after "
        f"its source was first seen on {late['source_date']} (rule 2)",
    ]


def test_verify_catches_task_leakage(release, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    stf = pq.read_table(copy / "tasks/STF/test.parquet").to_pylist()
    mcnc = pq.read_table(copy / "tasks/MCNC/test.parquet").to_pylist()
    assert stf and mcnc and verify(copy) == []
    # A train record whose background holds a test record's gold answer, and a background
    # event dated after its own cut.
    planted = {
        **stf[0],
        "id": "STF-planted",
        "split": "train",
        "background": stf[0]["background"] + mcnc[-1]["target"],
    }
    _rewrite(copy, "tasks/STF/train.parquet", pa.Table.from_pylist([planted], SCHEMA))
    problems = verify(copy)
    assert problems[0] == (
        f"tasks/STF/train.parquet: STF-planted: background event dated "
        f"{mcnc[-1]['target'][0]['date']} is not before the cut {planted['cut_date']}"
    )
    leak = f"answer {mcnc[-1]['target'][0]['text'][:60]!r} is an earlier split's background"
    assert any(p.startswith(f"tasks/MCNC/test.parquet: {mcnc[-1]['id']}: {leak}") for p in problems)
    assert len(problems) > 2  # every task
    assert all("is an earlier split's background" in p for p in problems[1:])


def test_baselines_are_in_the_manifest_and_the_card(release):
    """Every release says how hard it is: both baselines on both splits, with MIRAI's
    metrics, in manifest.json and as the card's table (tests/environment computes them on
    planted history)."""
    manifest = json.loads((release / "manifest.json").read_text())
    queries = manifest["testset"]["queries"]
    subset = manifest["testset"]["subset"]
    assert set(manifest["baselines"]) == {"history", "frequency"}
    for method, splits in manifest["baselines"].items():
        assert {s: b["n"] for s, b in splits.items()} == {"test": queries, "subset": subset}
        for b in splits.values():
            assert set(b) == {"n", "first_level", "second_level", "binary", "quad"}
            assert set(b["quad"]) == {"precision", "recall", "f1", "kl"}
        card = (release / "README.md").read_text()
        first = splits["test"]["first_level"]
        assert (
            f"| {method} | test | {queries:,} | {first['precision']:.1f} | "
            f"{first['recall']:.1f} | {first['f1']:.1f} |"
        ) in card
    assert "## Baselines" in card and "gdelt-forecast baseline --release" in card


def test_news_terms_split_every_article_as_mirais_search_does(release, tmp_path):
    news = pq.read_table(release / "news").to_pylist()  # every month's file
    got = pq.read_table(release / "news_terms").to_pylist()
    expected = [
        row | {"date": a["date"]}
        for a in sorted(news, key=lambda a: (a["date"], a["doc_id"]))
        for row in sorted(
            terms(a["doc_id"], f"{a['title'] or ''} {a['text']}"), key=lambda row: row["first"]
        )
    ]
    assert len(news) > 4 and got == expected

    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    august = "news_terms/2025-08-part-0.parquet"
    table = pq.read_table(copy / august)
    rows = table.to_pylist()
    first, last = rows[0]["doc_id"], rows[-1]["doc_id"]
    keep = [i for i, row in enumerate(rows) if row["doc_id"] != last and i != 1]
    _rewrite(copy, august, table.take(keep))
    assert verify(copy) == [  # a table of the history has a file a month: named by its glob
        f"news_terms/*.parquet (2 files): an article without terms (1 rows, e.g. {last})",
        f"news_terms/*.parquet (2 files): rows that disagree on the article (1 rows, e.g. {first})",
    ]


def test_another_user_reads_every_file_of_the_release(release, tmp_path_factory):
    """Every file has the mode the umask gives a new file (none is owner-only, as files
    renamed from mkstemp's were), and a user other than the builder reads them all."""
    files = sorted(p for p in release.rglob("*") if p.is_file())
    dirs = sorted(p for p in release.rglob("*") if p.is_dir())
    assert {p.stat().st_mode & 0o777 for p in files} == {FILE_MODE}
    assert {p.stat().st_mode & 0o777 for p in [release, *dirs]} == {DIR_MODE}
    if os.geteuid() != 0 or FILE_MODE & 0o004 == 0:
        pytest.skip("reading as another user needs root and a umask that lets others read")
    # pytest's own temporary folders are owner-only: the copy (modes kept) goes to a folder
    # that others may enter, as a shared data root would be.
    shared = Path(tempfile.mkdtemp())
    try:
        shared.chmod(0o755)
        copy = shared / release.name
        shutil.copytree(release, copy)
        read = subprocess.run(
            ["cat", *(copy / p.relative_to(release) for p in files)],
            user="nobody",
            capture_output=True,
        )
        assert read.returncode == 0, read.stderr.decode()
        assert len(read.stdout) == sum(p.stat().st_size for p in files)
    finally:
        shutil.rmtree(shared)
