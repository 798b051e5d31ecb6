"""Cuts: what a date means as a period, which side of a cut an event falls on (by its date
and by when its source was first seen), the seeded choice of cut days, and the splits by
cut date."""

from datetime import date

import pytest

from gdelt_forecast.ground.config import TasksConfig
from gdelt_forecast.tasks.cut import cuts, period, split_of


def atom(when, text, seen=None):
    """An atomic event whose source was first seen on ``seen`` (default: the last day its
    date can mean, or 2025-08-01 when it has none)."""
    span = period(when)
    seen = seen or (span[1] if span else date(2025, 8, 1))
    return {"date": when, "text": text, "source_doc_id": "d", "source_date": seen}


TIMELINE = [
    atom("2024", "a year before"),
    atom("2025-07", "sometime in July"),
    atom("2025-07-20", "day one"),
    atom("2025-08", "sometime in August"),
    atom("2025-08-05", "day two"),
    atom(None, "undated"),
    atom("2025-08-07", "day three"),
]


def test_period_of_each_precision():
    assert period("2025-08-07") == (date(2025, 8, 7), date(2025, 8, 7))
    assert period("2024-02") == (date(2024, 2, 1), date(2024, 2, 29))
    assert period("2025") == (date(2025, 1, 1), date(2025, 12, 31))
    assert period(None) is None
    assert period("2025-02-31") is None and period("2025-13") is None


def test_a_cut_puts_spanning_and_undated_events_on_neither_side():
    cfg = TasksConfig(cuts_per_timeline=5)
    found, lost = cuts("ce-1", TIMELINE, cfg)
    assert lost == 0
    # 2025-08-07 leaves no target; 2025-07-20 and 2025-08-05 do.
    assert [c.cut_date for c in found] == [date(2025, 7, 20), date(2025, 8, 5)]
    july, august = found
    assert [a["text"] for a in july.background] == ["a year before", "day one"]
    assert [a["text"] for a in july.targets] == ["sometime in August", "day two", "day three"]
    assert july.left_out == 2 and july.withheld == 0  # undated, and "2025-07" spans the cut
    assert [a["text"] for a in august.background][1:3] == ["sometime in July", "day one"]
    assert [a["text"] for a in august.targets] == ["day three"]
    assert august.left_out == 2  # undated, and "2025-08" spans the cut


def test_cuts_are_seeded_per_complex_event_and_respect_the_minimums():
    cfg = TasksConfig(cuts_per_timeline=1, seed=3)
    assert cuts("ce-1", TIMELINE, cfg) == cuts("ce-1", TIMELINE, cfg)
    drawn = {cuts(f"ce-{i}", TIMELINE, cfg)[0][0].cut_date for i in range(40)}
    assert drawn == {date(2025, 7, 20), date(2025, 8, 5)}  # both reachable, nothing else
    fewer_before = TasksConfig(min_background=4, cuts_per_timeline=5)
    assert [c.cut_date for c in cuts("ce-1", TIMELINE, fewer_before)[0]] == [date(2025, 8, 5)]
    fewer_after = TasksConfig(min_targets=2, cuts_per_timeline=5)
    assert [c.cut_date for c in cuts("ce-1", TIMELINE, fewer_after)[0]] == [date(2025, 7, 20)]
    assert cuts("ce-1", TIMELINE[:1], TasksConfig()) == ([], 0)


def test_an_event_from_a_page_seen_after_the_cut_is_in_no_background():
    """Rule 1, as in the demo that broke it: event 1 (2025-08-05) is a lead sentence of a
    page first seen on 2025-08-07, whose title is event 2 (2025-08-07)."""
    story = [
        atom("2025-08-01", "an earlier page's title"),
        atom("2025-08-05", "the lead sentence", seen=date(2025, 8, 7)),
        atom("2025-08-07", "the page's title"),
    ]
    first, fifth = cuts("ce-1", story, TasksConfig(cuts_per_timeline=5))[0]
    assert [a["text"] for a in first.targets] == ["the lead sentence", "the page's title"]
    assert fifth.cut_date == date(2025, 8, 5)
    assert [a["text"] for a in fifth.background] == ["an earlier page's title"]
    assert [a["text"] for a in fifth.targets] == ["the page's title"]
    assert fifth.withheld == 1 and fifth.left_out == 0  # the lead: on neither side
    # Without the earlier page, 2025-08-05's only background would be the lead: no cut.
    assert cuts("ce-1", story[1:], TasksConfig(cuts_per_timeline=5)) == ([], 1)


@pytest.mark.parametrize(
    ("cut", "split"),
    [(date(2025, 8, 1), "test"), (date(2025, 7, 31), "dev"), (date(2025, 7, 25), "dev"),
     (date(2025, 7, 24), "train")],
)  # fmt: skip
def test_split_by_cut_date(cut, split):
    assert split_of(cut, date(2025, 8, 1), TasksConfig(dev_days=7)) == split
    assert split_of(cut, date(2025, 9, 1), TasksConfig(test_from=date(2025, 8, 1))) == split
