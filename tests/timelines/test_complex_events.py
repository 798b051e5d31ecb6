"""Grouping documents into complex events: pair first, then date gaps and text similarity."""

from datetime import date, timedelta

import pytest

from gdelt_forecast.ground.config import load_config
from gdelt_forecast.timelines.complex_events import group

AUG1 = date(2025, 8, 1)
TRADE = "tariffs trade talks Beijing Washington soybeans deal"
FLOOD = "flood river rain evacuation villages rescue"


def doc(doc_id, day, words, pair=("CHN", "USA")):
    return {
        "doc_id": doc_id,
        "date": AUG1 + timedelta(days=day),
        "title": words,
        "lead": words,
        "country_a": pair[0],
        "country_b": pair[1],
    }


def cfg(tmp_path, *overrides):
    return load_config(None, list(overrides), tmp_path).timelines


def ordered(docs):  # the order timelines/documents.sql gives
    return sorted(docs, key=lambda d: (d["country_a"], d["country_b"], d["date"], d["doc_id"]))


def test_documents_of_one_story_group_and_others_do_not(tmp_path):
    docs = ordered(
        [
            doc("t1", 0, TRADE),
            doc("t2", 3, TRADE + " farmers"),
            doc("t3", 12, TRADE + " markets"),
            doc("f1", 1, FLOOD),
            doc("f2", 2, FLOOD + " dam"),
            doc("x1", 2, TRADE, pair=("RUS", "USA")),  # the same words, another pair
        ]
    )
    events = group(docs, AUG1, cfg(tmp_path))
    assert [[d["doc_id"] for d in e.documents] for e in events] == [["t1", "t2"], ["f1", "f2"]]
    trade = events[0]
    assert (trade.country_a, trade.country_b, trade.first_date, trade.last_date) == (
        "CHN",
        "USA",
        AUG1,
        AUG1 + timedelta(days=3),
    )
    assert trade.complex_event_id.startswith("ce-") and trade.title in (TRADE, TRADE + " farmers")
    # t3 is 9 days after t2: within a wider gap it joins, and the story's id changes with it.
    wider = group(docs, AUG1, cfg(tmp_path, "timelines.max_gap_days=9"))
    assert [d["doc_id"] for d in wider[0].documents] == ["t1", "t2", "t3"]
    assert wider[0].complex_event_id != trade.complex_event_id
    assert group(list(docs), AUG1, cfg(tmp_path)) == events  # deterministic


def test_month_history_and_limits(tmp_path):
    docs = ordered(
        [
            doc("old1", -20, TRADE),
            doc("old2", -18, TRADE),  # a story of last month only
            doc("a", -2, FLOOD),
            doc("b", 1, FLOOD),
            doc("c", 2, FLOOD + " dam"),
            doc("d", 3, FLOOD),
        ]
    )
    events = group(docs, AUG1, cfg(tmp_path))
    assert [[d["doc_id"] for d in e.documents] for e in events] == [["a", "b", "c", "d"]]
    capped = group(docs, AUG1, cfg(tmp_path, "timelines.max_documents=2"))
    assert [d["doc_id"] for d in capped[0].documents] == ["c", "d"]  # the latest
    assert group(docs, AUG1, cfg(tmp_path, "timelines.min_documents=5")) == []
    strict = group(docs, AUG1, cfg(tmp_path, "timelines.min_similarity=1.0"))
    assert strict == []  # no two texts are identical: nothing links
    assert group([], AUG1, cfg(tmp_path)) == []


def test_links_do_not_depend_on_the_block(tmp_path, monkeypatch):
    """A busy pair's similarities are computed a block of documents at a time against those
    within the gap: a block of 3 gives the stories of one block holding every document."""
    from gdelt_forecast.timelines import complex_events

    topics = [TRADE, FLOOD, "election vote ballots count parliament seats"]
    docs = ordered(
        [doc(f"d{n:02}", n % 25 - 5, f"{topics[n % 3]} w{n % 4}") for n in range(40)]
        + [doc("x1", 3, TRADE, pair=("RUS", "USA")), doc("x2", 4, TRADE, pair=("RUS", "USA"))]
    )
    for gap in ("3", "7"):
        config = cfg(tmp_path, f"timelines.max_gap_days={gap}")
        monkeypatch.setattr(complex_events, "_BLOCK", 1000)
        whole = group(docs, AUG1, config)
        monkeypatch.setattr(complex_events, "_BLOCK", 3)
        assert group(docs, AUG1, config) == whole
        assert len(whole) > 1
    with pytest.raises(ValueError, match="date order"):
        group([doc("b", 2, TRADE), doc("a", 0, TRADE)], AUG1, cfg(tmp_path))
