"""EV2's tasks from hand-made timelines: temporal answers from the dates, the cut and the
negatives' rules, the schema ambiguity rule, the gold letters' spread, and the checks that
``release verify`` repeats."""

from __future__ import annotations

import string
from collections import Counter
from datetime import date

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gdelt_forecast.contract.reasoning import cameo_types, unsound
from gdelt_forecast.contract.relations import temporal
from gdelt_forecast.contract.similarity import near_duplicate
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.reasoning.build import build_reasoning
from gdelt_forecast.reference import tables

TYPES = cameo_types(tables.relations())

MONTH = "2025-08"
WORDS = [
    "harbor",
    "tariff",
    "summit",
    "drought",
    "election",
    "protest",
    "pipeline",
    "embargo",
    "vaccine",
    "satellite",
    "bridge",
    "treaty",
    "refinery",
    "airline",
    "wheat",
    "copper",
    "lithium",
    "border",
    "ceasefire",
    "census",
    "factory",
    "bond",
    "currency",
    "railway",
    "glacier",
    "forest",
    "ballot",
    "strike",
    "festival",
    "museum",
]


def atom(ce: str, seq: int, when: str, seen: date, kind: str = "Make statement") -> dict:
    # Two words of its own per event: no two texts are near-duplicates.
    words = " ".join(WORDS[(sum(map(ord, ce)) * 3 + seq * 2 + k) % len(WORDS)] for k in range(2))
    return {
        "complex_event_id": ce, "seq": seq, "date": when,
        "text": f"{ce} event {seq} {words} {ce}{seq}alpha {ce}{seq}beta",
        "event_type": kind, "source_doc_id": f"{ce}-doc{seq}", "source_date": seen,
    }  # fmt: skip


def write(root, atoms: list[dict], countries: dict[str, list[str]]) -> None:
    folder = root / "timelines" / MONTH
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(atoms), folder / "timelines.parquet")
    rows = [{"complex_event_id": ce, "countries": c} for ce, c in countries.items()]
    pq.write_table(pa.Table.from_pylist(rows), folder / "complex_events.parquet")


def build(root, *overrides):
    cfg = load_config(None, list(overrides), root)
    out = root / "reasoning" / MONTH
    out.mkdir(parents=True, exist_ok=True)
    summary = build_reasoning(cfg, MONTH, out)
    return summary, {t: pq.read_table(out / f"{t}.parquet").to_pylist() for t in summary.records}


def story(ce: str, days: list[str], kinds: list[str] | None = None) -> list[dict]:
    """Events seen on August 1st, 2nd, ... in turn, dated as ``days`` say."""
    kinds = kinds or ["Make statement"] * len(days)
    return [
        atom(ce, i, d, date(2025, 8, i), k)
        for i, (d, k) in enumerate(zip(days, kinds, strict=True), 1)
    ]


@pytest.fixture
def month(tmp_path):
    atoms = [
        *story("ce1", ["2025-07", "2025-08-02", "2025-08-02", "2025-08-05", "2024", "2025-08-09"]),
        *story("ce2", ["2025-06-01", "2025-08-01", "2025-08-03", "2025-08-03", "2025-08-08"]),
        *story("ce3", ["2025-05-05", "2025-08-06", "2025-07-01", "2025-08-10", "2025-08-11"]),
    ]
    write(tmp_path, atoms, {"ce1": ["USA", "CHN"], "ce2": ["USA", "RUS"], "ce3": ["CHN", "IND"]})
    return tmp_path, {(a["complex_event_id"], a["source_doc_id"]): a for a in atoms}


def by_doc(row: dict) -> dict:
    return {e["event_id"]: e for e in row["events"]}


def test_crr_answers_are_the_relations_of_the_dates(month):
    root, atoms = month
    summary, rows = build(root, "reasoning.crr_per_story=10")
    assert rows["I-CRR"] and summary.records["I-CRR"] == len(rows["I-CRR"])
    labels = Counter()
    for row in rows["I-CRR"]:
        events = by_doc(row)
        a, b = (events[i] for i in row["queried"])
        source = {e["source_doc_id"]: e for e in row["events"]}
        # the hand-labelled dates of the fixture, through the source documents
        want = temporal(atoms[row["complex_event_id"], a["source_doc_id"]]["date"],
                        atoms[row["complex_event_id"], b["source_doc_id"]]["date"])  # fmt: skip
        assert row["answer_label"] == want and source
        assert row["candidates"][string.ascii_uppercase.index(row["answer"])] == want
        assert "Which is the temporal relationship" in row["prompt"]
        labels[want] += 1
    assert set(labels) == {"Before", "After", "Vague"}  # Vague: ce2's two of August 3rd


def test_cec_answers_come_after_the_cut_and_negatives_do_not_fit(month):
    root, _ = month
    _, rows = build(root)
    assert rows["I-CEC"]
    for row in rows["I-CEC"]:
        events = by_doc(row)
        answer, queried = events[row["answer_label"]], events[row["queried"][0]]
        assert answer["source_date"] > row["cut_date"]
        assert all(events[i]["source_date"] <= row["cut_date"] for i in row["context"])
        assert temporal(answer["date"], queried["date"]) == row["relation"]
        wrong = [events[c] for c in row["candidates"] if c != row["answer_label"]]
        assert len(wrong) == 3 and all(
            w["source_doc_id"].split("-")[0] != row["complex_event_id"] for w in wrong
        )
        for w in wrong:  # none stands in the asked relation, none repeats a shown event
            assert temporal(w["date"], queried["date"]) != row["relation"]
            others = [events[i]["text"] for i in (*row["context"], row["answer_label"])]
            assert not any(near_duplicate(w["text"], t) for t in others)
        assert unsound(row, TYPES) is None


