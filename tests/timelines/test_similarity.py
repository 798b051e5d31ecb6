"""The near-duplicate measure on real pairs (titles and lead sentences of the
article-extraction benchmark's pages): pairs that tell one happening merge,
pairs from one story that tell two do not."""

import pytest

from gdelt_forecast.contract.similarity import (
    STOP_WORDS,
    THRESHOLD,
    Index,
    containment,
    near_duplicate,
)

ESPER_TITLE = "Esper accuses China of intimidating smaller Asian nations"
ESPER_LEAD = ("U.S. Defense Secretary Mark Esper on Wednesday accused China of using coercion "
              "and intimidation against smaller Asian nations to advance its interests, and he "
              "urged Vietnam and others in the region to push back.")  # fmt: skip
PLAGUE_TITLES = (
    "Chinese hunter catches bubonic plague after eating wild rabbit",
    "Hunter in Beijing diagnosed with bubonic plague after eating a rabbit",
)


@pytest.mark.parametrize(
    "a, b",
    [
        (ESPER_TITLE, ESPER_LEAD),  # a title and the lead sentence that says the same
        PLAGUE_TITLES,  # two outlets' titles of one happening
        ("Does Marie Yovanovitch Have a Net Worth of $17 Million?",
         "Does Marie Yovanovitch Have a Net Worth of $17 Million?"),
        ("Bubonic plague: Third case of plague in China as panic begins – ‘The plague is "
         "coming’", "A THIRD case of the plague has been reported in China – with the public "
         "beginning to panic over the potential outbreak."),
    ],
)  # fmt: skip
def test_pairs_that_must_merge(a, b):
    assert near_duplicate(a, b) and near_duplicate(b, a)


@pytest.mark.parametrize(
    "a, b",
    [
        ("Beijing tariff demands may expand US-China trade deal",
         "China's commerce ministry said this month that removing tariffs imposed during the "
         "trade war is an important condition to any deal."),  # same story, two statements
        ("Trump’s Made-for-TV Trade War Keeps World Guessing",
         "Investors don't seem to know what to make of the US-China trade war"),
        ("Key moments from Kurt Volker's and Tim Morrison's impeachment hearing testimony",
         "Kurt Volker, the former special envoy to Ukraine, and Tim Morrison, a former "
         "National Security Council official, testified side-by-side before the House "
         "Intelligence Committee on Tuesday."),
        ("Three Cases of Plague Diagnosed in China", PLAGUE_TITLES[0]),
        ("2025-08-07", "2025-08-17"),  # MCAC's dates: one day is not another
    ],
)  # fmt: skip
def test_pairs_that_must_not_merge(a, b):
    assert not near_duplicate(a, b) and not near_duplicate(b, a)
    assert containment(a, b) < THRESHOLD


def test_texts_without_content_words_match_only_their_own_key():
    assert near_duplicate("The", "the.") and not near_duplicate("The", "This")
    assert not near_duplicate("", "Trade talks stall")


def test_the_index_finds_what_pairwise_comparison_finds():
    index = Index()
    for text in (ESPER_LEAD, PLAGUE_TITLES[0], "It"):
        index.add(text)
    assert index.find(ESPER_TITLE) == ESPER_LEAD
    assert index.find(PLAGUE_TITLES[1]) == PLAGUE_TITLES[0]
    assert index.find("it!") == "It"
    assert index.find("Three Cases of Plague Diagnosed in China") is None


def test_the_frozen_stop_words_are_scikit_learns():
    """The measure's stop list is a copy (similarity.py says why); a scikit-learn release that
    changes its list fails here, and the copy is then kept or the rule's version bumped."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    assert STOP_WORDS == ENGLISH_STOP_WORDS
    assert "accuses" not in STOP_WORDS and "the" in STOP_WORDS
