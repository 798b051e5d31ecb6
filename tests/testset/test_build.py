"""Test queries from hand-built small months: threshold edges, answer sources, horizons,
the prompt, and a deterministic balanced subset. The quads are real ones from the
2025-08-07 22:00 slot; their mention and document counts are set to the edges."""

import csv
import json
from datetime import date

import duckdb
import pyarrow.parquet as pq
import pytest

from gdelt_forecast.ground.config import load_config
from gdelt_forecast.ground.dates import MonthError, month_range
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.reference import tables
from gdelt_forecast.testset.build import TestsetError, answer_dict
from gdelt_forecast.testset.subset import Item, balance, balanced_subset

D7, D8 = date(2025, 8, 7), date(2025, 8, 8)
QUADS = [  # date, head, relation, tail, daily mentions, kept documents
    (D7, "AZE", "057", "USA", 100, 5),  # both exactly at the thresholds: in
    (D7, "AZE", "030", "USA", 99, 5),  # one mention short: out of the strict collection
    (D7, "TUR", "042", "LBY", 150, 4),  # one document short: out
    (D8, "KOR", "036", "CHN", 100, 5),
    (D8, "KOR", "042", "CHN", 120, 9),  # same pair and day: one query, two answers
    (date(2025, 9, 1), "ITA", "043", "USA", 500, 50),  # another month
]


def warehouse(root, quads):
    root.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(root / "warehouse.duckdb")) as con:
        con.execute(
            "CREATE TABLE quads (date DATE, head VARCHAR, relation VARCHAR, tail VARCHAR, "
            "daily_mentions BIGINT, n_docs BIGINT, quad_id VARCHAR)"
        )
        con.executemany(
            "INSERT INTO quads VALUES (?, ?, ?, ?, ?, ?, concat_ws('_', ?, ?, ?, ?))",
            [(*q, q[0], q[1], q[2], q[3]) for q in quads],
        )
        # Each quad has its documents (doc ids are made up: only their count matters here).
        con.execute(
            "CREATE TABLE quad_docs AS SELECT quad_id, date, quad_id || '-' || n AS doc_id "
            "FROM quads, range(n_docs) AS t(n)"
        )
        con.execute(
            "CREATE TABLE news AS SELECT doc_id, 'https://example.org/' || doc_id AS url, "
            "md5(doc_id) AS url_md5, date, 'Title' AS title, 'Text' AS text, "
            "'Title' || chr(10) || 'Text' AS abstract FROM quad_docs"
        )
        for name in ("countries", "relations"):
            con.register("reference", getattr(tables, name)())
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM reference")
            con.unregister("reference")
    return root


def queries(root, month="2025-08", name="queries"):
    return pq.read_table(root / f"testset/{month}/{name}.parquet").to_pylist()


def test_threshold_edges_and_answers_from_the_strict_collection(tmp_path):
    root = warehouse(tmp_path / "data", QUADS)
    summary = run("testset", load_config(None, [], root), "2025-08")
    assert (summary.candidates, summary.queries, summary.rows) == (3, 2, 2)
    rows = {r["key"]: r for r in queries(root)}
    assert set(rows) == {"2025-08-07_AZE_USA", "2025-08-08_KOR_CHN"}
    assert rows["2025-08-07_AZE_USA"]["answer_list"] == ["057"]
    korea = rows["2025-08-08_KOR_CHN"]
    assert korea["answer_list"] == ["036", "042"]
    assert json.loads(korea["answer"]) == {"03": ["036"], "04": ["042"]}
    assert (korea["subject_name"], korea["subject_region"], korea["object_subregion"]) == (
        "South Korea",
        "Asia",
        "Eastern Asia",
    )
    assert korea["query_id"] == "2025-08-08_KOR_CHN_h1" and korea["cutoff"] == D7
    assert korea["prompt"] == (
        "Please forecast the relations that South Korea will take towards China on August 08,"
        " 2025 based on historical information up to August 07, 2025. I.e. forecast the "
        "relation CAMEO codes in query event Event(date=2025-08-08, head_entity=ISOCode(KOR),"
        " relation=CAMEOCode(?), tail_entity=ISOCode(CHN))."
    )


def test_answers_from_the_database_and_several_horizons(tmp_path):
    root = warehouse(tmp_path / "data", QUADS)
    cfg = load_config(None, ["testset.answer_source=database", "testset.horizons=[1, 7]"], root)
    summary = run("testset", cfg, "2025-08")
    assert (summary.queries, summary.rows) == (2, 4)
    rows = {r["query_id"]: r for r in queries(root)}
    assert rows["2025-08-07_AZE_USA_h1"]["answer_list"] == ["030", "057"]
    assert rows["2025-08-07_AZE_USA_h7"]["cutoff"] == date(2025, 7, 31)
    assert rows["2025-08-07_AZE_USA_h7"]["cutoff_nlp"] == "July 31, 2025"


def pairs_month(days=30):
    """A skewed month of real pairs: the first days hold far more pairs than the rest."""
    pairs = [
        ("AZE", "USA", "057"),
        ("KOR", "CHN", "042"),
        ("TUR", "LBY", "042"),
        ("ITA", "USA", "043"),
        ("AUS", "JPN", "036"),
        ("CHN", "USA", "111"),
        ("BHR", "ISR", "190"),
        ("GBR", "LCA", "051"),
    ]
    quads = []
    for day in range(1, days + 1):
        for head, tail, relation in pairs[: 8 if day <= 5 else 2]:
            quads.append((date(2025, 8, day), head, relation, tail, 200, 10))
    return quads


