"""What the property tests send into each boundary: any Unicode (lone surrogates, NUL,
byte-order marks, C0 and C1 controls, terminal escapes included), any JSON value, and the
hostile strings found so far, always tried first; and how JSON Lines files are written and
counted for the readers' tests."""

from __future__ import annotations

import json
import unicodedata

from hypothesis import strategies as st

# Every code point, surrogates too (hypothesis leaves out category Cs unless told).
CHARACTERS = st.characters(exclude_categories=())
# Strings that broke something once, or that a boundary must be shown to survive.
HOSTILE = (
    "\ud800",
    "\udfff\ud800",
    "\x00",
    "\ufeff",
    "a\ufeffb",
    "\x1b]0;owned\x07\x1b[2J\r",
    "\x85\x9b",
    "2025-W31-1",
    "2025-08-07T00:00",
    'Final Answer: {"01": ["010"]}',
    "'; DROP TABLE events; --",
    "\u202e\u2066",
)
TEXT = st.one_of(st.sampled_from(HOSTILE), st.text(CHARACTERS, max_size=60))
LONG_TEXT = st.one_of(TEXT, st.builds(lambda s, n: s * n, TEXT, st.integers(100, 5_000)))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), TEXT)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(TEXT, inner, max_size=5),
    max_leaves=30,
)


def nested(depth: int) -> str:
    """A JSON text ``depth`` lists deep: past the parser's recursion limit when deep enough."""
    return "[" * depth + "]" * depth


def assert_wellformed(value) -> None:
    """Every string of a JSON value (keys too) writable: checked by each character's Unicode
    category, independently of the code under test (no surrogate, no control character but
    tab, newline and carriage return, no byte-order mark). Walked without recursion: values
    nest deep here."""
    stack = [value]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            for char in value:
                if char not in "\t\n\r":
                    assert unicodedata.category(char) not in ("Cs", "Cc"), repr(char)
                    assert char != "\ufeff"
            value.encode("utf-8")
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value)
            stack.extend(value.values())


def dumped(value, ascii_only: bool) -> bytes:
    """JSON text of ``value`` as a careless writer's bytes: NaN and Infinity as Python writes
    them, a lone surrogate either escaped or raw (then the line is not UTF-8)."""
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


def lines_with_text(data: bytes) -> int:
    """Lines a JSON Lines reader reads: not blank, or not UTF-8 (a bad line); a BOM that starts the
    file is no text."""
    count = 0
    for raw in data.removeprefix(b"\xef\xbb\xbf").split(b"\n"):
        try:
            count += bool(raw.decode("utf-8").strip())
        except UnicodeDecodeError:
            count += 1
    return count
