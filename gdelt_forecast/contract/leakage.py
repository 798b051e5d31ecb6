"""The tasks' soundness rules, shared by the build (which drops what breaks them and counts
it) and ``release verify`` (which recomputes them from a release and names each breach).
The timelines' rules 2 and 3 are in :mod:`gdelt_forecast.contract.sound`; near-duplicate is
:mod:`gdelt_forecast.contract.similarity`'s measure.

- Dates: a record's background holds nothing dated after its cut, and its targets nothing
  dated on or before it (each date read as the period it names).
1. Provenance: every background event comes from a document available on or before the
   cut, every target event from one available after it (``source_date``, the day GDELT
   first saw the document); and no event is dated after its own source's availability
   (rule 2, as the record shows it).
4. No answer in its own context: no target text is a near-duplicate of a background text of
   the same record; no option of an MCNC or MCAC record is a near-duplicate of another; no
   negative (an MCNC option other than the answer, VQA's event when the answer is "no") is
   a near-duplicate of a true event of the story.
5. Across splits: no target text is a near-duplicate of a background text of a record in
   an earlier split (train, then dev, then test).
7. Generated parts say nothing their target does not: where a model wrote an AQA or MCAC
   record's question and gold answer (``method`` llm), each stands in the record's target
   event as the timelines hold it (its text, date and arguments; the timelines' rule 6
   holds those to the event's source document), by rule 6's checks with the task prompts'
   words as scaffolding; and the gold answer is no near-duplicate of its question. MCAC's
   wrong answers and MCNC's negatives are untrue by design: rule 4 keeps them off the
   story's true events.
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from datetime import date

from gdelt_forecast.contract import grounding
from gdelt_forecast.contract.names import SPLITS
from gdelt_forecast.contract.similarity import Index, first_near_duplicate, near_duplicate
from gdelt_forecast.contract.text import period

PROVENANCE = "1-provenance"
ANSWER_IN_CONTEXT = "4-no-answer-in-context"
ACROSS_SPLITS = "5-across-splits"
GENERATED = "7-generated-grounded"


def dated_wrong(record: dict) -> str | None:
    """What puts an event of ``record`` on the wrong side of its cut by date, or None."""
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


def unsourced(record: dict, available: dict[str, date] | None = None) -> str | None:
    """What breaks rule 1 in ``record``, or None; with ``available`` (doc_id -> the day GDELT
    first saw it, from ``news``), each event's ``source_date`` must also be its source's."""
    cut = record["cut_date"]
    for side, events in (("background", record["background"]), ("target", record["target"])):
        for event in events:
            seen = event["source_date"]
            if available is not None and available.get(event["source_doc_id"]) != seen:
                return (
                    f"{side} event's source {event['source_doc_id']} was first seen on "
                    f"{available.get(event['source_doc_id'])}, not {seen}"
                )
            if (seen > cut) if side == "background" else (seen <= cut):
                return (
                    f"{side} event {event['text'][:60]!r} comes from a document first "
                    f"seen on {seen}, cut {cut}"
                )
            span = period(event["date"])
            if span is not None and span[0] > seen:
                return f"{side} event dated {event['date']} is after its source's {seen}"
    return None


def _negatives(record: dict) -> list[str]:
    if record["task"] == "MCNC":
        gold = string.ascii_uppercase.index(record["answer"])
        return [c for i, c in enumerate(record["candidates"]) if i != gold]
    if record["task"] == "VQA" and record["answer"] == "no":
        return list(record["candidates"])
    return []


def answer_in_context(record: dict, story: list[str]) -> str | None:
    """What breaks rule 4 in ``record``, or None; ``story``: the texts of its complex
    event's timeline."""
    background = [e["text"] for e in record["background"]]
    for event in record["target"]:
        if seen := first_near_duplicate(event["text"], background):
            return f"answer {event['text'][:60]!r} is in its background as {seen[:60]!r}"
    if record["task"] in ("MCNC", "MCAC"):
        options = record["candidates"]
        for i, option in enumerate(options):
            if seen := first_near_duplicate(option, options[i + 1 :]):
                return f"options {option[:40]!r} and {seen[:40]!r} are near-duplicates"
    for negative in _negatives(record):
        if seen := first_near_duplicate(negative, story):
            return f"negative {negative[:40]!r} is the story's {seen[:40]!r}"
    return None


def leaked(records: Iterable[dict]) -> dict[str, str]:
    """Records that break rule 5: id -> why."""
    rows = list(records)
    earlier = Index()  # background texts of the splits already passed
    out: dict[str, str] = {}
    for split in SPLITS:
        in_split = [r for r in rows if r["split"] == split]
        for row in in_split:
            for event in row["target"]:
                if seen := earlier.find(event["text"]):
                    out[row["id"]] = (
                        f"answer {event['text'][:60]!r} is an earlier split's "
                        f"background {seen[:60]!r}"
                    )
                    break
        for row in in_split:
            for event in row["background"]:
                earlier.add(event["text"])
    return out


def gold(record: dict) -> str:
    """An AQA record's answer, or the text of an MCAC record's gold option."""
    if record["task"] == "MCAC":
        return record["candidates"][string.ascii_uppercase.index(record["answer"])]
    return record["answer"]


def generated_unsaid(record: dict, target: dict, scaffold: frozenset[str]) -> str | None:
    """What breaks rule 7 in an AQA or MCAC ``record`` whose question and answer a model
    wrote, or None; ``target``: its target event as the timelines hold it (with its
    arguments and ``source_date``)."""
    said = "\n".join(target[k] for k in ("text", *grounding.ARGUMENTS) if target.get(k))
    stated = (target["date"],) if target["date"] else ()
    event = grounding.Document(None, said, target["source_date"], stated)
    answer = gold(record)
    for part, text in (("question", record["question"]), ("answer", answer)):
        if why := grounding.unsaid(text, event, scaffold):
            return f"its {part} {text[:60]!r} is not in its target event: {why} (rule 7)"
    if near_duplicate(answer, record["question"]):
        return f"its question {record['question'][:60]!r} gives its answer away (rule 7)"
    return None
