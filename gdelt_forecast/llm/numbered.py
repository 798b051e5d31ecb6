"""The OpenForecast paper's list format, the fallback when an answer is not JSON.

The paper's prompts ask for "1. brief event; 2. brief event; etc." and its examples also
put one item per line ("1. ...\\n2. ..."); its extraction prompt answers "None" when there
is nothing. Items must be numbered 1, 2, 3, ... in order, and a marker counts only at the
start of the text or after a newline, ``;``, ``:`` or ``.`` (spaces allowed between), so a
number inside an event ("on March 2. 2. ...", "version 2.0") does not split it.
"""

from __future__ import annotations

import re

_NONE = re.compile(r"^\W*none\W*$", re.IGNORECASE)


def _marker(number: int) -> re.Pattern[str]:
    # Blanks but no newline before the number: a newline is a separator itself, so a run of
    # blank lines is not scanned again from each of its characters (quadratic on a long one).
    return re.compile(rf"(?:^|(?<=[\n;:.]))[^\S\n]*{number}[.)]\s+")


def _etc(item: str) -> str:
    """The prompt's own "etc." echoed back, cut from the stripped last item; by hand, since
    the pattern ``[;,]?\\s*etc\\.?$`` backtracks over every run of blanks (quadratic)."""
    for tail in ("etc.", "etc"):
        if item.lower().endswith(tail):
            item = item[: -len(tail)].rstrip()
            return item[:-1] if item.endswith((";", ",")) else item
    return item


def parse_numbered(text: str) -> list[str]:
    """The items of a numbered list in ``text`` (any preamble before "1." is skipped);
    [] for "None"; ValueError when there is neither."""
    if _NONE.match(text):
        return []
    found = _marker(1).search(text)
    if found is None:
        raise ValueError("no numbered list (no item 1.)")
    items = []
    number = 1
    while found is not None:
        number += 1
        following = _marker(number).search(text, found.end())
        items.append(text[found.end() : following.start() if following else len(text)])
        found = following
    items[-1] = _etc(items[-1].strip())
    cleaned = [item.strip().rstrip(";").strip() for item in items]
    return [item for item in cleaned if item]
