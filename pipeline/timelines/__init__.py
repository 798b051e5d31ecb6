"""Complex events (stories in the news corpus) and their timelines of atomic events."""

import re


def text_key(text: str | None) -> str:
    """An atomic event's text as compared with another's: case and punctuation blind."""
    return re.sub(r"\W+", " ", (text or "").lower()).strip()
