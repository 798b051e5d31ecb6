"""MIRAI's API as the code in the sandbox sees it: the same function names, parameters and
value types (``Date``, ``ISOCode``, ``Event``, ...), but each function only sends its call,
as JSON, to the process outside and rebuilds the typed value from the JSON that comes back.
The environment (its release, its DuckDB connection, its cutoff) lives outside; nothing in
here can reach a row the environment would not return.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gdelt_forecast.environment.types import (
    CAMEOCode,
    Country,
    Date,
    DateRange,
    Event,
    ISOCode,
    NewsArticle,
    Relation,
)

_send: Callable[[dict], None] | None = None
_receive: Callable[[], dict] | None = None


def connect(send: Callable[[dict], None], receive: Callable[[], dict]) -> None:
    global _send, _receive
    _send, _receive = send, receive


def _json(value: Any) -> Any:
    """A typed argument as the tool call's JSON (:mod:`gdelt_forecast.environment.tools`)."""
    if isinstance(value, Date):
        return value.date
    if isinstance(value, (ISOCode, CAMEOCode)):
        return value.code
    if isinstance(value, DateRange):
        return {
            "start_date": _json(value.start_date) if value.start_date else None,
            "end_date": _json(value.end_date) if value.end_date else None,
        }
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value


def _event(e: dict) -> Event:
    return Event(Date(e["date"]), ISOCode(e["head_entity"]), CAMEOCode(e["relation"]),
                 ISOCode(e["tail_entity"]))  # fmt: skip


def _relation(r: dict) -> Relation:
    return Relation(CAMEOCode(r["cameo_code"]), r["name"], r["description"])


def _same(value: Any) -> Any:
    return value


# What each function returns, rebuilt from its JSON.
_TYPED: dict[str, Callable[[Any], Any]] = {
    "get_events": lambda v: [_event(e) for e in v],
    "count_events": _same,
    "get_entity_distribution": lambda v: {ISOCode(k): n for k, n in v.items()},
    "get_relation_distribution": lambda v: {CAMEOCode(k): n for k, n in v.items()},
    "get_news_articles": lambda v: [(Date(a["date"]), a["title"]) for a in v],
    "count_news_articles": _same,
    "browse_news_article": _same,
    "map_country_name_to_iso": lambda v: [Country(ISOCode(c["iso_code"]), c["name"]) for c in v],
    "map_iso_to_country_name": _same,
    "map_relation_description_to_cameo": lambda v: [_relation(r) for r in v],
    "map_cameo_to_relation": _relation,
    "get_parent_relation": _relation,
    "get_child_relations": lambda v: [_relation(r) for r in v],
    "get_sibling_relations": lambda v: [_relation(r) for r in v],
}


def _function(name: str, params: list[str]) -> Callable:
    def call(*args, **kwargs):
        if len(args) > len(params):
            raise TypeError(f"{name}() takes {len(params)} arguments, {len(args)} given")
        named = dict(zip(params, args, strict=False))
        if twice := sorted(set(named) & set(kwargs)):
            raise TypeError(f"{name}() got multiple values for {', '.join(twice)}")
        arguments = {k: _json(v) for k, v in {**named, **kwargs}.items()}
        _send({"op": "call", "name": name, "arguments": arguments})
        answer = _receive()
        if "error" in answer:
            raise ValueError(answer["error"])
        return _TYPED[name](answer["value"])

    call.__name__ = call.__qualname__ = name
    return call


def namespace(apis: dict[str, list[str]]) -> dict[str, Any]:
    """The globals of the agent's code: the value types and the functions ``apis`` names
    (each with its parameters in order)."""
    types = (CAMEOCode, Country, Date, DateRange, Event, ISOCode, NewsArticle, Relation)
    return {
        **{t.__name__: t for t in types},
        **{name: _function(name, params) for name, params in apis.items()},
    }
