"""What a model answered, read from its raw reply without a model: a MIRAI prediction dict
(:func:`parse_prediction`) or a multiple-choice option letter (:func:`option_letter`).

MIRAI asks gpt-3.5 to rewrite the agent's output as ``<answer>{...}</answer>`` and then
``eval``s it; here the raw string is parsed without a model and never ``eval``ed.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator

_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'"})
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_ANSWER_END = re.compile(r"</answer>", re.IGNORECASE)
_FINAL_ANSWER = re.compile(r"final\s*answer\s*:?", re.IGNORECASE)
_LETTER = re.compile(r"\(([A-D])\)")
_BARE = re.compile(r"^\W*(?:answer\W*)?([A-D])\W*$", re.IGNORECASE)


def answer_dict(codes: list[str]) -> dict[str, list[str]]:
    """MIRAI's answer dict of second-level CAMEO ``codes``: first-level code -> its codes,
    sorted (a test set's answer, a round's, a reference forecaster's)."""
    grouped: dict[str, list[str]] = {}
    for code in sorted(codes):
        grouped.setdefault(code[:2], []).append(code)
    return grouped


def parse_prediction(raw: object) -> dict | None:
    """The prediction dict in `raw` (a dict, or a string an agent printed), None if there is none.

    Strings are tried, after curly quotes become straight ones, as: the last
    ``<answer>...</answer>`` (MIRAI's extraction format), the text after the last
    "Final Answer:" (the agents' format; a brace-less ``"01": [...], "02": [...]`` is wrapped
    in braces), the whole string, and its first ``{...}`` block. Each is read as JSON, then as
    a Python literal (single quotes, trailing commas). The last tag or "Final Answer:" wins
    because agents restate the prompt's example before they answer.
    """
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return None
    text = raw.translate(_QUOTES)
    for candidate in _candidates(text):
        parsed = load_dict(candidate)
        if parsed is not None:
            return parsed
    return None


def _candidates(text: str) -> Iterator[str]:
    # Only up to the last closing tag: an opening tag with none after it would have the
    # search scan to the end of the text, once per such tag (minutes for a hostile line).
    end = max((m.end() for m in _ANSWER_END.finditer(text)), default=0)
    tags = _ANSWER_TAG.findall(text, 0, end)
    if tags:
        yield _first_braced(tags[-1]) or tags[-1]
    finals = list(_FINAL_ANSWER.finditer(text))
    if finals:
        tail = text[finals[-1].end() :].strip()
        block = _first_braced(tail)
        if block is not None:
            yield block
        elif tail:
            yield "{" + tail.splitlines()[0].strip().rstrip(".") + "}"
    yield text
    block = _first_braced(text)
    if block is not None:
        yield block


def _first_braced(text: str) -> str | None:
    """The first balanced ``{...}`` in `text` (codes hold no braces, so strings are not skipped)."""
    start = text.find("{")
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start : i + 1]
    return None  # truncated output


def load_dict(text: str) -> dict | None:
    """The dict `text` writes as JSON or as a Python literal; None if it writes none."""
    text = text.strip()
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested past the parser's limit
        try:
            value = ast.literal_eval(text)  # never eval(): predictions are untrusted text
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    return value if isinstance(value, dict) else None


def option_letter(text: str) -> str | None:
    """The option letter A-D a reply chose: the last one in the paper's form "(B)", or a bare
    letter with nothing but punctuation or "Answer:" around it; None without one."""
    letters = _LETTER.findall(text)
    if letters:
        return letters[-1]
    bare = _BARE.match(text.strip())
    return bare[1].upper() if bare else None