def test_subset_is_deterministic_and_evens_out_dates(tmp_path):
    root = warehouse(tmp_path / "data", pairs_month())

    def build(seed):
        cfg = load_config(None, ["testset.subset_size=20", f"testset.seed={seed}"], root)
        return run("testset", cfg, "2025-08")

    first = build(0)
    subset = (root / "testset/2025-08/subset.parquet").read_bytes()
    build(0)
    assert (root / "testset/2025-08/subset.parquet").read_bytes() == subset
    keys0 = {r["key"] for r in queries(root, name="subset")}
    build(1)
    keys1 = {r["key"] for r in queries(root, name="subset")}
    assert len(keys0) == len(keys1) == 20 and keys0 != keys1
    assert first.balance_cv["date"]["subset"] < first.balance_cv["date"]["full"]
    report = json.loads((root / "testset/2025-08/balance.json").read_text())
    # Dates, continents and first-level codes all more even than in the skewed full set.
    for dimension in ("date", "region", "first_level"):
        assert report["subset"][dimension]["cv"] < report["full"][dimension]["cv"], dimension
    assert sum(report["full"]["date"]["counts"].values()) == 5 * 8 + 25 * 2


def test_balanced_subset_unit():
    items = [Item(f"q{i}", f"d{i % 3}", ("Asia", "Europe"), ("04",)) for i in range(9)]
    picked = balanced_subset(items, 3, seed=7, attempts=9)
    assert sorted({int(k[1:]) % 3 for k in picked}) == [0, 1, 2]  # one per date
    assert balanced_subset(items, 3, seed=7, attempts=9) == picked
    assert (
        balanced_subset(items, 50, seed=7, attempts=9) != []
        and len(balanced_subset(items, 50, seed=7, attempts=9)) == 9
    )
    assert balance(items)["date"] == {"values": 3, "cv": 0.0, "counts": {"d0": 3, "d1": 3, "d2": 3}}


def test_answer_dict_and_months():
    assert answer_dict(["042", "036", "043"]) == {"03": ["036"], "04": ["042", "043"]}
    assert month_range("2024-02") == (date(2024, 2, 1), date(2024, 2, 29))
    assert month_range("2023-12") == (date(2023, 12, 1), date(2023, 12, 31))
    with pytest.raises(MonthError, match="not YYYY-MM"):
        month_range("2023-13")


def read_tsv(path):
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def test_mirai_query_files_have_mirai_columns(tmp_path):
    root = warehouse(tmp_path / "data", QUADS)
    run("testset", load_config(None, ["testset.horizons=[1, 7]"], root), "2025-08")
    compat = root / "testset/2025-08/mirai_compat"
    read = read_tsv
    assert not (compat / "data_kg.csv").exists()  # the release writes the database files

    test = read(compat / "test/relation_query.csv")
    assert list(test[0])[:5] == [
        "QueryId",
        "DateStr",
        "Actor1CountryCode",
        "Actor2CountryCode",
        "EventBaseCode",
    ]
    assert [r["QueryId"] for r in test] == ["1", "2"]  # one horizon: MIRAI has none
    korea = test[1]
    assert (korea["QueryCode"], korea["DateNLP"]) == (
        "(2025-08-08, KOR, ?, CHN)",
        "August 08, 2025",
    )
    assert eval(korea["AnswerDict"]) == {"03": ["036"], "04": ["042"]}
    assert eval(korea["AnswerList"]) == ["036", "042"] and korea["answer_len"] == "2"
    subset = read(compat / "test_subset/relation_query.csv")
    assert len(subset) == 2  # the subset (100) holds the whole of this small month


def test_leakage_check_refuses_a_cutoff_that_reaches_the_query_day():
    from gdelt_forecast.testset.build import check_leakage

    good = {"query_id": "q_h1", "date": D8, "cutoff": D7, "horizon": 1}
    check_leakage([good])
    with pytest.raises(TestsetError, match="1 queries see past their cutoff"):
        check_leakage([good, {**good, "query_id": "q_h0", "cutoff": D8, "horizon": 0}])
    with pytest.raises(TestsetError, match="see past their cutoff"):
        check_leakage([{**good, "horizon": 7}])  # a cutoff that does not match its horizon


def test_a_month_without_queries_is_an_error_not_an_empty_set(tmp_path, capsys):
    from gdelt_forecast.cli import main

    root = warehouse(tmp_path / "data", QUADS)
    cfg = load_config(None, [], root)
    with pytest.raises(TestsetError, match=r"no quads dated in 2025-07 in the warehouse at .*"):
        run("testset", cfg, "2025-07")
    lonely = warehouse(tmp_path / "lonely", [QUADS[1]])  # 99 mentions: nothing strict
    with pytest.raises(TestsetError, match="none of the 1 quads of 2025-08 .* has both 100"):
        run("testset", load_config(None, [], lonely), "2025-08")
    assert main(["testset", "--month", "2025-07", "--data-root", str(root)]) == 1
    assert "no quads dated in 2025-07" in capsys.readouterr().err
    assert not (root / "testset").exists() and not (lonely / "testset").exists()
