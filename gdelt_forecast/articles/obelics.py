"""OBELICS text filters: paragraph level, then document level, with two presets.

Definitions follow the OBELICS reference code (huggingface/OBELICS,
`obelics/processors/web_document_filtering.py`); the word lists and character sets are in
`data/obelics_lists.json` (see `data/README.md`). A value exactly at a cut-off passes.

- `obelics`: the OBELICS web-document config; paragraphs are separated by a blank line.
- `mirai`: the checks MIRAI ran (its copy of the code comments out the stop-word and
  punctuation checks); paragraphs are single lines.

A check returns None for a passing text, else a `Verdict` naming the failing filter, its
value and cut-off (as a datatrove filter returns keep, or drop with a reason); the verdict's
`reason` is the text written to the exclusions, e.g. "words 3 < 4".

Neither preset repeats MIRAI's paragraph loop, which kept failing paragraphs that follow
the last passing one: here a failing paragraph is removed wherever it is.

Two sets could not be copied as characters and are rebuilt; results are tied to the
preset versions below:
- Whitespace standardisation: the 13-entry list of the reference code is rendered as
  look-alike spaces in every copy this project could read. `UNUSUAL_SPACES` holds the
  non-ASCII spaces of the reference's special-character set plus the no-break space that
  the reference notes name.
- Emoji: OBELICS adds every emoji of the `emoji` package (1.6.1) to the special
  characters. The filters test single characters, so only single-code-point emoji matter;
  this module takes the characters with the Unicode `Emoji` property (regex's Unicode
  version, which may hold a few emoji newer than emoji 1.6.1).
"""

from __future__ import annotations

import json
import math
import re
import string
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import regex

from gdelt_forecast.articles import language as langid
from gdelt_forecast.contract.documents import CHECKS, FILTERS

Level = Literal["paragraph", "document"]

CHAR_NGRAM = 10
WORD_NGRAM = 5
# At paragraph level a text with fewer tokens than this scores 1.0 on punctuation: too
# short to judge (OBELICS min_number_words_to_check_punctuation_ratio_node_level).
MIN_PUNCTUATION_TOKENS = 12
UNUSUAL_SPACES = "\u00a0\u2002\u2003\u2005\u2008\u2009\u200a\u202f\u3000\ufffc\u0084"

LISTS_PATH = Path(__file__).parent / "data" / "obelics_lists.json"
_SPACES = re.compile(f"[{UNUSUAL_SPACES}]")
# The perplexity text normalisation (CCNet's, as OBELICS uses it).
_NON_PRINTING = re.compile("[" + re.escape("".join(map(chr, [*range(32), *range(127, 160)]))) + "]")
_DIGITS = re.compile(r"\d")


@dataclass(frozen=True)
class _Lists:
    stopwords: frozenset[str]
    flagged_words: frozenset[str]
    punctuation: frozenset[str]
    punctuation_re: re.Pattern[str]
    special: frozenset[str]
    special_chars: str  # the same set as one string, for str.strip
    unicode_punctuation: dict[int, str]


@cache
def _lists() -> _Lists:
    raw = json.loads(LISTS_PATH.read_text(encoding="utf-8"))
    # Emoji live below U+20000; the scan costs a few milliseconds once.
    candidates = "".join(map(chr, range(0x80, 0x20000)))
    special = frozenset(
        string.punctuation + string.digits + string.whitespace + raw["special_characters_other"]
    ) | frozenset(regex.findall(r"\p{Emoji}", candidates))
    marks = "".join(raw["punctuation"])
    return _Lists(
        stopwords=frozenset(raw["stopwords_en"]),
        flagged_words=frozenset(raw["flagged_words_en"]),
        punctuation=frozenset(marks),
        punctuation_re=re.compile(rf"[\w']+|[{re.escape(marks)}]"),
        special=special,
        special_chars="".join(sorted(special)),
        unicode_punctuation=str.maketrans(raw["unicode_punctuation_map"]),
    )


