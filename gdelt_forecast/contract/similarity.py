"""Near-duplicate texts: the one measure the soundness rules use (timelines' rule 3, the
tasks' rules 4 and 5, and ``release verify``).

Two texts are near-duplicates when the shorter says next to nothing the longer does not:
the token-set containment ``|A & B| / min(|A|, |B|)`` of their content words reaches
``THRESHOLD``. A text's content words are its ``\\w+`` tokens, lower-cased, without
scikit-learn's English stop words (frozen in ``data/stop_words.txt``), each reduced to its
Snowball (Porter 2) stem, so that "accuses" and "accused" count as one word. Containment
rather than a symmetric measure: a title and the lead sentence that tells the same
happening differ in length, and the longer one's extra words (a day, a place, an
attribution) do not make it another event. Exact arithmetic on word sets, so the release
alone is enough to recompute every verdict.

A text without content words (all stop words, or empty) is a near-duplicate only of a text
with the same ``text_key``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib.resources import files

import snowballstemmer

from gdelt_forecast.contract.text import text_key

RULE = "token-containment-v1"  # bump it when the measure or the threshold changes
THRESHOLD = 0.7
_WORD = re.compile(r"\w+")
_STEMMER = snowballstemmer.stemmer("english")
# A copy, not an import: the list is part of the measure, so a scikit-learn release that
# changed it must not change verdicts silently (a test compares the two), and importing
# scikit-learn costs every command that checks soundness 2.5 s.
STOP_WORDS = frozenset(
    line
    for line in (files(__package__) / "data/stop_words.txt").read_text().splitlines()
    if line and not line.startswith("#")
)


@lru_cache(maxsize=65536)
def words(text: str | None) -> frozenset[str]:
    """The content words of ``text``, stemmed."""
    tokens = [t for t in _WORD.findall((text or "").lower()) if t not in STOP_WORDS]
    return frozenset(_STEMMER.stemWords(tokens))


def containment(a: str | None, b: str | None) -> float:
    """The share of the smaller word set that the other holds (1.0 for two texts without
    content words and the same key, 0.0 for one without and one with)."""
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return float(not wa and not wb and text_key(a) == text_key(b))
    return len(wa & wb) / min(len(wa), len(wb))


def near_duplicate(a: str | None, b: str | None) -> bool:
    return containment(a, b) >= THRESHOLD


def first_near_duplicate(text: str, others: list[str]) -> str | None:
    """The first of ``others`` that ``text`` is a near-duplicate of, or None."""
    return next((other for other in others if near_duplicate(text, other)), None)


class Index:
    """Texts to look near-duplicates up in, by their shared words: a month's backgrounds
    are too many to compare with every answer one by one."""

    def __init__(self) -> None:
        self._texts: list[str] = []
        self._postings: dict[str, list[int]] = {}
        self._bare: dict[str, str] = {}  # text_key -> text, for texts without content words

    def add(self, text: str) -> None:
        found = words(text)
        if not found:
            self._bare.setdefault(text_key(text), text)
            return
        self._texts.append(text)
        for word in found:
            self._postings.setdefault(word, []).append(len(self._texts) - 1)

    def find(self, text: str) -> str | None:
        """A text of the index that ``text`` is a near-duplicate of (the first added), or
        None."""
        mine = words(text)
        if not mine:
            return self._bare.get(text_key(text))
        shared = sorted({i for word in mine for i in self._postings.get(word, ())})
        return next((self._texts[i] for i in shared if near_duplicate(text, self._texts[i])), None)
