"""One request to the OpenAI-compatible server, with our own retries.

The ``openai`` client runs with ``max_retries=0`` so that every attempt is ours to count:
attempts and tokens go to ``llm_calls.parquet``. Two budgets, two kinds of trouble:

- transport: a connection error, a timeout, 429 or 5xx is retried up to ``llm.max_retries``
  times, waiting ``backoff_s * 2**(n-1)`` seconds (or a 429's numeric Retry-After); any
  other 4xx fails the request at once, since asking again gets the same refusal;
- content: an answer that is not JSON or breaks its schema is asked again up to
  ``llm.invalid_retries`` times, then handed to the request's fallback parser, then recorded
  as failed with the reason.

Every result that was not answered in one clean go says why in ``reason``, one of
``REASONS``: ``cut at max_tokens`` (the answer ended at ``max_tokens``, so its JSON is
unfinished; the answer models' bounds are there to make it rare), ``invalid JSON``,
``schema`` (JSON that breaks the answer model), ``transport`` (no answer after the
retries) or ``refused`` (a 4xx other than 429, or a reply that is no chat completion). A
``fallback`` result keeps the reason its JSON was refused.

A request holds a concurrency slot only while an attempt is on the wire, not while it
waits to retry, so a backing-off request never idles a slot the server could batch.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from openai import (
    APIConnectionError,  # APITimeoutError is one
    AsyncOpenAI,
    InternalServerError,
    NotFoundError,
    OpenAIError,
    RateLimitError,
)

from gdelt_forecast.ground.config import LlmConfig
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.wellformed import wellformed
from gdelt_forecast.llm.answer import fall_back, parse_answer
from gdelt_forecast.llm.request import Request, Result, seed_of
from gdelt_forecast.llm.schema import json_schema

_RETRYABLE = (APIConnectionError, RateLimitError, InternalServerError)
CUT, INVALID_JSON, SCHEMA, TRANSPORT, REFUSED = (
    "cut at max_tokens", "invalid JSON", "schema", "transport", "refused"
)  # fmt: skip
REASONS = (CUT, INVALID_JSON, SCHEMA, TRANSPORT, REFUSED)


async def check_server(client: AsyncOpenAI, llm: LlmConfig) -> None:
    """Fail the stage at once when the server is down or serves another model: otherwise
    every request of a batch would spend its retries on the same fault, one by one."""
    for retry in range(llm.max_retries + 1):
        try:
            page = await client.models.list()
            break
        except _RETRYABLE as exc:
            if retry == llm.max_retries:
                raise StageError(f"llm: {llm.base_url} does not answer: {_describe(exc)}") from None
            await asyncio.sleep(_wait_s(exc, llm.backoff_s, retry + 1))
        except NotFoundError:
            return  # a server without a model list: requests will tell
        except OpenAIError as exc:
            raise StageError(f"llm: {llm.base_url} refused: {_describe(exc)}") from None
    served = [model.id for model in page.data]
    if llm.model not in served:
        raise StageError(
            f"llm: {llm.base_url} serves {', '.join(served) or 'no model'}, not {llm.model}"
        )


async def ask(
    client: AsyncOpenAI, llm: LlmConfig, request: Request, digest: str, slots: asyncio.Semaphore
) -> Result:
    """Settle one request: ok, fallback or failed (the result says why). Never raises for
    what the server does."""
    result = Result(hash=digest, key=request.key, step=request.step, model=llm.model)
    started = None  # the wait for a first slot is the batch's queue, not this call's latency
    retries = invalid = 0
    while True:
        result.attempts += 1
        try:
            async with slots:
                if started is None:
                    started = time.monotonic()
                completion = await client.chat.completions.create(**_params(llm, request))
        except _RETRYABLE as exc:
            result.error, result.reason = _describe(exc), TRANSPORT
            if retries == llm.max_retries:
                break
            retries += 1
            await asyncio.sleep(_wait_s(exc, llm.backoff_s, retries))
            continue
        except OpenAIError as exc:  # another 4xx
            result.error, result.reason = _describe(exc), REFUSED
            break
        except (ValueError, RecursionError) as exc:  # a body that is no JSON (or too deep)
            result.error, result.reason = f"the reply is no JSON: {_describe(exc)}", REFUSED
            break
        try:
            # The library hands the body over unchecked: any field may be missing or of
            # another type, and is read here, where that is caught.
            choice, message = _read(completion, result)
        except (AttributeError, TypeError, ValueError, IndexError, KeyError) as exc:
            result.error = f"the reply is no chat completion: {_describe(exc)}"
            result.reason = REFUSED
            break
        result.raw = _text(choice.message.content if choice else None)
        if request.answer is None:  # a message, as it comes (an agent's step)
            if choice is None:
                result.error, result.reason = "the reply holds no message", REFUSED
                break
            result.answer, result.status = message, "ok"
            result.error, result.reason = "", ""
            break
        try:
            result.answer = parse_answer(result.raw, request.answer)
            result.status, result.error, result.reason = "ok", "", ""
            break
        except ValueError as exc:
            cut = choice is not None and choice.finish_reason == "length"
            result.error = f"invalid answer: {exc}" + (" (cut at max_tokens)" if cut else "")
            result.reason = (
                CUT if cut else INVALID_JSON if isinstance(exc, json.JSONDecodeError) else SCHEMA
            )
        if invalid < llm.invalid_retries:
            invalid += 1
            continue
        try:
            # error keeps saying why the JSON was refused, also when the fallback succeeds.
            result.answer, result.status = fall_back(request, result.raw), "fallback"
        except ValueError as exc:
            result.error += f"; fallback: {exc}"
        break
    result.latency_s = time.monotonic() - started
    return result


def _read(completion, result: Result):
    """The completion's first choice (None if none) and its message, its tokens counted."""
    if completion.usage is not None:
        prompt, done = int(completion.usage.prompt_tokens), int(completion.usage.completion_tokens)
        result.prompt_tokens += prompt
        result.completion_tokens += done
    choice = completion.choices[0] if completion.choices else None
    return choice, (_message(choice) if choice is not None else None)


