"""The tasks' leakage rule, shared by the build (which drops what breaks it) and
``release verify`` (which reports it).

1. A record's background holds nothing dated after its cut, and its targets nothing dated
   on or before it (each date read as the period it names).
2. No record's gold answer is visible in the background of a record in an earlier split
   (train, then dev, then test): no target event's text, compared case- and
   punctuation-blind, is in an earlier split's backgrounds.
"""

from __future__ import annotations

from collections.abc import Iterable

from pipeline.tasks.cut import SPLITS, period
from pipeline.timelines import text_key


def dated_wrong(record: dict) -> str | None:
    """What breaks rule 1 in ``record``, or None."""
    cut = record["cut_date"]
    for event in record["background"]:
        span = period(event["date"])
        if span is None or span[1] > cut:
            return f"background event dated {event['date']} is not before the cut {cut}"
    for event in record["target"]:
        span = period(event["date"])
        if span is None or span[0] <= cut:
            return f"target event dated {event['date']} is not after the cut {cut}"
    return None


def leaked(records: Iterable[dict]) -> dict[str, str]:
    """Records that break rule 2: id -> why."""
    rows = list(records)
    seen_before: set[str] = set()  # background texts of the splits already passed
    out: dict[str, str] = {}
    for split in SPLITS:
        in_split = [r for r in rows if r["split"] == split]
        for row in in_split:
            for event in row["target"]:
                if text_key(event["text"]) in seen_before:
                    out[row["id"]] = f"answer {event['text'][:60]!r} is in an earlier split"
                    break
        seen_before |= {text_key(e["text"]) for r in in_split for e in r["background"]}
    return out