def standardize_whitespace(text: str) -> str:
    """Unusual space characters become a plain space (length is unchanged)."""
    return _SPACES.sub(" ", text)


def words(text: str) -> list[str]:
    """Split on space, newline and tab; lower-case; strip special characters from both ends;
    drop empty words. So `2023` and `$4.5` vanish, `covid-19` gives `covid`, `U.S.` `u.s`."""
    lists = _lists()
    special = lists.special
    out = []
    # Lower-casing the whole text equals lower-casing each word: the separators are neither
    # cased nor case-ignorable, so the final-sigma rule does not look across them.
    for word in text.lower().replace("\n", " ").replace("\t", " ").split(" "):
        if word and (word[0] in special or word[-1] in special):
            word = word.strip(lists.special_chars)
        if word:
            out.append(word)
    return out


def char_repetition(text: str, n: int = CHAR_NGRAM) -> float:
    """Share of all character n-grams taken by the k most frequent ones, k = min(floor(sqrt(
    distinct n-grams)), n-grams seen more than once)."""
    counts = Counter(text[i : i + n] for i in range(len(text) - n + 1))
    if not counts:
        return 0.0
    freqs = sorted(counts.values(), reverse=True)
    repeated = len(freqs) - freqs.count(1)
    top = min(math.isqrt(len(freqs)), repeated)
    return sum(freqs[:top]) / sum(freqs)


def word_repetition(text_words: list[str], n: int = WORD_NGRAM) -> float:
    """Share of word n-grams that occur more than once (every occurrence counts)."""
    # Tuples count like OBELICS's space-joined n-grams: words never contain a space.
    counts = Counter(zip(*(text_words[i:] for i in range(n)), strict=False))
    if not counts:
        return 0.0
    return sum(c for c in counts.values() if c > 1) / sum(counts.values())


def special_characters(text: str) -> float:
    """Share of the characters that are special (spaces and digits included)."""
    if not text:
        return 0.0
    special = _lists().special
    return sum(c for char, c in Counter(text).items() if char in special) / len(text)


def _share(text_words: list[str], vocabulary: frozenset[str]) -> float:
    if not text_words:
        return 0.0
    return sum(word in vocabulary for word in text_words) / len(text_words)


def punctuation(text: str, min_tokens: int = 0) -> float:
    """Share of the tokens `[\\w']+|[,;:?!.]` that are punctuation marks; 1.0 when there are
    fewer than `min_tokens` tokens (0 when there are none at all)."""
    lists = _lists()
    tokens = lists.punctuation_re.findall(text)
    if not tokens:
        return 0.0
    if len(tokens) < min_tokens:
        return 1.0
    return sum(token in lists.punctuation for token in tokens) / len(tokens)


def values(text: str, level: Level, language: bool) -> dict[str, float | str | None]:
    """Every filter value of `text` by the names in FILTERS; `lang` and `lang_score` only
    when `language` is true (langdetect is the costly part)."""
    if level not in ("paragraph", "document"):
        raise ValueError(f"level must be 'paragraph' or 'document', not {level!r}")
    lists = _lists()
    text_words = words(text)
    result: dict[str, float | str | None] = {
        "words": len(text_words),
        "char_repetition": char_repetition(text),
        "word_repetition": word_repetition(text_words),
        "special_characters": special_characters(text),
        "stopwords": _share(text_words, lists.stopwords),
        "flagged_words": _share(text_words, lists.flagged_words),
        "punctuation": punctuation(text, MIN_PUNCTUATION_TOKENS if level == "paragraph" else 0),
    }
    if language:
        result["lang"], result["lang_score"] = langid.detect(text)
    return result


