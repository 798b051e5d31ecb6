"""The timelines' soundness rules 2 and 3, on a story with a plan and repeated events."""

from collections import Counter
from datetime import date

from gdelt_forecast.timelines.sound import AFTER_SOURCE, REPEATED, sound

SEEN = {"early": date(2019, 11, 18), "late": date(2019, 11, 20)}


def atom(when, text, doc):
    return {"date": when, "text": text, "source_doc_id": doc}


def test_plans_are_dropped_and_repeats_kept_from_the_earliest_page():
    timeline = [
        atom("2019-11", "Talks resumed in November 2019.", "late"),
        atom("2019-11-17", "Esper accuses China of intimidating smaller Asian nations", "late"),
        atom(
            "2019-11-18",
            "U.S. Defense Secretary Mark Esper accused China of using coercion "
            "and intimidation against smaller Asian nations.",
            "early",
        ),
        atom(
            "2019-11-18", "Chinese hunter catches bubonic plague after eating wild rabbit", "early"
        ),
        atom(
            "2019-11-20",
            "Hunter in Beijing diagnosed with bubonic plague after eating a rabbit",
            "late",
        ),
        atom("2019-12-12", "The summit is planned for 12 December 2019.", "late"),  # a plan
    ]
    dropped = Counter()
    kept = sound(timeline, SEEN, dropped)
    assert dropped == {AFTER_SOURCE: 1, REPEATED: 2}
    # The earlier page's versions stay (in timeline order), with their dates and sources.
    assert [(a["date"], a["source_doc_id"], a["source_date"]) for a in kept] == [
        ("2019-11", "late", date(2019, 11, 20)),  # its period starts before the page
        ("2019-11-18", "early", date(2019, 11, 18)),
        ("2019-11-18", "early", date(2019, 11, 18)),
    ]


def test_within_one_page_the_earlier_event_of_the_timeline_stays():
    timeline = [
        atom(
            "2019-11-17",
            "U.S. Defense Secretary Mark Esper accused China of intimidation "
            "against smaller Asian nations.",
            "late",
        ),
        atom("2019-11-20", "Esper accuses China of intimidating smaller Asian nations", "late"),
    ]
    dropped = Counter()
    assert [a["date"] for a in sound(timeline, SEEN, dropped)] == ["2019-11-17"]
    assert dropped == Counter({REPEATED: 1})
