"""Extractive timelines: dated lead sentences and titles, in date order. The real sentences
are from pages of scrapinghub's article-extraction benchmark (tests/fixtures/articles and
demo/pages hold some of them)."""

from datetime import date, datetime

import pytest

from gdelt_forecast.contract.text import precision, sentence_date
from gdelt_forecast.timelines.complex_events import ComplexEvent
from gdelt_forecast.timelines.extractive import sentences, timeline

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
        # After publication: dated, so that rule 2 drops it and counts it.
        ("The summit is planned for 12 December 2019.", "2019-12-12"),
    ],
)
def test_sentence_dates(sentence, expected):
    assert sentence_date(sentence, PUBLISHED) == expected


@pytest.mark.parametrize(
    "sentence, expected",
    [
        # A year or month that qualifies a noun dates nothing (real sentences).
        ("Given the impossibility of a senatorial conviction, the only strategy is to taint "
         "the president with the brand of impeachment and weaken him in the 2020 election.",
         None),
        ("Former President Barack Obama, the most popular Democrat in America, inserted "
         "himself into the 2020 primary in recent days by warning candidates against moving "
         "too far to the left.", None),
        ("Sweden has dropped its investigation into a 2010 rape allegation against WikiLeaks "
         "co-founder Julian Assange after a review of the evidence.", None),
        ("Mueller was tasked with investigating Russian collusion and related matters in the "
         "2016 election.", None),
        # ... but the sentence's own date still counts, after the noun's.
        ("It’s unclear whether Hawley’s film is still based on the 2016 plan, or if Hemsworth "
         "will return — both Hemsworth and Pine were said to have had run into contractual "
         "issues in 2018, according to The Hollywood Reporter.", "2018"),
        ("An unsubstantiated rumor was circulated in November 2019 in an apparent attempt to "
         "discredit the former U.S. ambassador to Ukraine.", "2019-11"),
        ("U.S. Defense Secretary Mark Esper on Wednesday accused China of using coercion and "
         "intimidation against smaller Asian nations to advance its interests.", "2019-11-13"),
    ],
)  # fmt: skip
def test_a_date_that_qualifies_a_noun_dates_no_sentence(sentence, expected):
    assert sentence_date(sentence, PUBLISHED) == expected


def test_the_title_is_never_glued_onto_the_lead():
    """The Esper page's text (db6b0816…) as trafilatura gives it: the title is its first
    line, with no stop after it."""
    title = "Esper accuses China of intimidating smaller Asian nations"
    lead = (
        f"{title}\nHANOI, Vietnam (AP) — U.S. Defense Secretary Mark Esper on Wednesday "
        "accused China of using coercion and intimidation against smaller Asian nations "
        "to advance its interests, and he urged Vietnam and others in the region to push "
        "back. He urged Vietnam and others in the region to push back."
    )
    found = sentences(title, lead)
    assert found[0].startswith("HANOI, Vietnam (AP) — U.S. Defense Secretary")
    assert found[0].endswith("push back.") and len(found) == 2  # "U.S." ends no sentence
    assert all(title not in s for s in found)


def test_precision():
    assert [precision(p) for p in ("on Tuesday", "Nov. 18", "in March 2019", "in 1998", "may")] == [
        "day",
        "day",
        "month",
        "year",
        None,
    ]


def test_timeline_orders_dates():
    def doc(doc_id, day, title, lead):
        return {
            "doc_id": doc_id,
            "date": date(2019, 11, day),
            "title": title,
            "lead": lead,
            "subject": "United States",
            "event_type": "Consult",
            "object": "China",
            "location": None,
        }

    event = ComplexEvent(
        "ce-1",
        "t",
        "CHN",
        "USA",
        date(2019, 11, 19),
        date(2019, 11, 20),
        [
            doc("a", 19, "Trade talks stall", "Negotiators met in Beijing on Monday. No deal."),
            doc("b", 20, "Trade talks stall", "Tariffs rose in 2018. Talks resumed in March 2019."),
        ],
    )
    rows = timeline(event)
    assert [(r["date"], r["text"], r["source_doc_id"]) for r in rows] == [
        ("2018", "Tariffs rose in 2018.", "b"),
        ("2019-03", "Talks resumed in March 2019.", "b"),
        ("2019-11-18", "Negotiators met in Beijing on Monday.", "a"),  # the day before
        ("2019-11-19", "Trade talks stall", "a"),
        ("2019-11-20", "Trade talks stall", "b"),  # a repeat: rule 3 (sound.py) merges it
    ]
    assert rows[0]["subject"] == "United States" and rows[0]["event_type"] == "Consult"