def test_negatives_come_from_stories_sharing_a_country(month):
    root, _ = month
    _, rows = build(root)
    partners = {"ce1": {"ce2", "ce3"}, "ce2": {"ce1"}, "ce3": {"ce1"}}
    for row in rows["I-CEC"]:
        events = by_doc(row)
        stories = {events[c]["source_doc_id"].split("-")[0] for c in row["candidates"]
                   if c != row["answer_label"]}  # fmt: skip
        assert stories <= partners[row["complex_event_id"]]


def test_schema_questions_only_for_type_pairs_the_month_relates_one_way(tmp_path):
    # Protests come before talks in ce1 and after them in ce2: ambiguous, no question;
    # sanctions always after both.
    kinds = {
        "P": "Demonstrate or rally",
        "T": "Engage in negotiation",
        "S": "Impose embargo or boycott or sanctions",
    }
    atoms = [
        *story(
            "ce1", ["2025-07-01", "2025-07-05", "2025-07-20"], [kinds["P"], kinds["T"], kinds["S"]]
        ),
        *story(
            "ce2", ["2025-07-02", "2025-07-06", "2025-07-21"], [kinds["T"], kinds["P"], kinds["S"]]
        ),
    ]
    write(tmp_path, atoms, {"ce1": ["USA", "CHN"], "ce2": ["USA", "CHN"]})
    summary, rows = build(tmp_path, "reasoning.min_context=1")
    asked = {frozenset(r["queried"]) for r in rows["S-CRR"]}
    assert frozenset((kinds["P"], kinds["T"])) not in asked
    assert asked and all(kinds["S"] in pair for pair in asked)
    assert all(r["answer_label"] in ("Before", "After") for r in rows["S-CRR"])
    assert summary.left_out["ambiguous_types"] == 1
    for row in rows["S-CEC"]:
        assert row["answer_label"] not in row["context"]
        assert len(set(row["candidates"])) == 4


def test_a_model_events_own_type_or_none_is_no_schema_node(tmp_path):
    """A model may write an event type of its own, or rule 6 null it: the schema level, over
    CAMEO names, leaves those events out (counted); the instance level keeps them."""
    kinds = ["Demonstrate or rally", None, "Some model's own type", "Engage in negotiation"]
    atoms = story("ce1", ["2025-07-01", "2025-07-05", "2025-07-09", "2025-07-20"], kinds)
    write(tmp_path, atoms, {"ce1": ["USA", "CHN"]})
    summary, rows = build(tmp_path, "reasoning.min_context=1")
    assert summary.left_out["untyped_events"] == 2
    assert {frozenset(r["queried"]) for r in rows["S-CRR"]} == {frozenset(kinds[::3])}
    assert rows["I-CRR"]  # over all four events


def test_gold_letters_are_spread_evenly(month):
    root, _ = month
    summary, rows = build(root, "reasoning.crr_per_story=10", "reasoning.cec_per_story=10")
    for task, options in (("I-CEC", 4), ("I-CRR", 3)):
        counts = Counter(r["answer"] for r in rows[task])
        spread = [counts.get(letter, 0) for letter in string.ascii_uppercase[:options]]
        assert max(spread) - min(spread) <= 1, (task, spread)
        assert summary.letters[task] == dict(zip(string.ascii_uppercase, spread, strict=False))


def test_a_broken_record_is_caught(month):
    root, _ = month
    _, rows = build(root)
    row = rows["I-CEC"][0]
    events = by_doc(row)
    late = dict(
        row,
        events=[
            {**e, "source_date": date(2025, 9, 1)} if e["event_id"] == row["context"][0] else e
            for e in row["events"]
        ],
    )
    assert "after the cut" in unsound(late, TYPES)
    early = dict(
        row,
        events=[
            {**e, "source_date": row["cut_date"]} if e["event_id"] == row["answer_label"] else e
            for e in row["events"]
        ],
    )
    assert "seen by the cut" in unsound(early, TYPES)
    wrong = dict(row, relation="Before" if row["relation"] == "After" else "After")
    assert "the dates say" in unsound(wrong, TYPES)
    twin = events[row["context"][0]]["text"]
    copied = dict(
        row,
        events=[
            {**e, "text": twin} if e["event_id"] == row["answer_label"] else e
            for e in row["events"]
        ],
    )
    assert "near-duplicate" in unsound(copied, TYPES)
    letter = dict(row, answer="D" if row["answer"] != "D" else "A")
    assert "does not name the gold option" in unsound(letter, TYPES)


def test_a_schema_record_resting_on_a_later_document_is_caught(tmp_path):
    kinds = {
        "P": "Demonstrate or rally",
        "T": "Engage in negotiation",
        "S": "Impose embargo or boycott or sanctions",
    }
    days = ["2025-07-01", "2025-07-05", "2025-07-20"]
    write(tmp_path, story("ce1", days, [kinds["P"], kinds["T"], kinds["S"]]), {"ce1": ["USA"]})
    _, rows = build(tmp_path, "reasoning.min_context=1")
    row = rows["S-CRR"][0]
    assert unsound(row, TYPES) is None
    late = dict(row, events=[{**row["events"][0], "source_date": date(2025, 9, 1)},
                             *row["events"][1:]])  # fmt: skip
    assert "first seen after the cut" in unsound(late, TYPES)
