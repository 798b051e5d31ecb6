"""The tasks' soundness rules on hand-made records (the demo's records are checked in
test_build.py and by `release verify`), and the even spread of gold letters."""

from collections import Counter
from datetime import date

from gdelt_forecast.contract import leakage
from gdelt_forecast.tasks.records import balance, record_id

CUT = date(2025, 8, 5)
ESPER_TITLE = "Esper accuses China of intimidating smaller Asian nations"
ESPER_LEAD = ("U.S. Defense Secretary Mark Esper on Wednesday accused China of using coercion "
              "and intimidation against smaller Asian nations.")  # fmt: skip


def event(when, text, doc="d1", seen=None):
    return {
        "date": when,
        "text": text,
        "source_doc_id": doc,
        "source_date": seen or date.fromisoformat(when),
    }


def row(task="LTF", background=None, target=None, split="test", candidates=(), answer="1."):
    return {
        "id": record_id(task, f"ce-{split}", CUT),
        "task": task,
        "complex_event_id": "ce",
        "cut_date": CUT,
        "split": split,
        "background": background or [event("2025-08-01", "Trade talks stall")],
        "target": target or [event("2025-08-07", "Tariffs are raised")],
        "candidates": list(candidates),
        "answer": answer,
    }


def test_a_sound_record_passes_every_rule():
    ok = row()
    assert leakage.dated_wrong(ok) is None and leakage.unsourced(ok) is None
    assert leakage.answer_in_context(ok, ["Trade talks stall", "Tariffs are raised"]) is None
    assert leakage.unsourced(ok, {"d1": date(2025, 8, 1)}) is not None  # target's d1 differs


def test_rule_1_names_a_background_from_a_page_seen_after_the_cut():
    late = row(background=[event("2025-08-04", "A lead sentence", seen=date(2025, 8, 7))])
    assert "first seen on 2025-08-07, cut 2025-08-05" in leakage.unsourced(late)
    early = row(target=[event("2025-08-07", "A plan", seen=date(2025, 8, 5))])
    assert "target event" in leakage.unsourced(early)
    plan = row(target=[event("2025-08-09", "A plan", seen=date(2025, 8, 7))])
    assert "after its source's 2025-08-07" in leakage.unsourced(plan)
    moved = row()
    assert "was first seen on 2025-07-30, not 2025-08-01" in leakage.unsourced(
        moved, {"d1": date(2025, 7, 30)}
    )


def test_rule_4_names_an_answer_in_its_own_background_and_near_duplicate_options():
    both = row(
        background=[event("2025-08-04", ESPER_LEAD)], target=[event("2025-08-07", ESPER_TITLE)]
    )
    assert "is in its background" in leakage.answer_in_context(both, [])
    options = [
        "Tariffs are raised",
        "Chinese hunter catches bubonic plague after eating wild rabbit",
        "Hunter in Beijing diagnosed with bubonic plague after eating a rabbit",
        "A summit is held",
    ]
    mcnc = row("MCNC", candidates=options, answer="A")
    assert "are near-duplicates" in leakage.answer_in_context(mcnc, ["Tariffs are raised"])
    told = row(
        "MCNC",
        candidates=[
            "Tariffs are raised",
            "Ships collide",
            "Trade talks stalled",
            "A summit is held",
        ],
        answer="A",
    )
    assert "the story's 'Trade talks stall'" in leakage.answer_in_context(
        told, ["Trade talks stall", "Tariffs are raised"]
    )
    vqa_no = row("VQA", candidates=["Trade talks stalled"], answer="no")
    assert leakage.answer_in_context(vqa_no, ["Trade talks stall"]) is not None
    vqa_yes = row("VQA", candidates=["Tariffs are raised"], answer="yes")
    assert leakage.answer_in_context(vqa_yes, ["Trade talks stall", "Tariffs are raised"]) is None


def test_rule_5_compares_splits_by_near_duplicate():
    train = row(split="train", background=[event("2025-07-20", ESPER_LEAD)])
    test = row(split="test", target=[event("2025-08-07", ESPER_TITLE)])
    assert set(leakage.leaked([train, test])) == {test["id"]}
    assert leakage.leaked([{**train, "split": "test"}, {**test, "split": "train"}]) == {}


def test_gold_letters_are_spread_evenly_and_seeded():
    rows = [
        {
            **row("MCNC", candidates=["gold", "w1", "w2", "w3"], answer="A"),
            "id": f"MCNC-{i:02d}",
            "complex_event_id": f"ce-{i}",
        }
        for i in range(10)
    ]
    placed = balance(rows, seed=0)
    assert sorted(Counter(r["answer"] for r in placed).values()) == [2, 2, 3, 3]
    for r in placed:
        assert r["candidates"]["ABCD".index(r["answer"])] == "gold"
        assert sorted(r["candidates"]) == ["gold", "w1", "w2", "w3"]
    assert balance(rows, seed=0) == placed and balance(rows, seed=1) != placed
