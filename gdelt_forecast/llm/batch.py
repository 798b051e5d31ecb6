"""A batch of requests: cache look-ups, concurrent sends, results in request order, summary.

Order of sending. vLLM's prefix cache reuses the attention state of a prompt prefix while
requests sharing it are in the server together, so requests are sent sorted by their
messages, role and content in turn (a stable sort): the requests of one prompt template, or
of one complex event's growing context, are neighbours and run in the same batch. An
``asyncio.Semaphore(llm.max_concurrency)`` caps what is in flight; tasks are created in
that order and the semaphore wakes waiters first come, first served, so the order holds.

Identical requests (the same hash) in one batch are sent once; the others get the same
result marked ``cached``, so tokens are counted once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from openai import AsyncOpenAI

from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.progress import progress
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.llm.cache import AnswerCache
from gdelt_forecast.llm.client import ask, check_server
from gdelt_forecast.llm.request import Request, Result, request_hash

log = logging.getLogger(__name__)


@dataclass
class LlmSummary(StageSummary):
    calls: int = 0  # requests of the batch(es), cache hits included
    cache_hits: int = 0
    ok: int = 0
    fallback: int = 0
    failed: int = 0
    retried: int = 0  # settled on a later attempt than the first
    failed_by_reason: dict = field(default_factory=dict)  # client.REASONS -> failed calls
    prompt_tokens: int = 0  # of the requests sent in this run
    completion_tokens: int = 0
    completion_tokens_per_s: float = 0.0
    seconds: float = 0.0

    def line(self) -> str:
        return (
            f"llm: {self.calls} calls, {self.cache_hits} cache hits; {self.ok} ok, "
            f"{self.fallback} fallback, {self.failed} failed"
            + (f" ({_reasons(self.failed_by_reason)})" if self.failed_by_reason else "")
            + f"; {self.prompt_tokens} prompt + "
            f"{self.completion_tokens} completion tokens "
            f"({self.completion_tokens_per_s:.1f} tokens/s, {self.seconds:.1f} s)"
        )


def _reasons(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {why}" for why, n in counts.items())


def summarize(results: Sequence[Result], seconds: float) -> LlmSummary:
    """Counts over ``results`` (of one or several batches) that took ``seconds`` of wall time;
    tokens count only the requests sent, not the cache hits."""
    sent = [r for r in results if not r.cached]
    completion = sum(r.completion_tokens for r in sent)
    return LlmSummary(
        calls=len(results),
        cache_hits=len(results) - len(sent),
        ok=sum(r.status == "ok" for r in results),
        fallback=sum(r.status == "fallback" for r in results),
        failed=sum(r.status == "failed" for r in results),
        retried=sum(r.attempts > 1 for r in results),
        failed_by_reason=dict(Counter(r.reason for r in results if r.status == "failed")),
        prompt_tokens=sum(r.prompt_tokens for r in sent),
        completion_tokens=completion,
        completion_tokens_per_s=completion / seconds if seconds > 0 else 0.0,
        seconds=round(seconds, 3),
    )


async def run_requests(cfg: Config, requests: Sequence[Request]) -> list[Result]:
    """One result per request, in the order given. Logs the summary line."""
    cache = AnswerCache(DataRoot(cfg.data_root).llm_cache)
    digests = [request_hash(r, cfg.llm) for r in requests]
    settled: dict[str, Result] = {}
    todo: dict[str, Request] = {}
    for digest, request in zip(digests, requests, strict=True):
        if digest in settled or digest in todo:
            continue
        hit = cache.get(digest, request)
        if hit is None:
            todo[digest] = request
        else:
            settled[digest] = hit
    started = time.monotonic()
    if todo:
        for result in await _send(cfg, todo, cache):
            settled[result.hash] = result
    results = []
    used: set[str] = set()
    for digest, request in zip(digests, requests, strict=True):
        result = settled[digest]
        if digest in used:
            result = replace(result, key=request.key, step=request.step, cached=True)
        used.add(digest)
        results.append(result)
    log.info("%s", summarize(results, time.monotonic() - started).line())
    return results


def run(cfg: Config, requests: Sequence[Request]) -> list[Result]:
    """``run_requests`` for callers without an event loop (the CLI, Airflow tasks)."""
    return asyncio.run(run_requests(cfg, requests))


class Session:
    """One client, answer cache and set of concurrency slots for many requests, sent at
    once (a batch) or one at a time from many coroutines that each wait for an answer
    before they ask again (agents): ``async with Session(cfg) as s: await s.ask(r)``."""

    def __init__(self, cfg: Config, cache: AnswerCache | None = None):
        self.llm = cfg.llm
        self.cache = cache or AnswerCache(DataRoot(cfg.data_root).llm_cache)
        self.slots = asyncio.Semaphore(self.llm.max_concurrency)
        api_key = os.environ.get(self.llm.api_key_env) or "EMPTY"  # vLLM takes any key
        self.client = AsyncOpenAI(
            base_url=self.llm.base_url, api_key=api_key, max_retries=0, timeout=self.llm.timeout_s
        )

    async def __aenter__(self) -> Session:
        await self.client.__aenter__()
        try:
            await check_server(self.client, self.llm)
        except BaseException:
            await self.client.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc) -> None:
        await self.client.__aexit__(*exc)

    async def ask(self, request: Request) -> Result:
        """The cached answer of ``request``, or the server's, cached at once."""
        digest = request_hash(request, self.llm)
        return self.cache.get(digest, request) or await self.send(request, digest)

    async def send(self, request: Request, digest: str) -> Result:
        result = await ask(self.client, self.llm, request, digest, self.slots)
        self.cache.put(result)  # at once: a run killed later keeps this answer
        if result.status == "failed":
            log.warning("llm: %s %s failed: %s", result.key, result.step, result.error)
        return result


async def _send(cfg: Config, todo: dict[str, Request], cache: AnswerCache) -> list[Result]:
    order = sorted(todo.items(), key=lambda item: _prefix_key(item[1].messages))
    async with Session(cfg, cache) as session:
        tasks = [asyncio.create_task(session.send(r, d)) for d, r in order]
        results = []
        try:
            for next_done in progress(asyncio.as_completed(tasks), len(tasks), "llm"):
                results.append(await next_done)
        finally:
            for task in tasks:  # on an error or an interrupt, nothing keeps running
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    return results


def _prefix_key(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(str(m.get("role", "")), str(m.get("content", ""))) for m in messages]