def _message(choice) -> dict[str, Any]:
    calls = choice.message.tool_calls or []
    return {
        "content": _text(choice.message.content),
        "tool_calls": [
            {
                "id": _text(c.id),
                "name": _text(c.function.name),
                "arguments": _text(c.function.arguments),
            }
            for c in calls
            if c.type == "function"
        ],
        "finish_reason": choice.finish_reason,
    }


def _text(value: Any) -> str:
    """A reply's text as every writer can take it (a lone surrogate is JSON-escaped text
    the server may send): see :mod:`gdelt_forecast.ground.wellformed`."""
    return wellformed(value, "llm reply") if isinstance(value, str) else ""


def _params(llm: LlmConfig, request: Request) -> dict[str, Any]:
    seed = seed_of(request, llm)
    params: dict[str, Any] = {
        "model": llm.model,
        "messages": request.messages,
        "temperature": llm.temperature,
        "max_tokens": llm.max_tokens,
        **({} if seed is None else {"seed": seed}),
    }
    if request.tools:
        params.update(tools=request.tools, tool_choice="auto")
    if request.answer is not None:
        # vLLM's guided decoding enforces the schema; the answer is still checked on arrival.
        params["response_format"] = response_format(request)
    return params


def response_format(request: Request) -> dict[str, Any]:
    """The ``response_format`` that asks for ``request``'s answer model."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": request.schema_name,
            "schema": json_schema(request.answer),
            "strict": True,
        },
    }


def _wait_s(exc: Exception, backoff_s: float, retry: int) -> float:
    """Seconds before retry number ``retry`` (1, 2, ...)."""
    if isinstance(exc, RateLimitError):
        try:  # Retry-After may also be an HTTP date; those get the plain backoff
            return max(0.0, float(exc.response.headers.get("retry-after", "")))
        except ValueError:
            pass
    return backoff_s * 2 ** (retry - 1)


def _describe(exc: Exception) -> str:
    # The server's own words (an error reply's message) are text from outside too.
    return wellformed(f"{type(exc).__name__}: {exc}"[:300], "llm reply")
