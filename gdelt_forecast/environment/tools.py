"""The environment's methods as OpenAI function-calling tools: :func:`tool_schemas` for the
request's ``tools``, :func:`call_tool` to run the call a model answers with (JSON arguments
in, a JSON-ready result out). Values travel as plain JSON: dates as ``YYYY-MM-DD``, codes as
strings, a date range as ``{"start_date", "end_date"}``."""

from __future__ import annotations

import inspect
import json
from typing import Any

from gdelt_forecast.environment.env import Environment
from gdelt_forecast.environment.types import (
    CAMEOCode,
    Country,
    Date,
    DateRange,
    Event,
    ISOCode,
    Relation,
)

TOOLS = (
    "get_events", "count_events", "get_entity_distribution", "get_relation_distribution",
    "get_news_articles", "count_news_articles", "browse_news_article",
    "map_country_name_to_iso", "map_iso_to_country_name", "map_relation_description_to_cameo",
    "map_cameo_to_relation", "get_parent_relation", "get_child_relations",
    "get_sibling_relations",
)  # fmt: skip

_DATE = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$", "description": "YYYY-MM-DD"}
_ISO = {"type": "string", "pattern": "^[A-Z]{3}$", "description": "ISO 3166 alpha-3 code"}
_CAMEO = {"type": "string", "pattern": r"^\d{2,3}$", "description": "CAMEO code, 2 or 3 digits"}
_RANGE = {
    "type": "object",
    "properties": {"start_date": {"anyOf": [_DATE, {"type": "null"}]},
                   "end_date": {"anyOf": [_DATE, {"type": "null"}]}},
    "additionalProperties": False,
    "description": "Days from start_date to end_date, both included; null is open.",
}  # fmt: skip
_ISOS = {"type": "array", "items": _ISO}
_CAMEOS = {"type": "array", "items": _CAMEO}
# Each parameter of the methods: its schema and how its JSON becomes the value a method takes.
_PARAMS: dict[str, tuple[dict, Any]] = {
    "date_range": (_RANGE, lambda v: DateRange(*(v.get(k) and Date(v[k])
                                                 for k in ("start_date", "end_date")))),
    "head_entities": (_ISOS, lambda v: [ISOCode(c) for c in v]),
    "tail_entities": (_ISOS, lambda v: [ISOCode(c) for c in v]),
    "interacted_entities": (_ISOS, lambda v: [ISOCode(c) for c in v]),
    "relations": (_CAMEOS, lambda v: [CAMEOCode(c) for c in v]),
    "involved_relations": (_CAMEOS, lambda v: [CAMEOCode(c) for c in v]),
    "entity_role": ({"type": "string", "enum": ["head", "tail", "both"]}, str),
    "keywords": ({"type": "array", "items": {"type": "string"}}, list),
    "text_description": ({"type": "string"}, str),
    "date": (_DATE, Date),
    "title": ({"type": "string"}, str),
    "name": ({"type": "string"}, str),
    "description": ({"type": "string"}, str),
    "iso_code": (_ISO, ISOCode),
    "cameo_code": (_CAMEO, CAMEOCode),
}  # fmt: skip


def tool_schemas() -> list[dict]:
    """One ``{"type": "function", "function": {name, description, parameters}}`` per method;
    a parameter is required when the method has no default for it."""
    tools = []
    for name in TOOLS:
        method = getattr(Environment, name)
        params = list(inspect.signature(method).parameters.values())[1:]
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": _summary(method),
                    "parameters": {
                        "type": "object",
                        "properties": {p.name: _PARAMS[p.name][0] for p in params},
                        "required": [
                            p.name for p in params if p.default is inspect.Parameter.empty
                        ],
                        "additionalProperties": False,
                    },
                },
            }
        )
    return tools


def _summary(method) -> str:
    """The docstring's first paragraph on one line, without reST's double backquotes."""
    return " ".join(inspect.getdoc(method).split("\n\n")[0].replace("``", "").split())


def call_tool(env: Environment, name: str, arguments: str | dict) -> Any:
    """Run the tool call ``name(arguments)`` (JSON text or a dict) on ``env``; the result as
    JSON-ready values. An unknown tool or argument is a ValueError, as a bad value is."""
    if name not in TOOLS:
        raise ValueError(f"unknown tool {name!r}")
    args = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
    allowed = list(inspect.signature(getattr(Environment, name)).parameters)[1:]
    if unknown := sorted(set(args) - set(allowed)):
        raise ValueError(f"{name} takes no argument {', '.join(unknown)}")
    values = {k: None if v is None else _PARAMS[k][1](v) for k, v in args.items()}
    return _plain(getattr(env, name)(**values))


def _plain(value: Any) -> Any:
    if isinstance(value, (Date, ISOCode, CAMEOCode)):
        return value.date if isinstance(value, Date) else value.code
    if isinstance(value, Event):
        return {
            "date": value.date.date,
            "head_entity": value.head_entity.code,
            "relation": value.relation.code,
            "tail_entity": value.tail_entity.code,
        }
    if isinstance(value, Country):
        return {"iso_code": value.iso_code.code, "name": value.name}
    if isinstance(value, Relation):
        return {
            "cameo_code": value.cameo_code.code,
            "name": value.name,
            "description": value.description,
        }
    if isinstance(value, dict):
        return {_plain(k): v for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_plain(v) for v in value]
        return {"date": items[0], "title": items[1]} if isinstance(value, tuple) else items
    return value
