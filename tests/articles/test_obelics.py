"""OBELICS filters: values against hand-computed numbers, cut-offs, presets, paragraph removal."""

from __future__ import annotations

import dataclasses
import sys
from types import SimpleNamespace

import pytest

from gdelt_forecast.articles import obelics
from gdelt_forecast.articles.obelics import (
    MIRAI,
    OBELICS,
    PRESETS,
    Perplexity,
    Verdict,
    check,
    clean,
    values,
)
from gdelt_forecast.contract.documents import CHECKS

# Three ordinary English paragraphs (made up for these tests) and some page furniture.
P1 = (
    "The ministers of both countries met in Geneva on Tuesday to discuss a new trade "
    "agreement that had been stalled for more than a year."
)
P2 = (
    "According to officials who attended the talks, the two sides agreed to lower tariffs on "
    "steel and grain before the end of the summer."
)
P3 = (
    "Critics said that the deal would do little for farmers in the north, where prices have "
    "fallen sharply since the drought began."
)
NAMES = "Angela Merkel, Emmanuel Macron, Olaf Scholz, Mark Rutte, Pedro Sánchez"
GERMAN = (
    "Die Minister beider Länder trafen sich am Dienstag in Genf, um über ein neues "
    "Handelsabkommen zu sprechen.\nNach Angaben von Teilnehmern einigten sich beide Seiten "
    "darauf, die Zölle auf Stahl und Getreide noch vor dem Ende des Sommers zu senken."
)


# --- words -------------------------------------------------------------------------------


def test_words_strip_special_characters_from_both_ends_only():
    # "2023," and "$4.5" are special characters only and vanish; "covid-19" loses "-19";
    # inner punctuation stays ("don't", "u.s"); typographic quotes are special too.
    text = "In 2023, $4.5 covid-19 don't U.S. “Hello”"
    assert obelics.words(text) == ["in", "covid", "don't", "u.s", "hello"]


def test_words_split_on_space_newline_and_tab_but_not_carriage_return():
    assert obelics.words("a\tb\nc  d") == ["a", "b", "c", "d"]
    assert obelics.words("a\rb") == ["a\rb"]  # OBELICS splits on " ", "\n" and "\t" only


def test_standardize_whitespace_maps_unusual_spaces_to_a_space():
    assert obelics.standardize_whitespace("a\u00a0b\u3000c\u2009d\ufffce") == "a b c d e"


# --- each filter value -------------------------------------------------------------------


def test_words_value():
    # the, old, farmer, sold, his, grain, at, market, last, spring -> 10
    assert (
        values("The old farmer sold his grain at market last spring.", "paragraph", False)["words"]
        == 10
    )


def test_char_repetition_top_k_limited_by_sqrt_of_distinct():
    # "abababababababab" (16 chars): 7 ten-grams, "ababababab" at i=0,2,4,6 (4 times) and
    # "bababababa" at i=1,3,5 (3 times). distinct=2, floor(sqrt(2))=1, repeated=2, so k=1:
    # ratio = 4 / 7.
    assert values("ab" * 8, "paragraph", False)["char_repetition"] == 4 / 7


def test_char_repetition_top_k_limited_by_repeated_ngrams():
    # "abcdefghijabcdefghij" (20 chars): 11 ten-grams; "abcdefghij" twice (i=0, i=10), the
    # other 9 once. distinct=10, floor(sqrt(10))=3, repeated=1, so k=1: ratio = 2 / 11.
    assert values("abcdefghij" * 2, "paragraph", False)["char_repetition"] == 2 / 11


def test_char_repetition_of_short_or_unrepeated_text_is_zero():
    assert values("abcdefghi", "paragraph", False)["char_repetition"] == 0.0  # no 10-gram
    # 13 chars: 4 distinct ten-grams, none repeated, so k=0.
    assert values("abcdefghijklm", "paragraph", False)["char_repetition"] == 0.0


