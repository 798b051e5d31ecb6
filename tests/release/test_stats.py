"""A release's stats and plots from a hand-built three-day window: exact counts, the funnel
summed over days, deterministic bytes, and an empty window."""

import json
import struct
from datetime import date

import duckdb
import pyarrow as pa
import pytest

from gdelt_forecast.ground import duck
from gdelt_forecast.reference import tables
from gdelt_forecast.release.stats import write_stats
from gdelt_forecast.tasks.records import SCHEMA
from gdelt_forecast.timelines.build import COMPLEX_EVENTS, TIMELINES

D1, D2, D3 = date(2025, 8, 1), date(2025, 8, 2), date(2025, 8, 3)
QUADS = [  # date, head, relation, tail, GDELT records
    (D1, "USA", "042", "CHN", 3),
    (D1, "USA", "043", "CHN", 1),
    (D1, "CHN", "042", "USA", 2),
    (D1, "RUS", "190", "UKR", 4),
    (D2, "USA", "042", "CHN", 1),
    (D2, "RUS", "190", "UKR", 2),
    (D2, "RUS", "173", "UKR", 1),
    (D2, "TUR", "036", "SYR", 1),
]
NEWS = [  # doc id, date, the quad it is linked to
    ("d1", D1, "2025-08-01_USA_042_CHN"),
    ("d2", D1, "2025-08-01_RUS_190_UKR"),
    ("d3", D2, "2025-08-02_USA_042_CHN"),
]
FUNNEL = [  # date, step, rule, enabled, rows in, rows out, top reasons
    (D1, 0, "bronze", True, 100, 100, []),
    (D1, 1, "same_day", True, 100, 90, [("SQLDATE 1 day(s) before", 6), ("SQLDATE 2", 4)]),
    (D1, 2, "international", False, 90, 90, []),
    (D1, 3, "countries", True, 90, 10, [("EUR is a region", 50), ("no country", 30)]),
    (D2, 0, "bronze", True, 50, 50, []),
    (D2, 1, "same_day", True, 50, 48, [("SQLDATE 1 day(s) before", 2)]),
    (D2, 2, "international", False, 48, 48, []),
    (D2, 3, "countries", True, 48, 5, [("no country", 40), ("AFR is a region", 3)]),
    *[(D3, step, rule, on, 0, 0, []) for step, rule, on in
      [(0, "bronze", True), (1, "same_day", True), (2, "international", False),
       (3, "countries", True)]],
]  # fmt: skip
PNG = b"\x89PNG\r\n\x1a\n"


COMPLEX = [  # complex_event_id, first day, documents; then its atomic events' dates
    ("ce-a", D1, 2, ["2025-08-01", None, "2025"]),
    ("ce-b", D2, 2, ["2025-08-02"]),
]
TASK_ROWS = [  # task, split, complex_event_id, cut date
    ("STF", "test", "ce-a", D1), ("STF", "test", "ce-b", D2), ("STF", "dev", "ce-a", D2),
    ("MCNC", "train", "ce-a", D1),
]  # fmt: skip