@dataclass(frozen=True)
class Thresholds:
    """Cut-offs of one level; None = the check does not run."""

    words: tuple[int, int]  # (min, max)
    char_repetition: float | None  # max
    word_repetition: float | None  # max
    special_characters: float | None  # max
    stopwords: float | None  # min
    flagged_words: float | None  # max
    punctuation: float | None  # min
    lang: str | None  # required language code
    lang_score: float | None  # min; only meaningful with `lang`


@dataclass(frozen=True)
class Perplexity:
    """Document-level KenLM perplexity (OBELICS: Wikipedia models, max 1500). The models
    cannot ship, so no preset enables it; set `Preset.perplexity` to turn it on."""

    kenlm_model: str
    sentencepiece_model: str
    max: float = 1500.0

    def __post_init__(self) -> None:
        for name in ("kenlm_model", "sentencepiece_model"):
            path = getattr(self, name)
            if not path:
                raise ValueError(f"perplexity filter: needs a path in {name} (none can ship)")
            if not Path(path).is_file():
                raise FileNotFoundError(f"perplexity filter: {name} {path!r} is not a file")


@dataclass(frozen=True)
class Preset:
    """A named, versioned set of cut-offs. The version is stored with every result: change
    it whenever a cut-off or a definition changes."""

    name: str
    version: str
    separator: str  # between paragraphs, for splitting and re-joining
    paragraph: Thresholds
    document: Thresholds
    perplexity: Perplexity | None = None

    def thresholds(self, level: Level) -> Thresholds:
        if level == "paragraph":
            return self.paragraph
        if level == "document":
            return self.document
        raise ValueError(f"level must be 'paragraph' or 'document', not {level!r}")


# OBELICS's HTML extraction put a blank line between paragraphs; text with single newlines
# between paragraphs is one paragraph to this preset.
OBELICS = Preset(
    name="obelics",
    version="obelics-v1",
    separator="\n\n",
    paragraph=Thresholds((4, 1_000), 0.1, 0.1, 0.3, 0.3, 0.01, 0.001, None, None),
    document=Thresholds((10, 2_000), 0.1, 0.2, 0.275, 0.35, 0.01, 0.03, "en", 0.8),
)
# MIRAI's config names stop-word (0.3 / 0.35) and punctuation (0.001 / 0.03) cut-offs, but
# its code never runs those checks.
MIRAI = Preset(
    name="mirai",
    version="mirai-v1",
    separator="\n",
    paragraph=Thresholds((4, 5_000), 0.1, 0.1, 0.3, None, 0.02, None, None, None),
    document=Thresholds((10, 10_000), 0.2, 0.3, 0.3, None, 0.01, None, "en", 0.8),
)
PRESETS: dict[str, Preset] = {preset.name: preset for preset in (OBELICS, MIRAI)}

_MINIMA = frozenset({"stopwords", "punctuation", "lang_score"})
# Counts, codes and the rounded perplexity print whole; the shares print short.
_PRINTED_WHOLE = frozenset({"words", "lang", "perplexity"})


def _show(value: float, limit: float) -> str:
    short = f"{value:.4g}"
    # Never print a failing value so that it reads like the cut-off itself.
    return short if float(short) != limit else repr(value)


@dataclass(frozen=True)
class Verdict:
    """Why a text was removed: its `filter` gave `value`, which is `comparison` the cut-off
    `limit` (words 3 < 4). A document left without paragraphs has only a `filter`."""

    filter: str  # one of CHECKS
    value: float | int | str | None = None
    comparison: Literal["<", ">", "!="] | None = None
    limit: float | int | str | None = None

    def __post_init__(self) -> None:
        if self.filter not in CHECKS:
            raise ValueError(f"verdict: {self.filter!r} is not a declared filter ({CHECKS})")

    @property
    def reason(self) -> str:
        """The text the exclusions and `articles explain` show, e.g. "words 3 < 4"."""
        if self.comparison is None:
            return self.filter
        value = self.value if self.filter in _PRINTED_WHOLE else _show(self.value, self.limit)
        return f"{self.filter} {value} {self.comparison} {self.limit}"


