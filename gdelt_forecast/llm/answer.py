"""Turning a model's text into an answer dict: JSON checked against the request's schema, or
the request's fallback parser when the JSON is beyond saving."""

from __future__ import annotations

import json
from typing import Any

from gdelt_forecast.llm.request import Request
from gdelt_forecast.llm.schema import validate


def parse_answer(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The JSON object in ``text``, valid under ``schema``; ValueError otherwise."""
    # strict=False lets raw control characters (a literal newline or tab) stand inside
    # strings: vLLM has returned exactly that, and the answer is otherwise sound JSON.
    answer = json.loads(text, strict=False)  # JSONDecodeError is a ValueError
    if not isinstance(answer, dict):
        raise ValueError(f"expected a JSON object, got {type(answer).__name__}")
    validate(answer, schema)
    return answer


def fall_back(request: Request, text: str) -> dict[str, Any]:
    """The request's fallback parse of ``text``, held to the same schema as a JSON answer so
    that callers see one shape whatever path an answer took; ValueError if there is none."""
    if request.fallback is None:
        raise ValueError("no fallback parser")
    answer = request.fallback(text)
    validate(answer, request.schema)
    return answer