def release(quads=QUADS, news=NEWS, funnel=FUNNEL, complex_events=COMPLEX, tasks=TASK_ROWS):
    """The release tables the way the warehouse builds them: quads from events and links."""
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE events (date DATE, head VARCHAR, relation VARCHAR, tail VARCHAR, "
        "quad_id VARCHAR, GLOBALEVENTID BIGINT, SOURCEURL VARCHAR, daily_mentions BIGINT)"
    )
    records = [(day, head, rel, tail) for day, head, rel, tail, n in quads for _ in range(n)]
    for i, r in enumerate(records):
        con.execute(
            "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, 60)",
            [*r, "_".join(map(str, r)), i, f"https://example.org/{i % 3}"],
        )
    con.execute("CREATE TABLE news (doc_id VARCHAR, date DATE, title VARCHAR, text VARCHAR)")
    con.execute("CREATE TABLE quad_docs (quad_id VARCHAR, date DATE, doc_id VARCHAR)")
    for doc_id, day, quad in news:
        con.execute("INSERT INTO news VALUES (?, ?, 'Title', 'Text')", [doc_id, day])
        con.execute("INSERT INTO quad_docs VALUES (?, ?, ?)", [quad, day, doc_id])
    duck.run(con, "warehouse/quads.sql", "CREATE TABLE quads AS")
    con.execute(
        "CREATE TABLE funnel (date DATE, step INTEGER, rule VARCHAR, enabled BOOLEAN, "
        "rows_in BIGINT, rows_out BIGINT, removed BIGINT, "
        "top_reasons STRUCT(reason VARCHAR, rows BIGINT)[])"
    )
    for day, step, rule, on, rows_in, rows_out, reasons in funnel:
        con.execute(
            "INSERT INTO funnel VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                day,
                step,
                rule,
                on,
                rows_in,
                rows_out,
                rows_in - rows_out,
                [{"reason": r, "rows": n} for r, n in reasons],
            ],
        )
    for name in ("countries", "relations"):
        con.register("reference", getattr(tables, name)())
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM reference")
        con.unregister("reference")
    stories = pa.Table.from_pylist(
        [
            {
                "complex_event_id": ce,
                "title": ce,
                "countries": ["CHN", "USA"],
                "first_date": day,
                "n_documents": docs,
            }
            for ce, day, docs, _ in complex_events
        ],
        COMPLEX_EVENTS,
    )
    atoms = pa.Table.from_pylist(
        [
            {"complex_event_id": ce, "seq": seq, "date": when}
            for ce, _, _, dates in complex_events
            for seq, when in enumerate(dates, 1)
        ],
        TIMELINES,
    )
    records = pa.Table.from_pylist(
        [
            {
                "id": f"{task}-{i}",
                "task": task,
                "split": split,
                "complex_event_id": ce,
                "cut_date": cut,
            }
            for i, (task, split, ce, cut) in enumerate(tasks)
        ],
        SCHEMA,
    )
    for name, table in (("complex_events", stories), ("timelines", atoms), ("tasks", records)):
        con.register("story_rows", table)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM story_rows")
        con.unregister("story_rows")
    return con


def rows(out, name):
    return json.loads((out / f"stats/{name}.json").read_text(encoding="utf-8"))["rows"]


@pytest.fixture
def con():
    connection = release()
    yield connection
    connection.close()


def test_counts_per_relation_pair_and_day(con, tmp_path):
    card = write_stats(con, tmp_path, top_pairs=3)
    level1 = rows(tmp_path, "relations_level1")
    assert [(r["code"], r["quads"], r["events"], r["share"]) for r in level1] == [
        ("04", 4, 7, 0.5),
        ("19", 2, 6, 0.25),
        ("03", 1, 1, 0.125),
        ("17", 1, 1, 0.125),
    ]
    assert level1[0]["name"] == "Consult"
    level2 = rows(tmp_path, "relations_level2")
    assert [(r["code"], r["quads"], r["events"]) for r in level2] == [
        ("042", 3, 6),
        ("190", 2, 6),
        ("036", 1, 1),
        ("043", 1, 1),
        ("173", 1, 1),
    ]
    assert level2[1]["name"] == "Use conventional military force, not specified"
    pairs = rows(tmp_path, "top_pairs")
    assert [(r["head"], r["tail"], r["quads"], r["relations"], r["events"]) for r in pairs] == [
        ("RUS", "UKR", 3, 2, 7),
        ("USA", "CHN", 3, 2, 5),
        ("CHN", "USA", 1, 1, 2),
    ]
    assert (pairs[0]["head_name"], pairs[0]["tail_name"]) == ("Russia", "Ukraine")
    assert rows(tmp_path, "daily") == [
        {"date": "2025-08-01", "events": 10, "quads": 4, "documents": 2},
        {"date": "2025-08-02", "events": 5, "quads": 4, "documents": 1},
        {"date": "2025-08-03", "events": 0, "quads": 0, "documents": 0},
    ]
    assert card == json.loads(json.dumps(card))  # JSON-serializable as it is
    assert {k: v for k, v in card.items() if k != "funnel"} == {
        "days": 3,
        "first_day": "2025-08-01",
        "last_day": "2025-08-03",
        "events": 15,
        "quads": 8,
        "documents": 3,
        "quad_doc_links": 3,
        "pairs": 4,
        "countries": 6,
        "relations_level1": 4,
        "relations_level2": 5,
        "complex_events": 2,
        "atomic_events": 4,
        "plots": sorted(f"plots/{p.name}" for p in (tmp_path / "plots").glob("*.png")),
    }
    assert len(card["plots"]) == 7
    stories = [
        (r["complex_event_id"], r["n_documents"], r["atomic_events"], r["dated_events"])
        for r in rows(tmp_path, "timelines")
    ]
    assert stories == [("ce-a", 2, 3, 2), ("ce-b", 2, 1, 1)]


