"""Language identification: deterministic, also across threads, and quiet on empty input."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from gdelt_forecast.articles.language import detect

ENGLISH = (
    "The ministers of both countries met in Geneva on Tuesday to discuss a new trade "
    "agreement that had been stalled for more than a year."
)
GERMAN = (
    "Die Minister beider Länder trafen sich am Dienstag in Genf, um über ein neues "
    "Handelsabkommen zu sprechen. Nach Angaben von Teilnehmern einigten sich beide Seiten "
    "darauf, die Zölle auf Stahl und Getreide noch vor dem Ende des Sommers zu senken."
)
# Short and mixed: the kind of text where an unseeded langdetect changes its answer.
AMBIGUOUS = "ok ja nein si oui no"


@pytest.mark.parametrize(("text", "lang"), [(ENGLISH, "en"), (GERMAN, "de")])
def test_detects_the_language_with_a_high_score(text, lang):
    code, score = detect(text)
    assert code == lang
    assert 0.99 < score <= 1.0


def test_same_text_same_answer():
    for text in (ENGLISH, GERMAN, AMBIGUOUS):
        assert len({detect(text) for _ in range(5)}) == 1


def test_threads_give_the_sequential_answers():
    texts = [ENGLISH, GERMAN, AMBIGUOUS] * 20
    sequential = [detect(text) for text in texts]
    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(detect, texts)) == sequential


def test_text_is_lower_cased_and_newlines_are_spaces():
    assert detect(ENGLISH.upper()) == detect(ENGLISH)
    assert detect(GERMAN.replace(". ", ".\n")) == detect(GERMAN)


@pytest.mark.parametrize("text", ["", "   \n\t", "2023 - 4.5 % !!!", "https://example.org/"])
def test_nothing_to_go_on_gives_none(text):
    assert detect(text) == (None, 0.0)