def test_word_repetition():
    # 10 words, 6 five-grams: "one two three four five" twice, the 4 others once -> 2 / 6.
    text = "one two three four five one two three four five"
    assert values(text, "paragraph", False)["word_repetition"] == 2 / 6
    assert values("one two three four", "paragraph", False)["word_repetition"] == 0.0


def test_special_characters_count_spaces_digits_and_typographic_marks():
    # "Hi, 2 you!" = 10 chars; special: "," " " "2" " " "!" = 5 -> 0.5
    assert values("Hi, 2 you!", "paragraph", False)["special_characters"] == 0.5
    # "“Yes”—no" = 8 chars; special: “ ” — = 3 -> 0.375
    assert values("“Yes”—no", "paragraph", False)["special_characters"] == 0.375
    # "good 👍" = 6 code points; special: " " and the emoji -> 2 / 6
    assert values("good 👍", "paragraph", False)["special_characters"] == 2 / 6
    assert values("", "paragraph", False)["special_characters"] == 0.0


def test_stopwords():
    # 10 words; stop words: the, his, at -> 3 / 10
    text = "The old farmer sold his grain at market last spring."
    assert values(text, "paragraph", False)["stopwords"] == 0.3
    # 6 words; stop words: the, on, the -> 3 / 6
    assert values("The cat sat on the mat", "paragraph", False)["stopwords"] == 0.5
    assert values("2023 !!!", "paragraph", False)["stopwords"] == 0.0  # no words at all


def test_flagged_words():
    # 4 words, one of them ("erotic") flagged -> 1 / 4
    assert values("An erotic novel, banned.", "paragraph", False)["flagged_words"] == 0.25


def test_punctuation_ratio_and_the_short_paragraph_rule():
    # tokens: Yes . No , maybe ! -> 6 tokens, 3 marks. Fewer than 12 tokens: a paragraph
    # scores 1.0; a document has no such rule: 3 / 6.
    assert values("Yes. No, maybe!", "paragraph", False)["punctuation"] == 1.0
    assert values("Yes. No, maybe!", "document", False)["punctuation"] == 0.5
    # 11 one-letter words + "." = 12 tokens: counted, 1 / 12.
    assert values("a b c d e f g h i j k.", "paragraph", False)["punctuation"] == 1 / 12
    # 10 words + "." = 11 tokens: still short.
    assert values("a b c d e f g h i j.", "paragraph", False)["punctuation"] == 1.0
    # tokens: It costs 4 . 5 , doesn't it ? -> 9 tokens ("$" is no token), 3 marks.
    assert values("It costs $4.5, doesn't it?", "document", False)["punctuation"] == 3 / 9
    assert values("", "paragraph", False)["punctuation"] == 0.0  # no tokens at all


def test_language_values_only_on_request():
    assert "lang" not in values(P1, "document", False)
    result = values(P1, "document", True)
    assert result["lang"] == "en" and result["lang_score"] > 0.99
    assert list(result) == list(obelics.FILTERS)


def test_values_rejects_an_unknown_level():
    with pytest.raises(ValueError, match="level"):
        values(P1, "page", False)  # type: ignore[arg-type]


# --- check -------------------------------------------------------------------------------


def test_a_value_exactly_at_the_cut_off_passes():
    text = "The old farmer sold his grain at market last spring."  # stopwords exactly 0.3
    assert check(values(text, "paragraph", False), OBELICS, "paragraph") is None
    fewer = "The old farmer sold fresh grain at market last spring."  # the, at: 2 / 10
    verdict = check(values(fewer, "paragraph", False), OBELICS, "paragraph")
    assert verdict == Verdict("stopwords", 0.2, "<", 0.3)
    assert verdict.reason == "stopwords 0.2 < 0.3"


