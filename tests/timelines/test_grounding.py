"""Rule 6 on a real article (Al Jazeera, first seen here on Wednesday 2019-11-20; its true body
from tests/fixtures/articles/ground-truth.json): events it says, an echoed prompt header, an
invented event and dates it never states."""

import json
from datetime import date
from pathlib import Path

import pytest

from gdelt_forecast.contract.grounding import (
    DATE_NOT_IN_DOCUMENT,
    ECHOES_PROMPT,
    TEXT_NOT_IN_DOCUMENT,
    Document,
    ungrounded,
)
from gdelt_forecast.timelines.written import scaffolding

PAGE = "7916ecca969ffdd8f6fc32d171fbe0dd63db40fe4c1d2ade02b1dec5929a162f"
TRUTH = Path(__file__).parents[1] / "fixtures" / "articles" / "ground-truth.json"
SEEN = date(2019, 11, 20)


@pytest.fixture(scope="module")
def document():
    body = json.loads(TRUTH.read_text())[PAGE]["articleBody"]
    return Document("Two US soldiers killed in Afghanistan helicopter crash", body, SEEN)


@pytest.mark.parametrize(
    ("when", "text", "why"),
    [
        ("2019-11-20", "Two US service members killed in a helicopter crash in Afghanistan", None),
        (
            None,
            "The Taliban claimed responsibility for shooting down the helicopter in Logar",
            None,
        ),
        ("2019-11", "The Taliban swapped two Western hostages for three commanders", None),
        ("2001", "Washington invaded Afghanistan after the September 11 attacks", None),
        ("2001-09-11", "The September 11 attacks took place", None),
        # The prompt's own header and field names, read back: nothing of the document.
        ("2019-11-20", "The news release time: 2019-11-20", ECHOES_PROMPT),
        (None, "Event type: none; subject: none; location: none", ECHOES_PROMPT),
        # Invented: words the page never uses.
        (
            "2019-11-20",
            "Russia and China signed a gas pipeline deal in Beijing",
            TEXT_NOT_IN_DOCUMENT,
        ),
        # A true event with a date the page never states (at that precision).
        ("2001-10-07", "Washington invaded Afghanistan", DATE_NOT_IN_DOCUMENT),
        ("2019-11-02", "Two US service members killed in a helicopter crash", DATE_NOT_IN_DOCUMENT),
        ("2018", "Roughly 13,000 US troops remain in Afghanistan", DATE_NOT_IN_DOCUMENT),
    ],
)
def test_an_event_stands_in_its_document_or_is_named(document, when, text, why):
    assert ungrounded({"date": when, "text": text}, document, scaffolding()) == why


def test_the_prompts_words_never_count_as_support(document):
    """ "Location", "name", "relation" and "state" are the page's words too (it says
    "location", "names", "relations", "statement"); as the prompt's words they prove
    nothing, so an event of those words alone is an echo, and the same words beside the
    page's own ones neither help nor hurt."""
    header = {"date": None, "text": "Location: none; name: none; relations stated"}
    assert {"locat", "name", "relat", "state"} <= scaffolding()
    assert ungrounded(header, document, scaffolding()) == ECHOES_PROMPT
    assert ungrounded(header, document, frozenset()) is None  # as the page's own words
    said = {"date": None, "text": "Location and names: the helicopter crashed in Logar"}
    assert ungrounded(said, document, scaffolding()) is None


def test_an_unknown_prompt_version_has_no_scaffolding():
    with pytest.raises(ValueError, match="'openforecast-v0' is not one of this code's"):
        scaffolding("openforecast-v0")
