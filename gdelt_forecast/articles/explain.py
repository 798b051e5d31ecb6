"""``gdelt-forecast articles explain``: why a page is kept or dropped, as JSON lines.

Each FILE (HTML, gzipped HTML or plain text) gives one JSON object: the extracted title and
text, then for every paragraph and for the document the filter values (``words``,
``char_repetition``, ``word_repetition``, ``special_characters``, ``stopwords``,
``flagged_words``, ``punctuation``, ``lang``, ``lang_score``) with ``kept`` and ``reason``.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from gdelt_forecast.articles import obelics
from gdelt_forecast.articles.extract import extract
from gdelt_forecast.articles.process import as_paragraphs, preset_for
from gdelt_forecast.ground.config import Config

_HTML = re.compile(rb"<(!doctype|html|head|body|article|div|p)\b", re.IGNORECASE)


def _text_of(data: bytes, timeout_s: float) -> tuple[str | None, str | None, str | None]:
    """(title, text, error) of a page or a plain-text file."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    if _HTML.search(data[:8192]):
        extracted = extract(data, None, timeout_s)
        return extracted.title, extracted.text, extracted.error
    return None, data.decode("utf-8", errors="replace"), None


def explain(cfg: Config, files: Iterable[Path], preset_name: str | None = None) -> Iterator[str]:
    preset = preset_for(cfg, preset_name)
    for path in files:
        record: dict = {"file": str(path), "preset": preset.version}
        try:
            title, text, error = _text_of(path.read_bytes(), cfg.articles.extract_timeout_s)
        except (OSError, gzip.BadGzipFile, EOFError) as exc:
            title, text, error = None, None, f"{exc.__class__.__name__}: {exc}"
        record |= {"title": title, "text": text}
        if error or not text:
            yield json.dumps({**record, "kept": False, "reason": error or "no text extracted"})
            continue
        cleaned = obelics.clean(as_paragraphs(text, preset), preset)
        record |= {
            "kept": cleaned.kept,
            "reason": cleaned.reason,
            "document": {**cleaned.values, "kept": cleaned.kept, "reason": cleaned.reason},
            "paragraphs": [
                {"text": p.text, **p.values, "kept": p.kept, "reason": p.reason}
                for p in cleaned.paragraphs
            ],
        }
        yield json.dumps(record, ensure_ascii=False)
