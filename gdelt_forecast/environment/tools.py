"""The environment's methods as OpenAI function-calling tools: :func:`tool_schemas` for the
request's ``tools``, :func:`call_tool` to run the call a model answers with (JSON arguments
in, a JSON-ready result out). Values travel as plain JSON: dates as ``YYYY-MM-DD``, codes as
strings, a date range as ``{"start_date", "end_date"}``."""

from __future__ import annotations

import inspect
import json
import logging
import threading
import time
from typing import Any

import duckdb

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
from gdelt_forecast.ground.wellformed import wellformed, wellformed_value

log = logging.getLogger(__name__)
_BOUNDARY = "tool argument"

TOOLS = (
    "get_events", "count_events", "get_entity_distribution", "get_relation_distribution",
    "get_news_articles", "count_news_articles", "browse_news_article",
    "map_country_name_to_iso", "map_iso_to_country_name", "map_relation_description_to_cameo",
    "map_cameo_to_relation", "get_parent_relation", "get_child_relations",
    "get_sibling_relations",
)  # fmt: skip

# Patterns in ASCII classes: JSON Schema's \d is ASCII's, Python's is every script's digits.
_DATE = {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "description": "YYYY-MM-DD"}
_ISO = {"type": "string", "pattern": "^[A-Z]{3}$", "description": "ISO 3166 alpha-3 code"}
_CAMEO = {"type": "string", "pattern": "^[0-9]{2,3}$", "description": "CAMEO code, 2 or 3 digits"}
_RANGE = {
    "type": "object",
    "properties": {"start_date": {"anyOf": [_DATE, {"type": "null"}]},
                   "end_date": {"anyOf": [_DATE, {"type": "null"}]}},
    "additionalProperties": False,
    "description": "Days from start_date to end_date, both included; null is open.",
}  # fmt: skip
# Sizes a call may not pass, so that no argument makes the environment's work unbounded
# (a text is ranked term by term, a list becomes an IN clause): far above any real query's.
_ISOS = {"type": "array", "items": _ISO, "maxItems": 300}
_CAMEOS = {"type": "array", "items": _CAMEO, "maxItems": 400}
_TEXT = {"type": "string", "maxLength": 500}
# Each parameter of the methods: its schema, the MIRAI class its value is (None: plain
# JSON), and how its JSON becomes the value a method takes.
_PARAMS: dict[str, tuple[dict, str | None, Any]] = {
    "date_range": (_RANGE, "DateRange", lambda v: DateRange(*(v.get(k) and Date(v[k])
                                                              for k in _RANGE["properties"]))),
    "head_entities": (_ISOS, "ISOCode", lambda v: [ISOCode(c) for c in v]),
    "tail_entities": (_ISOS, "ISOCode", lambda v: [ISOCode(c) for c in v]),
    "interacted_entities": (_ISOS, "ISOCode", lambda v: [ISOCode(c) for c in v]),
    "relations": (_CAMEOS, "CAMEOCode", lambda v: [CAMEOCode(c) for c in v]),
    "involved_relations": (_CAMEOS, "CAMEOCode", lambda v: [CAMEOCode(c) for c in v]),
    "entity_role": ({"type": "string", "enum": ["head", "tail", "both"]}, None, str),
    "keywords": ({"type": "array", "items": {"type": "string", "maxLength": 100},
                  "maxItems": 20}, None, list),
    "text_description": ({"type": "string", "maxLength": 1000}, None, str),
    "date": (_DATE, "Date", Date),
    "title": (_TEXT, None, str),
    "name": (_TEXT, None, str),
    "description": (_TEXT, None, str),
    "iso_code": (_ISO, "ISOCode", ISOCode),
    "cameo_code": (_CAMEO, "CAMEOCode", CAMEOCode),
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


def call_tool(
    env: Environment, name: str, arguments: str | dict, deadline_s: float | None = None
) -> Any:
    """Run the tool call ``name(arguments)`` (JSON text or a dict) on ``env``; the result as
    JSON-ready values. Whatever a model sends is a ValueError with MIRAI's wording where it
    is wrong (an unknown tool or argument, a value of the wrong type, size or form, a day not
    in the calendar), checked before any query, never another exception; a string's lone
    surrogates and control characters are mended first (:mod:`gdelt_forecast.ground.wellformed`),
    so an error that echoes it can be written; past ``deadline_s`` the environment's query
    is interrupted and the call is a ValueError too, and so is any failure of the query."""
    if name not in TOOLS:
        raise ValueError(f"unknown tool {wellformed(str(name), _BOUNDARY)!r}"[:300])
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            raise ValueError(f"the arguments of {name} are not JSON") from None
    if not isinstance(arguments, dict):
        raise ValueError(f"the arguments of {name} are not an object")
    params = list(inspect.signature(getattr(Environment, name)).parameters.values())[1:]
    arguments = {wellformed(str(k), _BOUNDARY): v for k, v in arguments.items()}
    if unknown := sorted(set(arguments) - {p.name for p in params}):
        raise ValueError(f"{name} takes no argument {', '.join(unknown)}"[:300])
    needed = [p.name for p in params if p.default is inspect.Parameter.empty]
    if missing := [p for p in needed if p not in arguments]:
        raise ValueError(f"{name}() missing required argument: {', '.join(missing)}")
    for key, value in arguments.items():
        if value is not None:
            _check(key, value)
    # Only now, with every value's shape and size checked, is walking them bounded.
    arguments = wellformed_value(arguments, _BOUNDARY)
    values = {k: None if v is None else _PARAMS[k][2](v) for k, v in arguments.items()}
    timer = threading.Timer(deadline_s, env.interrupt) if deadline_s else None
    started = time.monotonic()
    try:
        if timer:
            timer.start()
        value = getattr(env, name)(**values)
    except duckdb.InterruptException:
        raise ValueError(f"{name} ran past its {deadline_s:g} s and was stopped") from None
    except duckdb.Error as exc:  # checked arguments should never get here: log it to fix
        log.warning("%s(%s) failed in the environment", name, arguments, exc_info=True)
        raise ValueError(f"{name} failed: {type(exc).__name__}") from None
    finally:
        if timer:
            timer.cancel()
    if deadline_s and time.monotonic() - started > deadline_s:
        raise ValueError(f"{name} ran past its {deadline_s:g} s")
    return _plain(value)


def _check(key: str, value: Any) -> None:
    """The JSON value's type and size against the parameter's schema, in MIRAI's words
    (``api_implementation.py``: "Input 'date_range' must be a DateRange object, but
    received type <class 'str'>")."""
    schema, kind, _ = _PARAMS[key]
    wanted = schema["type"]
    if wanted == "object":
        if not isinstance(value, dict):
            raise ValueError(
                f"Input '{key}' must be a {kind} object, but received type {type(value)}"
            )
        if unknown := sorted(set(value) - set(schema["properties"]), key=str):
            not_one = wellformed(str(unknown[0]), _BOUNDARY)
            raise ValueError(f"DateRange takes start_date and end_date, not {not_one}"[:200])
        for part, date in value.items():
            if not isinstance(date, str | None):
                raise ValueError(f"Attribute '{part}' of class DateRange must be a Date object, "
                                 f"but received type {type(date)}")  # fmt: skip
        return
    if wanted == "array":
        if not isinstance(value, list):
            raise ValueError(f"Input '{key}' must be a list, but received type {type(value)}")
        if len(value) > schema["maxItems"]:
            raise ValueError(f"Input '{key}' holds {len(value):,} items, more than the "
                             f"{schema['maxItems']} a call takes")  # fmt: skip
        for item in value:
            what = f"a list of {kind} objects" if kind else "a list of strings"
            _string(key, item, schema["items"], what)
        return
    _string(key, value, schema, f"a {kind} object" if kind else "a string")


def _string(key: str, value: Any, schema: dict, what: str) -> None:
    if not isinstance(value, str):
        raise ValueError(f"Input '{key}' must be {what}, but received type {type(value)}")
    if len(value) > schema.get("maxLength", len(value)):
        raise ValueError(f"Input '{key}' is {len(value):,} characters long, more than the "
                         f"{schema['maxLength']:,} a call takes")  # fmt: skip


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