def check(values: dict, preset: Preset, level: Level) -> Verdict | None:
    """None when `values` pass every check of `preset` at `level`, else the verdict of the
    first failure in FILTERS order (perplexity last)."""
    limits = preset.thresholds(level)
    for name in FILTERS:
        limit = getattr(limits, name)
        if limit is None:
            continue
        if name not in values:
            raise ValueError(f"check: no value for {name!r} (compute values with language=True)")
        value = values[name]
        if name == "words":
            low, high = limit
            if value < low:
                return Verdict(name, value, "<", low)
            if value > high:
                return Verdict(name, value, ">", high)
        elif name == "lang":
            if value != limit:
                return Verdict(name, value, "!=", limit)
        elif name in _MINIMA:
            if value < limit:
                return Verdict(name, value, "<", limit)
        elif value > limit:
            return Verdict(name, value, ">", limit)
    if level == "document" and preset.perplexity is not None:
        value = values["perplexity"]
        if value > preset.perplexity.max:
            return Verdict("perplexity", value, ">", preset.perplexity.max)
    return None


@cache
def _perplexity_models(kenlm_model: str, sentencepiece_model: str) -> tuple[Any, Any]:
    try:
        import kenlm
        import sentencepiece
    except ImportError as error:
        raise RuntimeError(
            "perplexity filter: needs the kenlm and sentencepiece packages"
        ) from error
    tokenizer = sentencepiece.SentencePieceProcessor()
    tokenizer.load(sentencepiece_model)
    return kenlm.Model(kenlm_model), tokenizer


def perplexity(text: str, settings: Perplexity) -> float:
    """KenLM perplexity of `text` normalised as OBELICS does, rounded to 0.1."""
    model, tokenizer = _perplexity_models(settings.kenlm_model, settings.sentencepiece_model)
    text = _NON_PRINTING.sub("", text).strip()
    if text:
        text = _DIGITS.sub("0", standardize_whitespace(text))
        text = text.translate(_lists().unicode_punctuation)
    # Removing non-printing characters removed the newlines too: the text is one line.
    line = " ".join(tokenizer.encode_as_pieces(text))
    return round(10.0 ** (-model.score(line) / (len(line.split()) + 1)), 1)


class _Judged:
    """`kept` and `reason` derived from the verdict, so that they cannot disagree with it."""

    verdict: Verdict | None  # None: kept

    @property
    def kept(self) -> bool:
        return self.verdict is None

    @property
    def reason(self) -> str | None:
        return None if self.verdict is None else self.verdict.reason


@dataclass
class ParagraphResult(_Judged):
    text: str
    values: dict
    verdict: Verdict | None


@dataclass
class Cleaned(_Judged):
    text: str  # the kept paragraphs joined with the preset's separator
    verdict: Verdict | None
    values: dict  # document level, on `text`; empty when no paragraph was kept
    paragraphs: list[ParagraphResult]


def clean(text: str, preset: Preset) -> Cleaned:
    """Standardise whitespace, test every paragraph and remove the failing ones, then test
    the document made of the kept paragraphs."""
    paragraphs = []
    for part in standardize_whitespace(text).split(preset.separator):
        part_values = values(part, "paragraph", preset.paragraph.lang is not None)
        paragraphs.append(
            ParagraphResult(part, part_values, check(part_values, preset, "paragraph"))
        )
    kept = [p.text for p in paragraphs if p.kept]
    if not kept:
        return Cleaned("", Verdict("no paragraph kept"), {}, paragraphs)
    joined = preset.separator.join(kept)
    doc_values = values(joined, "document", preset.document.lang is not None)
    if preset.perplexity is not None:
        doc_values["perplexity"] = perplexity(joined, preset.perplexity)
    return Cleaned(joined, check(doc_values, preset, "document"), doc_values, paragraphs)
