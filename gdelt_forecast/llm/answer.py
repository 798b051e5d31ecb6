"""Turning a model's text into an answer dict: JSON checked against the request's answer
model, or the request's fallback parser when the JSON is beyond saving.

The text arrives well-formed (the client mends every reply), but JSON has escapes of its own:
``"\\ud800"`` or ``"\\u0000"`` inside a string of the answer decode to the very characters
the client mended, and the answer goes on to the answer cache, Parquet and JSON files. So
every string of a parsed answer, the fallback's too, is mended again here, at the same
boundary (``llm reply``, :mod:`gdelt_forecast.ground.wellformed`).
"""

from __future__ import annotations

import json
from typing import Any

from gdelt_forecast.ground.wellformed import wellformed_value
from gdelt_forecast.llm.request import Request
from gdelt_forecast.llm.schema import Answer, validated

BOUNDARY = "llm reply"


def parse_answer(text: str, model: type[Answer]) -> dict[str, Any]:
    """The JSON object in ``text``, valid as ``model``; ValueError otherwise."""
    try:
        # strict=False lets raw control characters (a literal newline or tab) stand inside
        # strings: vLLM has returned exactly that, and the answer is otherwise sound JSON.
        value = wellformed_value(json.loads(text, strict=False), BOUNDARY)
    except RecursionError:
        # JSON nested past the parser's recursion limit ("[[[[...") is no answer either: the
        # client must count it as invalid JSON, not die of it.
        raise json.JSONDecodeError("nested deeper than the parser goes", text, 0) from None
    return validated(model, value)  # JSONDecodeError above and ValidationError: ValueErrors


def fall_back(request: Request, text: str) -> dict[str, Any]:
    """The request's fallback parse of ``text``, held to the same model as a JSON answer so
    that callers see one shape whatever path an answer took; ValueError if there is none."""
    if request.fallback is None:
        raise ValueError("no fallback parser")
    try:
        # A fallback may decode escapes too (a Python literal of a "Final Answer: {...}").
        parsed = wellformed_value(request.fallback(text), BOUNDARY)
    except RecursionError:  # a parser that reads nested text ("[[[[...") as JSON or Python
        raise ValueError("the fallback parser found the answer nested too deep") from None
    return validated(request.answer, parsed)
