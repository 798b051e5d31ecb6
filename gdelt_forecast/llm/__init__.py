"""The LLM client: chat completions from any OpenAI-compatible server (vLLM in production),
JSON answers checked against a schema, retries, a disk cache keyed by request hash, and the
``llm_calls.parquet`` log.

Use: build ``Request`` objects, ``results = run(cfg, requests)`` (or ``await
run_requests(...)``), then ``write_calls(path, results)`` and ``summarize(results, seconds)``.
"""

from gdelt_forecast.llm.batch import LlmSummary, run, run_requests, summarize
from gdelt_forecast.llm.calls import CALLS_SCHEMA, write_calls
from gdelt_forecast.llm.numbered import parse_numbered
from gdelt_forecast.llm.request import Request, Result, request_hash

__all__ = [
    "CALLS_SCHEMA",
    "LlmSummary",
    "Request",
    "Result",
    "parse_numbered",
    "request_hash",
    "run",
    "run_requests",
    "summarize",
    "write_calls",
]