def test_check_names_the_first_failing_filter_in_filters_order():
    base = values(P1, "paragraph", False)
    assert check({**base, "words": 4}, OBELICS, "paragraph") is None  # min is 4
    assert check({**base, "words": 3}, OBELICS, "paragraph") == Verdict("words", 3, "<", 4)
    assert check({**base, "words": 3}, OBELICS, "paragraph").reason == "words 3 < 4"
    too_long = check({**base, "words": 1001}, OBELICS, "paragraph")
    assert too_long == Verdict("words", 1001, ">", 1000)
    assert too_long.reason == "words 1001 > 1000"
    failing_two = {**base, "words": 3, "special_characters": 0.5}
    assert check(failing_two, OBELICS, "paragraph").filter == "words"
    # A value that would print like the cut-off prints in full; the verdict keeps it whole.
    assert check({**base, "special_characters": 0.3}, OBELICS, "paragraph") is None
    close = check({**base, "special_characters": 0.30001}, OBELICS, "paragraph")
    assert (close.value, close.reason) == (0.30001, "special_characters 0.30001 > 0.3")
    short = check({**base, "special_characters": 0.312512}, OBELICS, "paragraph")
    assert (short.value, short.reason) == (0.312512, "special_characters 0.3125 > 0.3")


def test_check_language_at_document_level():
    doc = values(P1, "document", False)
    assert check({**doc, "lang": "en", "lang_score": 0.8}, OBELICS, "document") is None
    german = check({**doc, "lang": "de", "lang_score": 0.99}, OBELICS, "document")
    assert (german, german.reason) == (Verdict("lang", "de", "!=", "en"), "lang de != en")
    unknown = check({**doc, "lang": None, "lang_score": 0.0}, MIRAI, "document")
    assert (unknown.value, unknown.reason) == (None, "lang None != en")
    unsure = check({**doc, "lang": "en", "lang_score": 0.75}, MIRAI, "document")
    assert unsure == Verdict("lang_score", 0.75, "<", 0.8)
    assert unsure.reason == "lang_score 0.75 < 0.8"
    with pytest.raises(ValueError, match="language=True"):
        check(doc, OBELICS, "document")


def passing(limits) -> dict:
    """Values that pass every check of `limits`."""
    return {
        "words": limits.words[0],
        "char_repetition": 0.0,
        "word_repetition": 0.0,
        "special_characters": 0.0,
        "stopwords": 1.0,
        "flagged_words": 0.0,
        "punctuation": 1.0,
        "lang": limits.lang,
        "lang_score": 1.0,
        "perplexity": 0.0,
    }


# A failing value of every check (every cut-off of a share is under 1).
FAILING = {
    "words": 0,
    "char_repetition": 1.0,
    "word_repetition": 1.0,
    "special_characters": 1.0,
    "stopwords": 0.0,
    "flagged_words": 1.0,
    "punctuation": 0.0,
    "lang": "xx",
    "lang_score": 0.0,
    "perplexity": 1e6,
}


def test_every_check_names_a_declared_filter(model_files):
    assert set(FAILING) == set(CHECKS) - {"no paragraph kept"}
    with_perplexity = dataclasses.replace(OBELICS, perplexity=Perplexity(*model_files))
    named = set()
    for preset in (OBELICS, MIRAI, with_perplexity):
        for level in ("paragraph", "document"):
            ok = passing(preset.thresholds(level))
            assert check(ok, preset, level) is None
            for name, bad in FAILING.items():
                verdict = check({**ok, name: bad}, preset, level)
                if verdict is not None:  # None: the check is off in this preset or level
                    assert (verdict.filter, verdict.value) == (name, bad)
                    assert verdict.reason.startswith(f"{name} ")
                    named.add(verdict.filter)
    assert named == set(FAILING)  # every check ran somewhere
    assert Verdict("no paragraph kept").reason == "no paragraph kept"
    with pytest.raises(ValueError, match="not a declared filter"):
        Verdict("length", 3, "<", 4)


