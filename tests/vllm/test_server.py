"""What the LLM stages rely on, checked against a real vLLM server (see conftest.py).

The model's weights are random, so its text is noise; only what the server guarantees is
asserted: JSON shaped by the schema, token usage, and counters that agree with it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import time

import pytest
from openai import AsyncOpenAI, OpenAI

if importlib.util.find_spec("vllm") is None:
    # find_spec, not importorskip: importing vLLM (and torch) costs ~10 s where it exists.
    pytest.skip("vLLM is not installed: run `make test-vllm`", allow_module_level=True)

PROMPT = "vllm:prompt_tokens_total"
GENERATION = "vllm:generation_tokens_total"
# Bounded in every part: with random weights an open-ended string or number, or the
# whitespace that xgrammar allows between tokens, runs on to max_tokens. Seen here: 60 of 60
# answers at temperature 1 stopped by themselves well within 200 tokens.
SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "enum": ["yes", "no"]},
        "reason": {"type": "string", "maxLength": 30},
        "confidence": {"type": "integer", "minimum": 0, "maximum": 100},
    },
    "required": ["answer", "reason", "confidence"],
    "additionalProperties": False,
}
RESPONSE_FORMAT = {"type": "json_schema", "json_schema": {"name": "forecast", "schema": SCHEMA}}
MAX_TOKENS = 200


def _request(seed: int) -> dict:
    # Greedy decoding of random weights loops on whitespace until max_tokens; sampling, with
    # a seed per request, ends the object.
    return {
        "messages": [
            {"role": "system", "content": "You are a careful forecaster. Answer in JSON."},
            {"role": "user", "content": f"Will the two countries meet this month? ({seed})"},
        ],
        "response_format": RESPONSE_FORMAT,
        "max_tokens": MAX_TOKENS,
        "temperature": 1.0,
        "seed": seed,
    }


@pytest.fixture(scope="module")
def client(vllm_server):
    # No retries: a retried request would count twice in the server's counters.
    return OpenAI(base_url=vllm_server.base_url, api_key="unused", max_retries=0, timeout=120)


def _counter_deltas(server, before: dict[str, float], expected: tuple[int, int]) -> tuple:
    """The counters' growth since ``before``; the API server records a request's stats just
    after answering it, so this waits a little for them to reach ``expected``."""
    deadline = time.monotonic() + 10
    while True:
        after = server.counters()
        deltas = (after[PROMPT] - before[PROMPT], after[GENERATION] - before[GENERATION])
        if deltas == expected or time.monotonic() > deadline:
            return deltas
        time.sleep(0.2)


def test_serves_the_tiny_model(client, vllm_server):
    assert [model.id for model in client.models.list()] == [vllm_server.model]


def test_json_schema_answers_parse(client, vllm_server):
    for seed in range(8):
        response = client.chat.completions.create(model=vllm_server.model, **_request(seed))
        choice = response.choices[0]
        assert choice.finish_reason == "stop", choice.message.content
        # strict=False: xgrammar lets raw control characters into strings, which strict JSON
        # refuses (seen here in half the answers); the clients must read them all the same.
        answer = json.loads(choice.message.content, strict=False)
        assert set(answer) == {"answer", "reason", "confidence"}
        assert answer["answer"] in ("yes", "no")
        assert isinstance(answer["reason"], str)
        assert isinstance(answer["confidence"], int)
        assert 0 <= answer["confidence"] <= 100


def test_usage_equals_the_servers_counters(client, vllm_server):
    before = vllm_server.counters()
    response = client.chat.completions.create(model=vllm_server.model, **_request(100))
    usage = response.usage
    assert usage.prompt_tokens > 0
    assert usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    expected = (usage.prompt_tokens, usage.completion_tokens)
    assert _counter_deltas(vllm_server, before, expected) == expected


def test_takes_a_timelines_sized_prompt(client, vllm_server):
    # About what the timelines stage sends at most: 20 article leads of 600 characters. Seeded,
    # as every request here, so it also checks that the server prefills it whole (conftest.py).
    leads = "\n\n".join(
        f"Article {n}: " + "Talks between the ministers resumed. " * 16 for n in range(20)
    )
    request = _request(300)
    request["messages"][1]["content"] = leads
    response = client.chat.completions.create(model=vllm_server.model, **request)
    assert response.usage.prompt_tokens > 3000
    json.loads(response.choices[0].message.content, strict=False)


def test_concurrent_requests(vllm_server):
    async def ask_all(seeds):
        async with AsyncOpenAI(
            base_url=vllm_server.base_url, api_key="unused", max_retries=0, timeout=120
        ) as client:
            return await asyncio.gather(
                *(
                    client.chat.completions.create(model=vllm_server.model, **_request(seed))
                    for seed in seeds
                )
            )

    before = vllm_server.counters()
    responses = asyncio.run(ask_all(range(200, 204)))
    for response in responses:
        json.loads(response.choices[0].message.content, strict=False)
    expected = (
        sum(response.usage.prompt_tokens for response in responses),
        sum(response.usage.completion_tokens for response in responses),
    )
    assert _counter_deltas(vllm_server, before, expected) == expected
