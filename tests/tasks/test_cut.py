"""Cuts: what a date means as a period, which side of a cut an event falls on, the seeded
choice of cut days, and the splits by cut date."""

from datetime import date

import pytest

from pipeline.config import TasksConfig
from pipeline.tasks.cut import cuts, period, split_of


def atom(when, text):
    return {"date": when, "text": text, "source_doc_id": "d"}


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
    found = cuts("ce-1", TIMELINE, cfg)
    # 2025-08-07 leaves no target; 2025-07-20 and 2025-08-05 do.
    assert [c.cut_date for c in found] == [date(2025, 7, 20), date(2025, 8, 5)]
    july, august = found
    assert [a["text"] for a in july.background] == ["a year before", "day one"]
    assert [a["text"] for a in july.targets] == ["sometime in August", "day two", "day three"]
    assert july.left_out == 2  # undated, and "2025-07" spans the cut
    assert [a["text"] for a in august.background][1:3] == ["sometime in July", "day one"]
    assert [a["text"] for a in august.targets] == ["day three"]
    assert august.left_out == 2  # undated, and "2025-08" spans the cut


def test_cuts_are_seeded_per_complex_event_and_respect_the_minimums():
    cfg = TasksConfig(cuts_per_timeline=1, seed=3)
    assert cuts("ce-1", TIMELINE, cfg) == cuts("ce-1", TIMELINE, cfg)
    drawn = {cuts(f"ce-{i}", TIMELINE, cfg)[0].cut_date for i in range(40)}
    assert drawn == {date(2025, 7, 20), date(2025, 8, 5)}  # both reachable, nothing else
    fewer_before = TasksConfig(min_background=4, cuts_per_timeline=5)
    assert [c.cut_date for c in cuts("ce-1", TIMELINE, fewer_before)] == [date(2025, 8, 5)]
    fewer_after = TasksConfig(min_targets=2, cuts_per_timeline=5)
    assert [c.cut_date for c in cuts("ce-1", TIMELINE, fewer_after)] == [date(2025, 7, 20)]
    assert cuts("ce-1", TIMELINE[:1], TasksConfig()) == []


@pytest.mark.parametrize(
    ("cut", "split"),
    [(date(2025, 8, 1), "test"), (date(2025, 7, 31), "dev"), (date(2025, 7, 25), "dev"),
     (date(2025, 7, 24), "train")],
)  # fmt: skip
def test_split_by_cut_date(cut, split):
    assert split_of(cut, date(2025, 8, 1), TasksConfig(dev_days=7)) == split
    assert split_of(cut, date(2025, 9, 1), TasksConfig(test_from=date(2025, 8, 1))) == split
