"""What makes a reasoning record sound, checked as it is built and again by ``release
verify`` from the release's own rows (the rules of docs/soundness.md):

- **provenance**: every event a record shows or rests on (context, queried events, CEC
  negatives, the events behind a schema record's types) comes from a document first seen
  on or before its cut; a CEC answer from a document first seen after it;
- **the answer holds**: a temporal answer is the relation the two events' dates give
  (:func:`gdelt_forecast.contract.relations.temporal`), and the answer letter names the
  gold option;
- **no answer in its context**: no option is a near-duplicate of another or of a context
  event (``gdelt_forecast.contract.similarity``);
- **CAMEO types**: every type a schema record names (its events', context's, queried and,
  for S-CEC, options') is a CAMEO second-level relation name (the release's
  ``reference/relations.parquet``), never an event type a model wrote.
"""

from __future__ import annotations

import string
from collections.abc import Collection

import pyarrow as pa

from gdelt_forecast.contract.relations import CHOICES, temporal
from gdelt_forecast.contract.similarity import near_duplicate

# A model's relation of two events is kept only as both directions agree (A Causes B with B
# IsResult A): the rule a judged pair is kept by, and its drops' name.
CONSISTENT = "consistent-both-ways"


def cameo_types(relations: pa.Table) -> frozenset[str]:
    """The names a schema record may use: CAMEO's second-level relations, of ``relations``
    (``gdelt_forecast.reference.tables.relations()``, as a release carries it)."""
    return frozenset(r["name"] for r in relations.to_pylist() if r["level"] == 2)


def unsound(row: dict, types: Collection[str]) -> str | None:
    """Why ``row`` breaks a rule; None when it keeps them all. ``types``: :func:`cameo_types`."""
    if row["level"] == "schema":
        named = [e["type"] for e in row["events"]] + row["context"] + row["queried"]
        named += row["candidates"] if row["task"].endswith("CEC") else []
        if other := next((n for n in named if n not in types), None):
            return f"type {other!r} is no CAMEO relation"
    letters = string.ascii_uppercase[: len(row["candidates"])]
    if row["answer"] not in letters:
        return f"answer {row['answer']!r} is not one of {letters}"
    if row["candidates"][letters.index(row["answer"])] != row["answer_label"]:
        return "the answer letter does not name the gold option"
    choices = CHOICES.get(row["relation_type"], ())
    asked = choices[:2] if row["task"].endswith("CEC") else choices
    if row["relation"] not in asked:
        return f"{row['relation']} is no {row['relation_type']} relation this task asks"
    events = {e["event_id"]: e for e in row["events"]}
    # Every event a record shows or rests on is from a document seen by the cut, but for a
    # CEC answer (an I-CEC answer event, or the events of an S-CEC answer type).
    answers = [e for e in row["events"] if row["task"].endswith("CEC")
               and row["answer_label"] in (e["event_id"], e["type"])]  # fmt: skip
    late = [e for e in row["events"] if e not in answers and e["source_date"] > row["cut_date"]]
    if late:
        return f"{late[0]['event_id']} comes from a document first seen after the cut"
    if any(e["source_date"] <= row["cut_date"] for e in answers):
        return "the answer comes from a document seen by the cut"
    if row["task"] == "I-CEC":
        answer = events[row["answer_label"]]
        if row["relation_type"] == "temporal":
            got = temporal(answer["date"], events[row["queried"][0]]["date"])
            if got != row["relation"]:
                return f"the dates say {got}, the record {row['relation']}"
        texts = [events[c]["text"] for c in row["candidates"]]
        context = [events[c]["text"] for c in row["context"]]
        for i, text in enumerate(texts):
            if any(near_duplicate(text, other) for other in texts[i + 1 :] + context):
                return f"option {letters[i]} is a near-duplicate of another option or the context"
    if row["task"] == "I-CRR" and row["relation_type"] == "temporal":
        a, b = (events[i]["date"] for i in row["queried"])
        if temporal(a, b) != row["answer_label"]:
            return f"the dates say {temporal(a, b)}, the record {row['answer_label']}"
    return None