def test_funnel_is_summed_over_days_in_step_order(con, tmp_path):
    card = write_stats(con, tmp_path)
    funnel = rows(tmp_path, "funnel")
    keys = ("rule", "enabled", "rows_in", "rows_out", "removed")
    assert [tuple(r[k] for k in keys) for r in funnel] == [
        ("bronze", True, 150, 150, 0),
        ("same_day", True, 150, 138, 12),
        ("international", False, 138, 138, 0),
        ("countries", True, 138, 15, 123),
    ]
    assert funnel[3]["top_reasons"] == [
        {"reason": "no country", "rows": 70},
        {"reason": "EUR is a region", "rows": 50},
        {"reason": "AFR is a region", "rows": 3},
    ]
    assert funnel[1]["top_reasons"][0] == {"reason": "SQLDATE 1 day(s) before", "rows": 8}
    description = json.loads((tmp_path / "stats/funnel.json").read_text())["description"]
    assert "approximate" in description
    assert card["funnel"][3] == {
        "step": 3,
        "rule": "countries",
        "enabled": True,
        "rows_in": 138,
        "rows_out": 15,
        "removed": 123,
    }


def files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def check_pngs(written):
    for name in (
        "relations_level1",
        "relations_level2",
        "top_pairs",
        "daily",
        "funnel",
        "timeline_lengths",
        "task_sizes",
    ):
        png = written[f"plots/{name}.png"]
        width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
        assert png.startswith(PNG) and 5_000 < len(png) < 1_000_000, name
        assert width == 1200 and 250 < height < 2000, name
        assert b"matplotlib" not in png  # no Software tag


def test_two_runs_give_identical_bytes(con, tmp_path):
    write_stats(con, tmp_path / "a")
    write_stats(con, tmp_path / "b")
    first, second = files(tmp_path / "a"), files(tmp_path / "b")
    assert sorted(first) == [
        "plots/daily.png",
        "plots/funnel.png",
        "plots/relations_level1.png",
        "plots/relations_level2.png",
        "plots/task_sizes.png",
        "plots/timeline_lengths.png",
        "plots/top_pairs.png",
        "stats/daily.json",
        "stats/funnel.json",
        "stats/relations_level1.json",
        "stats/relations_level2.json",
        "stats/tasks.json",
        "stats/timelines.json",
        "stats/top_pairs.json",
    ]  # fmt: skip (no temporary files left either)
    assert first == second
    assert all(data.endswith(b"\n") for name, data in first.items() if name.endswith(".json"))
    check_pngs(first)


def test_an_empty_window_writes_empty_lists_and_no_data_plots(tmp_path):
    con = release(quads=[], news=[], funnel=[], complex_events=[], tasks=[])
    card = write_stats(con, tmp_path)
    assert rows(tmp_path, "timelines") == []
    assert len(rows(tmp_path, "tasks")) == 18 and not any(
        r["records"] for r in rows(tmp_path, "tasks")
    )
    assert (tmp_path / "plots/timeline_lengths.png").read_bytes().startswith(PNG)
    for name in ("relations_level1", "relations_level2", "top_pairs", "daily", "funnel"):
        assert rows(tmp_path, name) == []
        assert (tmp_path / f"plots/{name}.png").read_bytes().startswith(PNG)
    assert (card["days"], card["events"], card["quads"], card["first_day"]) == (0, 0, 0, None)
    assert card["funnel"] == []


def test_task_records_per_task_and_split(con, tmp_path):
    write_stats(con, tmp_path)
    counts = {
        (r["task"], r["split"]): (r["records"], r["complex_events"], r["cut_dates"])
        for r in rows(tmp_path, "tasks")
    }
    assert list(counts)[:4] == [("STF", "train"), ("STF", "dev"), ("STF", "test"), ("LTF", "train")]
    assert len(counts) == 18
    assert counts["STF", "test"] == (2, 2, 2) and counts["STF", "dev"] == (1, 1, 1)
    assert counts["MCNC", "train"] == (1, 1, 1)
    assert sum(n for n, _, _ in counts.values()) == len(TASK_ROWS)
