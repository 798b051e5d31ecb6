"""The warehouse's tables by month: what the ``database`` stage writes once per month and a
release links, so that a past month's file is the same file in every release that holds it.

``<data_root>/warehouse/<table>/<YYYY-MM>-part-<i>.parquet`` holds a table's rows of one
month in the release's form (its order, row groups and compression), and
``warehouse/months.json`` lists each month's files with their rows and sha256 and the key
they were built for (the month's sources, the earlier months' keys and the SQL that made
them). A month is written again only when its key changes.
"""

from __future__ import annotations

import json
from pathlib import Path

# Released tables, each a Parquet file (or a few) per month; the warehouse's own ``quad_urls``
# (the articles' work list) is kept by month too but never released.
RELEASED = ("events", "quads", "news", "news_terms", "quad_docs", "funnel")
TABLES = (*RELEASED, "quad_urls")
INDEX = "months.json"  # in the warehouse's folder
ROWS_PER_FILE = 5_000_000  # files of a few hundred MB: easy to download, few per month
ROW_GROUP = 100_000
# Texts in small row groups: reading one article (browse_news_article) or one day's
# decompresses a few MB, not the month's texts.
ROW_GROUPS = {"news": 1_000}


def stem(month: str) -> str:
    """The prefix of a month's files of a table: ``2025-08-`` (``2025-08-part-0.parquet``)."""
    return f"{month}-"


def as_listed(folder: Path, item: dict) -> bool:
    """Whether the month file ``item`` (an index entry) lies in the warehouse's ``folder`` as
    it was written: its size and modification time, so a file deleted or edited by hand is
    seen without reading the history's bytes."""
    path = folder / item["path"]
    if not path.is_file():
        return False
    stat = path.stat()
    return (stat.st_size, stat.st_mtime_ns) == (item.get("bytes"), item.get("mtime_ns"))


def read_index(folder: Path) -> dict:
    """``months.json`` of the warehouse's ``folder``: ``{"months": {month: {"key", "days",
    "files": {table: [{"path", "rows", "sha256", "bytes", "mtime_ns"}]}}}}``; no months where
    there is none."""
    path = folder / INDEX
    if not path.exists():
        return {"months": {}}
    return json.loads(path.read_text(encoding="utf-8"))
