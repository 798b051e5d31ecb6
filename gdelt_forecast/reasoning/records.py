"""What a reasoning record holds and how its prompt reads (EV2's appendix prompts,
``prompts/ev2-v1/``).

A record shows events by id (``event<seq>`` of their timeline) at instance level, or event
types (CAMEO second-level names) at schema level: ``events`` are every instance event it
shows or rests on, with its date, type and source; ``context`` the ids (or types) given as
the graph, ``context_relations`` the graph's edges; ``queried`` the event (CEC) or pair
(CRR) asked about; ``candidates`` the options (CEC: ids or types; CRR: relation labels,
phrased by the prompt); ``answer`` the gold letter and ``answer_label`` its option.
"""

from __future__ import annotations

import hashlib
import string
from pathlib import Path

import pyarrow as pa

from gdelt_forecast.contract.relations import (
    AFTER,
    BEFORE,
    CAUSES,
    HAS_SUBEVENT,
    IS_RESULT,
    IS_SUBEVENT,
    NONE,
    VAGUE,
)

PROMPT_VERSION = "ev2-v1"
PROMPTS = Path(__file__).parent / "prompts" / PROMPT_VERSION
METHOD = "dates"  # temporal relations read off the events' dates; no model

_EVENT = pa.struct(
    [("event_id", pa.string()), ("text", pa.string()), ("date", pa.string()),
     ("type", pa.string()), ("source_doc_id", pa.string()), ("source_date", pa.date32())]
)  # fmt: skip
_EDGE = pa.struct([("head", pa.string()), ("relation", pa.string()), ("tail", pa.string())])
SCHEMA = pa.schema(
    [
        ("id", pa.string()), ("task", pa.string()), ("level", pa.string()),
        ("relation_type", pa.string()), ("relation", pa.string()),
        ("complex_event_id", pa.string()), ("cut_date", pa.date32()),
        ("events", pa.list_(_EVENT)), ("context", pa.list_(pa.string())),
        ("context_relations", pa.list_(_EDGE)), ("queried", pa.list_(pa.string())),
        ("candidates", pa.list_(pa.string())), ("answer", pa.string()),
        ("answer_label", pa.string()), ("evidence", pa.string()), ("prompt", pa.string()),
        ("method", pa.string()), ("prompt_version", pa.string()), ("model", pa.string()),
    ]
)  # fmt: skip

_PHRASE = {BEFORE: "is before", AFTER: "is after", CAUSES: "causes",
           IS_RESULT: "is the result of", IS_SUBEVENT: "is a subevent of",
           HAS_SUBEVENT: "has the subevent of"}  # fmt: skip
_KIND = {"temporal": "temporal", "causal": "causal", "hierarchical": "subordinate"}


def record_id(task: str, *parts: object) -> str:
    digest = hashlib.sha256("|".join(map(str, (task, *parts))).encode())
    return f"{task}-{digest.hexdigest()[:16]}"


def event(atom: dict) -> dict:
    return {
        "event_id": f"event{atom['seq']}",
        "text": atom["text"],
        "date": atom["date"],
        "type": atom["event_type"],
        "source_doc_id": atom["source_doc_id"],
        "source_date": atom["source_date"],
    }


def statement(head: str, relation: str, tail: str) -> str:
    if relation == VAGUE:
        return f'"{head}" and "{tail}" overlap in time.'
    return f'"{head}" {_PHRASE[relation]} "{tail}".'


def render(row: dict) -> str:
    """The record's prompt, its options in their final order."""
    n = len(row["candidates"])
    letters = string.ascii_uppercase[:n]
    if row["task"].endswith("CEC"):
        question = f'Which event {_PHRASE[row["relation"]]} "{row["queried"][0]}"?'
        options = row["candidates"]
    else:
        a, b = row["queried"]
        kind = _KIND[row["relation_type"]]
        question = f'Which is the {kind} relationship between "{a}" and "{b}"?'
        options = [
            f'There is no obvious {kind} relationship between "{a}" and "{b}".'
            if label in (NONE, VAGUE)
            else statement(a, label, b)
            for label in row["candidates"]
        ]
    fields = {
        "letters": ", ".join(letters[:-1]) + f" or {letters[-1]}",
        "context": "\n".join(
            statement(e["head"], e["relation"], e["tail"]) for e in row["context_relations"]
        )
        or "(none)",  # fmt: skip
        "question": question,
        "choices": "\n".join(f"{letter}. {o}" for letter, o in zip(letters, options, strict=True)),
    }
    if row["level"] == "instance":
        fields["instances"] = "\n".join(
            f"{e['event_id']} ({e['date']}): {e['text']}" for e in row["events"]
        )
    template = (PROMPTS / f"{row['level']}.txt").read_text(encoding="utf-8").strip()
    return template.format(**fields)
