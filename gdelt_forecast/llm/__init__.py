"""The LLM client: chat completions from any OpenAI-compatible server (vLLM in production),
JSON answers checked against an answer model (``Answer``), retries, a disk cache keyed by
request hash, and the ``llm_calls.parquet`` log.

Use: build ``Request`` objects, ``results = run(cfg, requests)`` (or ``await
run_requests(...)``), then ``write_calls(path, results)`` and ``summarize(results, seconds)``.
"""

from gdelt_forecast.llm.batch import LlmSummary, run, run_requests, summarize
from gdelt_forecast.llm.calls import CALLS_SCHEMA, write_calls
from gdelt_forecast.llm.numbered import parse_numbered
from gdelt_forecast.llm.request import Request, Result, request_hash
from gdelt_forecast.llm.schema import Answer

__all__ = [
    "CALLS_SCHEMA",
    "Answer",
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
