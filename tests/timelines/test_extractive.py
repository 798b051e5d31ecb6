"""Extractive timelines: dated lead sentences and titles, de-duplicated, in date order."""

from datetime import date, datetime

import pytest

from pipeline.timelines.complex_events import ComplexEvent
from pipeline.timelines.extractive import precision, sentence_date, timeline

PUBLISHED = datetime(2019, 11, 20)


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("On 7 September 2019, the TTP attacked five military checkposts.", "2019-09-07"),
        ("The US military said in a statement on Wednesday.", "2019-11-13"),  # the last one
        ("The talks broke down in March 2019, officials said.", "2019-03"),
        ("The company was founded in 1998.", "1998"),
        ("The leaders may meet again.", None),  # "may" is no date
        ("He will travel to Paris next week.", None),  # no day, month or year named
        ("The summit is planned for 12 December 2019.", None),  # after publication
    ],
)
def test_sentence_dates(sentence, expected):
    assert sentence_date(sentence, PUBLISHED) == expected


def test_precision():
    assert [precision(p) for p in ("on Tuesday", "Nov. 18", "in March 2019", "in 1998", "may")] == [
        "day", "day", "month", "year", None,
    ]  # fmt: skip


def test_timeline_orders_dates_and_drops_repeats():
    def doc(doc_id, day, title, lead):
        return {"doc_id": doc_id, "date": date(2019, 11, day), "title": title, "lead": lead,
                "subject": "United States", "event_type": "Consult", "object": "China",
                "location": None}  # fmt: skip

    event = ComplexEvent("ce-1", "t", "CHN", "USA", date(2019, 11, 19), date(2019, 11, 20), [
        doc("a", 19, "Trade talks stall", "Negotiators met in Beijing on Monday. No deal."),
        doc("b", 20, "Trade talks stall", "Tariffs rose in 2018. Talks resumed in March 2019."),
    ])  # fmt: skip
    rows = timeline(event)
    assert [(r["date"], r["text"], r["source_doc_id"]) for r in rows] == [
        ("2018", "Tariffs rose in 2018.", "b"),
        ("2019-03", "Talks resumed in March 2019.", "b"),
        ("2019-11-18", "Negotiators met in Beijing on Monday.", "a"),  # the day before
        ("2019-11-19", "Trade talks stall", "a"),  # the title, once: b repeats it
    ]
    assert rows[0]["subject"] == "United States" and rows[0]["event_type"] == "Consult"
