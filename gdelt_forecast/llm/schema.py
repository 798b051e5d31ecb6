"""What an answer must be: a pydantic model per request, its JSON schema sent to the server.

The server is asked for ``model_json_schema()`` (vLLM's guided decoding enforces it) and the
answer is checked on arrival with ``model_validate`` in strict mode, so that a JSON string
is no integer and a float no string, as the schema says; the answer travels on as the plain
dict ``model_dump`` gives. The JSON is parsed by ``json.loads(strict=False)`` first rather
than by ``model_validate_json``: vLLM has returned raw control characters (a literal newline
or tab) inside strings of otherwise sound JSON, which pydantic's parser refuses.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError


def chars(max_length: int) -> Any:
    """A string of at most ``max_length`` characters: every string of an answer has one, so
    that guided decoding ends before ``max_tokens`` (an unbounded string can run on to it)."""
    return Annotated[str, Field(max_length=max_length)]


class Answer(BaseModel):
    """Base of the answer models: no property beyond those declared, no coercion."""

    model_config = ConfigDict(extra="forbid", strict=True)


@cache
def json_schema(model: type[Answer]) -> dict[str, Any]:
    """The JSON schema of ``model``, as the server is asked for it (and the hash covers)."""
    return model.model_json_schema()


def unbounded(model: type[Answer]) -> list[str]:
    """The places of ``model``'s JSON schema where guided decoding could run on: a string
    without ``maxLength`` (or ``enum``), an integer without ``maximum``, an array without
    ``maxItems``, an object open to more properties without ``maxProperties``; as
    ``$.events[].text``."""
    schema = json_schema(model)
    definitions = schema.get("$defs", {})
    found: list[str] = []

    def walk(node: dict, where: str) -> None:
        if "$ref" in node:
            node = definitions[node["$ref"].rsplit("/", 1)[1]]
        for option in node.get("anyOf", []):
            walk(option, where)
        kind = node.get("type")
        open_string = kind == "string" and not {"maxLength", "enum"} & node.keys()
        if open_string or (kind == "integer" and "maximum" not in node):
            found.append(where)
        elif kind == "array":
            if "maxItems" not in node:
                found.append(where)
            walk(node.get("items", {}), where + "[]")
        elif kind == "object":
            for name, child in node.get("properties", {}).items():
                walk(child, f"{where}.{name}")
            more = node.get("additionalProperties", False)
            if more is not False:
                if "maxProperties" not in node:
                    found.append(where + ".*")
                walk(more if isinstance(more, dict) else {}, where + ".*")

    walk(schema, "$")
    return found


def validated(model: type[Answer], value: Any) -> dict[str, Any]:
    """``value`` (parsed JSON) as ``model`` reads it; a one-line ValueError naming each place
    it breaks the model otherwise (``$.events.0.date: Input should be a valid string``)."""
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    try:
        return model.model_validate(value).model_dump()
    except ValidationError as exc:
        raise ValueError(
            "; ".join(
                "$" + "".join(f".{part}" for part in error["loc"]) + f": {error['msg']}"
                for error in exc.errors()
            )
        ) from None
