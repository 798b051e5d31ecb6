"""JSON-schema checks for LLM answers: a minimal validator for the subset the prompts use.

``jsonschema`` is importable in the development environment only because Airflow pulls it
in; the core install does not declare it, so ``gdelt_forecast/`` does not use it. The subset here
is what vLLM's guided decoding needs for our answers: ``type`` (one or a list, so
``["string", "null"]`` is a nullable string), ``properties``, ``required``,
``additionalProperties`` (true or false), ``items``, ``enum``, ``minItems``, ``maxItems``,
plus the annotations ``title`` and ``description``. A schema using any other keyword is
refused when its request is built, so no rule the model was asked to follow goes unchecked.
"""

from __future__ import annotations

from typing import Any

_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "minItems",
        "maxItems",
        "title",
        "description",
    }
)
_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
_PYTHON: dict[str, type] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def check_schema(schema: Any, where: str = "schema") -> None:
    """Raise ValueError if ``schema`` uses anything this validator does not check."""
    if not isinstance(schema, dict):
        raise ValueError(f"{where}: a schema is a JSON object")
    unknown = sorted(set(schema) - _KEYWORDS)
    if unknown:
        raise ValueError(f"{where}: unsupported keyword(s) {', '.join(unknown)}")
    bad = sorted(set(_type_names(schema)) - _TYPES)
    if bad:
        raise ValueError(f"{where}: unknown type(s) {', '.join(bad)}")
    if not isinstance(schema.get("additionalProperties", False), bool):
        raise ValueError(f"{where}: additionalProperties must be true or false")
    for name, sub in schema.get("properties", {}).items():
        check_schema(sub, f"{where}.properties.{name}")
    if "items" in schema:
        check_schema(schema["items"], f"{where}.items")


def validate(value: Any, schema: dict[str, Any], where: str = "$") -> None:
    """Raise ValueError naming the first place where ``value`` breaks ``schema``."""
    types = _type_names(schema)
    if types and not any(_is(value, t) for t in types):
        raise ValueError(f"{where}: expected {' or '.join(types)}, got {_json_type(value)}")
    if "enum" in schema and value not in schema["enum"]:
        raise ValueError(f"{where}: {value!r} is not one of {schema['enum']!r}")
    if isinstance(value, dict):
        missing = [name for name in schema.get("required", ()) if name not in value]
        if missing:
            raise ValueError(f"{where}: missing {', '.join(missing)}")
        properties = schema.get("properties", {})
        for name, item in value.items():
            if name in properties:
                validate(item, properties[name], f"{where}.{name}")
            elif schema.get("additionalProperties", True) is False:
                raise ValueError(f"{where}: unexpected property {name!r}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            raise ValueError(f"{where}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise ValueError(f"{where}: more than {schema['maxItems']} items")
        if "items" in schema:
            for i, item in enumerate(value):
                validate(item, schema["items"], f"{where}[{i}]")


def _type_names(schema: dict[str, Any]) -> list[str]:
    types = schema.get("type", [])
    return [types] if isinstance(types, str) else list(types)


def _is(value: Any, type_name: str) -> bool:
    # bool is an int subclass in Python, but true is no number in JSON.
    if isinstance(value, bool):
        return type_name == "boolean"
    if type_name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if type_name == "number":
        return isinstance(value, int | float)
    return isinstance(value, _PYTHON[type_name])


def _json_type(value: Any) -> str:
    for name in ("boolean", "null", "object", "array", "string"):
        if _is(value, name):
            return name
    return "number" if _is(value, "number") else type(value).__name__
