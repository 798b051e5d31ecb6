"""Text from outside made well-formed where it enters, and made harmless where it leaves for
a terminal.

Text enters from a model's reply, a tool argument, a fetched page (its body, title and
headers), a GDELT field and a config value. Python holds any code point in a ``str``, but
not every one can be written: a lone surrogate (``"\\ud800"``) fails every UTF-8 writer (a
JSON file, the answer cache, Parquet), and a NUL or a control character is a hazard in a
file another tool reads or on a terminal. :func:`wellformed` gives each one treatment,
documented here and in ``docs/soundness.md``:

- a lone surrogate, a NUL, a control character other than tab, newline and carriage return
  (C0, DEL and C1), and a byte-order mark anywhere but at the start: each replaced by
  U+FFFD, the replacement character, so the text keeps its length and shows where it was
  mended;
- a byte-order mark at the very start: removed (it says how the text was encoded, nothing
  of what it says).

A text that was mended is still read, and each boundary counts how many texts it mended
(:func:`mended`, reported by the CLI after a command and by a run's ``run.json``). Where a
silent change would be worse than a refusal, the boundary refuses with :func:`unwritable`
instead: a config value (an operator's path or model name, which must mean what was typed;
a byte that is not UTF-8 in ``--set`` arrives as a lone surrogate).

:func:`printable` is for the other direction, text the CLI prints: every control character
but newline and tab shown as an escape (``\\x1b``), so a page title or a model's answer
cannot move the cursor, rewrite a line or retitle the operator's terminal.
"""

from __future__ import annotations

import re
import threading
from collections import Counter

REPLACEMENT = "\ufffd"
# Hand-written: no library names this set (unicodedata's categories Cc and Cs, less what
# text needs, plus a BOM that is not the first character).
_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufeff]")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")

_mended: Counter[str] = Counter()
_lock = threading.Lock()


def wellformed(text: str, boundary: str) -> str:
    """``text`` with every character that cannot be written safely replaced (see the module),
    and ``boundary`` counted once when anything was."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not _BAD.search(text):
        return text
    with _lock:
        _mended[boundary] += 1
    return _BAD.sub(REPLACEMENT, text)


def wellformed_value(value, boundary: str):
    """Every string in a JSON value (keys too) made well-formed; other values as they are."""
    if isinstance(value, str):
        return wellformed(value, boundary)
    if isinstance(value, list):
        return [wellformed_value(v, boundary) for v in value]
    if isinstance(value, dict):
        return {wellformed_value(k, boundary): wellformed_value(v, boundary)
                for k, v in value.items()}  # fmt: skip
    return value


def unwritable(text: str) -> str | None:
    """The first character of ``text`` that :func:`wellformed` would change, described, or
    None when there is none."""
    found = _BAD.search(text)
    return None if found is None else f"{found[0]!r} at character {found.start()}"


def mended(since: dict[str, int] | None = None) -> dict[str, int]:
    """How many texts each boundary has mended in this process so far, or since an earlier
    ``mended()`` (a command's own, an extraction's)."""
    with _lock:
        now = dict(sorted(_mended.items()))
    since = since or {}
    return {k: n - since.get(k, 0) for k, n in now.items() if n > since.get(k, 0)}


def count_mended(counts: dict[str, int]) -> None:
    """Add what another process mended (an extraction worker's) to this one's counts."""
    with _lock:
        _mended.update(counts)


def printable(text: str) -> str:
    """``text`` safe for a terminal: control characters but newline and tab escaped, and lone
    surrogates too (a UTF-8 terminal's encoder would fail on them)."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), text)
