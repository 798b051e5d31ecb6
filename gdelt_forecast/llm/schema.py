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
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError


class Answer(BaseModel):
    """Base of the answer models: no property beyond those declared, no coercion."""

    model_config = ConfigDict(extra="forbid", strict=True)


@cache
def json_schema(model: type[Answer]) -> dict[str, Any]:
    """The JSON schema of ``model``, as the server is asked for it (and the hash covers)."""
    return model.model_json_schema()


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
