"""The ``llm`` timeline of complex events: OpenForecast's extraction-then-complement.

Per complex event: extract a timeline from its first document, complement it with each
following document in date order, then one chronological adjustment pass (prompts in
``prompts/<PROMPT_VERSION>/``, the paper's Table 11 asking for JSON). The complex events
advance together, one round per step, so every round is one batch for the server.

Three rules the model's answers cannot break:
- a complement never rewrites the timeline: an answered event whose text matches an event
  already there is that event (with its source document); every other one is new and cites
  the document being read; an existing event the answer left out is put back after the
  event it followed;
- the adjustment answers an order of the events' numbers, not new texts: a permutation
  reorders the timeline, anything else leaves it as it was;
- a date that is not yyyy, yyyy-MM or yyyy-MM-dd becomes null.
A failed call (after the client's retries and the numbered-list fallback) leaves the
timeline as it was before that step; ``llm_calls.parquet`` records it.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Annotated

from pydantic import Field, create_model

from gdelt_forecast.contract import grounding
from gdelt_forecast.contract.text import DATE, text_key
from gdelt_forecast.ground.config import Config
from gdelt_forecast.llm import Answer, Request, Result, parse_numbered, run
from gdelt_forecast.llm.schema import chars
from gdelt_forecast.timelines.complex_events import ComplexEvent

PROMPT_VERSION = "openforecast-v1"
PROMPTS = Path(__file__).parent / "prompts" / PROMPT_VERSION
_ARGUMENTS = ("subject", "event_type", "object", "location")


# An answer's bounds, so that guided decoding ends: a document's events in well under 1,024
# tokens (seen with SmolLM2: 12 events of 300 characters ran on to 512 tokens), and an
# adjustment's order exactly as long as its timeline (seen: numbers listed until the bound).
MAX_EVENTS = 8
MAX_TIMELINE = 160  # events of one timeline: max_documents (20) documents of MAX_EVENTS


class Event(Answer):
    date: chars(10) | None
    text: chars(200)
    subject: chars(60) | None
    event_type: chars(60) | None
    object: chars(60) | None
    location: chars(60) | None


class Events(Answer):
    events: Annotated[list[Event], Field(max_length=MAX_EVENTS)]


class Order(Answer):
    order: Annotated[
        list[Annotated[int, Field(ge=1, le=MAX_TIMELINE)]], Field(max_length=MAX_TIMELINE)
    ]


@cache
def order_of(size: int) -> type[Order]:
    """The adjustment's answer for a timeline of ``size`` events: exactly ``size`` numbers,
    each from 1 to ``size``."""
    numbers = list[Annotated[int, Field(ge=1, le=size)]]
    bounded = Annotated[numbers, Field(min_length=size, max_length=size)]
    return create_model("Order", __base__=Order, order=(bounded, ...))


@cache
def scaffolding(version: str = PROMPT_VERSION) -> frozenset[str]:
    """The words of the prompts of ``version`` that are no document's: their templates and
    the answer's field names (rule 6 never counts them as support). ValueError for a
    version this code does not have."""
    return grounding.scaffolding(PROMPTS.parent / version, Event.model_fields)


def _prompt(name: str, **fields: str) -> str:
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8").format(**fields)


def listed(atoms: list[dict]) -> str:
    return "\n".join(f"{i}. {a['date'] or 'undated'}: {a['text']}" for i, a in enumerate(atoms, 1))


def _events_from_list(text: str) -> dict:
    """The paper's numbered-list answer as the JSON answer (texts only)."""
    return {
        "events": [
            {"date": None, "text": t, **dict.fromkeys(_ARGUMENTS)} for t in parse_numbered(text)
        ]
    }


def _order_from_list(text: str) -> dict:
    return {"order": [int(n) for n in re.findall(r"\d+", " ".join(parse_numbered(text)))]}


def _request(
    event: ComplexEvent, step: str, prompt: str, answer: type[Answer], fallback
) -> Request:
    messages = [{"role": "user", "content": prompt}]
    return Request(event.complex_event_id, step, messages, answer, step.split(":")[0], fallback)


def _atoms(answer: dict, doc_id: str) -> list[dict]:
    atoms = []
    for item in answer["events"]:
        if not item["text"].strip():
            continue
        date = item["date"] if item["date"] and DATE.fullmatch(item["date"]) else None
        atoms.append({**item, "date": date, "text": item["text"].strip(), "source_doc_id": doc_id})
    return atoms


def complement(before: list[dict], answer: dict, doc_id: str) -> list[dict]:
    """The answered timeline, with the events already there kept as they were."""
    known = {text_key(a["text"]): a for a in before}
    merged, used = [], set()
    for atom in _atoms(answer, doc_id):
        key = text_key(atom["text"])
        if key in used:
            continue
        used.add(key)
        merged.append(known.get(key, atom))
    for i, atom in enumerate(before):  # put back what the answer left out
        if text_key(atom["text"]) not in used:
            after = before[i - 1] if i else None
            merged.insert(merged.index(after) + 1 if after in merged else 0, atom)
            used.add(text_key(atom["text"]))
    return merged


def adjust(atoms: list[dict], answer: dict) -> list[dict]:
    order = answer["order"]
    if sorted(order) != list(range(1, len(atoms) + 1)):
        return atoms
    return [atoms[n - 1] for n in order]


def _fields(doc: dict) -> dict[str, str]:
    return {
        "title": doc["title"] or "",
        "date": doc["date"].isoformat(),
        "article": doc["article"] or "",
    }


def extract_request(event: ComplexEvent) -> Request:
    prompt = _prompt("extract", **_fields(event.documents[0]))
    return _request(event, "extract", prompt, Events, _events_from_list)


def complement_request(event: ComplexEvent, n: int, atoms: list[dict]) -> Request:
    prompt = _prompt("complement", timeline=listed(atoms), **_fields(event.documents[n]))
    return _request(event, f"complement:{n}", prompt, Events, _events_from_list)


def adjust_request(event: ComplexEvent, atoms: list[dict]) -> Request:
    prompt = _prompt("adjust", timeline=listed(atoms), **_fields(event.documents[-1]))
    return _request(event, "adjust", prompt, order_of(len(atoms)), _order_from_list)


def timelines(cfg: Config, events: list[ComplexEvent]) -> tuple[dict[str, list], list[Result]]:
    """complex_event_id -> atomic events, and every call's result (for llm_calls.parquet)."""
    state: dict[str, list[dict]] = {e.complex_event_id: [] for e in events}
    calls: list[Result] = []

    def advance(step: list[ComplexEvent], ask, apply) -> None:
        """One round: a request per complex event, one batch; answers update the state."""
        results = run(cfg, [ask(e) for e in step])
        calls.extend(results)
        for event, result in zip(step, results, strict=True):
            if result.answer is not None:
                state[event.complex_event_id] = apply(event, result.answer)

    advance(events, extract_request, lambda e, a: _atoms(a, e.documents[0]["doc_id"]))
    for n in range(1, max((len(e.documents) for e in events), default=0)):
        advance(
            [e for e in events if len(e.documents) > n],
            lambda e, n=n: complement_request(e, n, state[e.complex_event_id]),
            lambda e, a, n=n: complement(state[e.complex_event_id], a, e.documents[n]["doc_id"]),
        )
    advance(
        [e for e in events if len(state[e.complex_event_id]) > 1],
        lambda e: adjust_request(e, state[e.complex_event_id]),
        lambda e, a: adjust(state[e.complex_event_id], a),
    )
    return state, calls
