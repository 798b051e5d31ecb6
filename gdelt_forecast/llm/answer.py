"""Turning a model's text into an answer dict: JSON checked against the request's answer
model, or the request's fallback parser when the JSON is beyond saving."""

from __future__ import annotations

import json
from typing import Any

from gdelt_forecast.llm.request import Request
from gdelt_forecast.llm.schema import Answer, validated


def parse_answer(text: str, model: type[Answer]) -> dict[str, Any]:
    """The JSON object in ``text``, valid as ``model``; ValueError otherwise."""
    # strict=False lets raw control characters (a literal newline or tab) stand inside
    # strings: vLLM has returned exactly that, and the answer is otherwise sound JSON.
    return validated(model, json.loads(text, strict=False))  # JSONDecodeError: a ValueError


def fall_back(request: Request, text: str) -> dict[str, Any]:
    """The request's fallback parse of ``text``, held to the same model as a JSON answer so
    that callers see one shape whatever path an answer took; ValueError if there is none."""
    if request.fallback is None:
        raise ValueError("no fallback parser")
    return validated(request.answer, request.fallback(text))
