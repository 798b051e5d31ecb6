"""The timelines' soundness rules 2, 3 and 6, on a story with a plan, repeated events and
events their documents do not say."""

from datetime import date

from gdelt_forecast.contract.sound import AFTER_SOURCE, GROUNDED, REPEATED, Dropped, sound

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
    dropped = Dropped()
    kept = sound(timeline, SEEN, dropped)
    assert dropped.rules == {AFTER_SOURCE: 1, REPEATED: 2, GROUNDED: 0}
    assert [e["text"] for e in dropped.examples[AFTER_SOURCE]] == [timeline[-1]["text"]]
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
    dropped = Dropped()
    assert [a["date"] for a in sound(timeline, SEEN, dropped)] == ["2019-11-17"]
    assert +dropped.rules == {REPEATED: 1}


def test_an_ungrounded_event_is_dropped_before_it_can_stand_for_a_repeat():
    """Rule 6 runs before rule 3: the early page's event that its page does not say is
    dropped, so the late page's version, which its page does say, is the one kept."""
    timeline = [
        atom("2019-11-18", "Esper accuses China of intimidating smaller Asian nations", "early"),
        atom("2019-11-20", "Esper accuses China of intimidating smaller Asian nations", "late"),
    ]
    dropped = Dropped()
    says = {"early": "text-not-in-document", "late": None}
    kept = sound(timeline, SEEN, dropped, lambda a: says[a["source_doc_id"]])
    assert [a["source_doc_id"] for a in kept] == ["late"]
    assert +dropped.rules == {GROUNDED: 1}
    assert +dropped.reasons == {"text-not-in-document": 1}
    assert dropped.examples[GROUNDED][0]["reason"] == "text-not-in-document"