def test_presets_hold_the_reference_cut_offs():
    assert PRESETS == {"obelics": OBELICS, "mirai": MIRAI}
    assert (OBELICS.version, MIRAI.version) == ("obelics-v1", "mirai-v1")
    assert (OBELICS.separator, MIRAI.separator) == ("\n\n", "\n")
    assert OBELICS.document.words == (10, 2000) and MIRAI.document.words == (10, 10000)
    assert OBELICS.document.special_characters == 0.275
    assert MIRAI.paragraph.stopwords is None and MIRAI.document.punctuation is None
    assert MIRAI.paragraph.lang is None and MIRAI.document.lang == "en"
    assert OBELICS.perplexity is None and MIRAI.perplexity is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        OBELICS.version = "x"  # type: ignore[misc]


def test_flagged_share_exactly_at_mirai_cut_off_passes_mirai():
    # One flagged word in 50 -> 0.02: MIRAI's paragraph maximum (passes), twice OBELICS's.
    filler = (
        "apple banana cherry grape lemon mango melon olive peach pear plum quince raisin "
        "almond walnut cashew pecan hazel acorn maple birch cedar spruce willow aspen poplar "
        "alder laurel myrtle juniper fennel garlic ginger basil thyme sage parsley chive "
        "mint dill cumin clove nutmeg saffron pepper radish turnip carrot potato"
    )
    result = values("erotic " + filler, "paragraph", False)
    assert (result["words"], result["flagged_words"]) == (50, 0.02)
    assert check(result, MIRAI, "paragraph") is None
    assert check({**result, "stopwords": 0.5}, OBELICS, "paragraph").reason == (
        "flagged_words 0.02 > 0.01"
    )


# --- clean -------------------------------------------------------------------------------


def test_failing_paragraphs_are_removed_first_middle_and_last():
    text = "\n\n".join(["Share this article", P1, NAMES, P2, P3, "Read more"])
    result = clean(text, OBELICS)
    assert [p.reason for p in result.paragraphs] == [
        "words 3 < 4",
        None,
        "stopwords 0 < 0.3",  # ten words, none a stop word
        None,
        None,
        "words 2 < 4",
    ]
    assert result.text == "\n\n".join([P1, P2, P3])
    assert result.kept and result.reason is None
    assert result.values["words"] == 25 + 24 + 22  # the three kept paragraphs
    assert result.values["lang"] == "en"


def test_mirai_preset_removes_a_failing_last_line():
    # MIRAI's own loop kept failing paragraphs after the last passing one; this one must go.
    result = clean("\n".join([P1, "Share", P2, "Read more"]), MIRAI)
    assert [p.kept for p in result.paragraphs] == [True, False, True, False]
    assert result.text == f"{P1}\n{P2}"


def test_presets_differ_on_the_same_text():
    text = "\n\n".join([P1, NAMES, P2])
    # OBELICS checks stop words: the list of names goes. MIRAI does not: it stays.
    assert clean(text, OBELICS).text == f"{P1}\n\n{P2}"
    assert clean(text, MIRAI).text == f"{P1}\n{NAMES}\n{P2}"  # blank lines fail "words"
    # German news in two lines. OBELICS sees one paragraph of 40 words with two English stop
    # words (am, in): 2 / 40 = 0.05, removed. MIRAI keeps both lines (no stop-word check)
    # and the document fails on language.
    obelics_result = clean(GERMAN, OBELICS)
    assert obelics_result.paragraphs[0].reason == "stopwords 0.05 < 0.3"
    assert obelics_result.verdict == Verdict("no paragraph kept")
    assert (obelics_result.kept, obelics_result.reason) == (False, "no paragraph kept")
    mirai_result = clean(GERMAN, MIRAI)
    assert [p.kept for p in mirai_result.paragraphs] == [True, True]
    assert (mirai_result.kept, mirai_result.reason) == (False, "lang de != en")


