"""What is asked of the model (``Request``), what came of it (``Result``), and the hash that
names a request in the cache and in ``llm_calls.parquet``.

The hash covers everything that shapes the answer: the model, the messages, the answer
model's JSON schema with its name, the tools offered, and the sampling parameters
(temperature, max_tokens, seed). It leaves out ``key`` and ``step``, which only say what
the answer is for, and the fallback parser, which only reads an answer: two requests with
the same prompt share one cached answer.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from gdelt_forecast.ground.config import LlmConfig
from gdelt_forecast.llm.schema import Answer, json_schema

Status = Literal["ok", "fallback", "failed"]
# OpenAI's rule for response_format names; vLLM passes the name on unchecked.
_SCHEMA_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Request:
    """One chat completion. ``fallback`` turns a raw answer that is not valid JSON into the
    answer dict, or raises ValueError (e.g. a wrapper around ``parse_numbered``).

    Without an answer model the reply is taken as it comes, a message: the answer is
    ``{"content", "tool_calls", "finish_reason"}`` (each call ``{"id", "name",
    "arguments"}``), as an agent reads it; ``tools`` offers functions to call, and ``seed``
    overrides ``llm.seed`` (an agent's K samples)."""

    key: str  # what the answer belongs to, e.g. a complex event id
    step: str  # e.g. "extract", "complement:3", "adjust"
    messages: list[dict[str, Any]]
    answer: type[Answer] | None  # what the answer must be (gdelt_forecast.llm.schema)
    schema_name: str = "answer"
    fallback: Callable[[str], dict[str, Any]] | None = field(default=None, compare=False)
    tools: list[dict[str, Any]] | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.answer is not None and not (
            isinstance(self.answer, type) and issubclass(self.answer, Answer)
        ):
            raise ValueError(f"answer {self.answer!r}: an Answer model (gdelt_forecast.llm.schema)")
        if self.answer is not None and self.tools:
            raise ValueError("a request offers tools or asks for an answer model, not both")
        if not _SCHEMA_NAME.match(self.schema_name):
            raise ValueError(f"schema name {self.schema_name!r}: letters, digits, _ and - only")


@dataclass
class Result:
    """The outcome of one request. Tokens are summed over every attempt the server answered
    (an invalid answer costs tokens too); ``latency_s`` runs from the first attempt to the
    settled answer, waits between retries included. ``cached`` says the request sent nothing
    in this run (its answer came from the disk cache, or from an identical request of the same
    batch); the counts then describe how that answer was first obtained."""

    hash: str
    key: str
    step: str
    model: str
    status: Status = "failed"
    answer: dict[str, Any] | None = None
    error: str = ""
    raw: str = ""  # the last answer's text, kept to read what a failed answer said
    reason: str = ""  # why an answer was refused or the request failed (client.REASONS)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    attempts: int = 0
    cached: bool = False


def request_hash(request: Request, llm: LlmConfig) -> str:
    """sha256 of the canonical JSON of model, messages, schema and sampling parameters."""
    payload = {
        "model": llm.model,
        "messages": request.messages,
        "params": {"temperature": llm.temperature, "max_tokens": llm.max_tokens},
    }
    # Each only when set: hashes, and so caches, from before they existed hold.
    if request.answer is not None:
        payload["schema"] = {"name": request.schema_name, "schema": json_schema(request.answer)}
    if request.tools:
        payload["tools"] = request.tools
    if (seed := seed_of(request, llm)) is not None:
        payload["params"]["seed"] = seed
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def seed_of(request: Request, llm: LlmConfig) -> int | None:
    return llm.seed if request.seed is None else request.seed