def test_no_paragraph_kept():
    result = clean("Share this\n\nRead more", OBELICS)
    assert (result.kept, result.reason, result.text, result.values) == (
        False,
        "no paragraph kept",
        "",
        {},
    )
    assert [p.reason for p in result.paragraphs] == ["words 2 < 4", "words 2 < 4"]
    assert clean("", MIRAI).reason == "no paragraph kept"


def test_document_level_uses_the_rejoined_text():
    # Both paragraphs pass at paragraph level (5 and 4 words); together 9 words < 10.
    short = clean("They said it was over.\n\nWe can go now.", OBELICS)
    assert [p.kept for p in short.paragraphs] == [True, True]
    assert (short.kept, short.reason) == (False, "words 9 < 10")
    # 22 + 2 + 19 = 43 chars; special: 4 spaces and "." twice, plus "\n\n" -> 12 / 43 =
    # 0.2791: each paragraph is under the paragraph maximum 0.3, the document is over 0.275.
    text = "They said it was over.\n\nWe can go home now."
    result = clean(text, OBELICS)
    assert result.text == text and result.values["special_characters"] == 12 / 43
    assert (result.kept, result.reason) == (False, "special_characters 0.2791 > 0.275")


def test_clean_standardises_whitespace_first():
    result = clean(P1.replace(" ", "\u00a0"), OBELICS)
    assert result.text == P1 and result.kept


# --- perplexity (optional, off) ----------------------------------------------------------


def test_perplexity_needs_model_paths(tmp_path):
    with pytest.raises(ValueError, match="kenlm_model"):
        Perplexity("", "")
    with pytest.raises(FileNotFoundError, match="is not a file"):
        Perplexity(str(tmp_path / "missing.arpa"), str(tmp_path / "missing.model"))


@pytest.fixture
def model_files(tmp_path):
    kenlm_file, sp_file = tmp_path / "en.arpa.bin", tmp_path / "en.sp.model"
    kenlm_file.write_bytes(b"")
    sp_file.write_bytes(b"")
    obelics._perplexity_models.cache_clear()
    yield str(kenlm_file), str(sp_file)
    obelics._perplexity_models.cache_clear()


def test_perplexity_without_kenlm_installed_is_a_clear_error(model_files, monkeypatch):
    monkeypatch.setitem(sys.modules, "kenlm", None)  # makes `import kenlm` fail
    preset = dataclasses.replace(OBELICS, perplexity=Perplexity(*model_files))
    with pytest.raises(RuntimeError, match="kenlm and sentencepiece"):
        clean(P1, preset)


def test_perplexity_normalises_then_scores(model_files, monkeypatch):
    scored: list[str] = []

    class Model:
        def __init__(self, path: str):
            pass

        def score(self, line: str) -> float:
            scored.append(line)
            return -2.0 * (len(line.split()) + 1)  # log10 -2 per token: perplexity 100

    class Tokenizer:
        def load(self, path: str) -> None:
            pass

        def encode_as_pieces(self, text: str) -> list[str]:
            return text.split()

    monkeypatch.setitem(sys.modules, "kenlm", SimpleNamespace(Model=Model))
    monkeypatch.setitem(
        sys.modules, "sentencepiece", SimpleNamespace(SentencePieceProcessor=Tokenizer)
    )
    settings = Perplexity(*model_files)
    # Digits become 0, « » become ", the newline (non-printing) goes.
    assert obelics.perplexity("«Année»\n2024", settings) == 100.0
    assert scored == ['"Année"0000']

    kept = clean(P1, dataclasses.replace(OBELICS, perplexity=settings))
    assert kept.kept and kept.values["perplexity"] == 100.0
    strict = dataclasses.replace(OBELICS, perplexity=Perplexity(*model_files, max=50.0))
    assert clean(P1, strict).verdict == Verdict("perplexity", 100.0, ">", 50.0)
    assert clean(P1, strict).reason == "perplexity 100.0 > 50.0"
