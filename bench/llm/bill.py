"""A month's LLM bill on a GPU, from what a real model cost on the demo.

Reads a data root that ``make demo-llm`` built (default ``demo-data-llm``): the tokens of
every model-built part of its release (the part's ``llm_calls.parquet``, each request once,
as the release's "Model-built parts" counts them) and of the agents' runs (the release's
leaderboard), per unit of work: the timelines per document of a complex event, the tasks'
generated parts and EV2's judgements per complex event, an agent per test query. Those
rates, times a real month's counts (``--documents``, ``--stories``, ``--queries``; defaults:
the month-scale release benchmark of docs/benchmarks.md, 50,063 documents in 1,006 complex
events, 3,446 test queries), divided by a published single-H100 throughput of vLLM serving
Llama-3.1-8B-Instruct (``--tokens-per-s``, default 5,103 output tokens/s: Red Hat's MLPerf
Inference v5.1 submission, Server scenario, vLLM 0.10.0, FP8 weights; MLPerf's Llama 3.1 8B
workload is CNN/DailyMail summarization, long prompts and short answers, as ours are), give
GPU hours for one monthly refresh.

A rough bill, and said to be: the demo's answers are SmolLM2-135M's (an 8B model writes
answers of other lengths), the demo's agents stop at 2 steps where MIRAI allows 20, and
the published figure is one workload's. Prefill is inside the published figure only in the
proportion of its own workload.

    .venv-vllm/bin/python -m bench.llm.bill [demo-data-llm]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pyarrow.parquet as pq

SOURCE = (
    'Red Hat, "Efficient and reproducible LLM inference: Red Hat MLPerf Inference v5.1 '
    'results" (https://www.redhat.com/en/blog/efficient-and-reproducible-llm-inference-red-'
    "hat-mlperf-inference-v51-results): Llama-3.1-8B, one H100, vLLM 0.10.0, FP8, 5,103 "
    "tokens/s Server (5,777 Offline)"
)


def tokens(path: Path) -> tuple[int, int]:
    """Prompt and completion tokens of a part's calls, each distinct request once."""
    if not path.exists():
        return 0, 0
    once = {c["hash"]: c for c in pq.read_table(path).to_pylist()}.values()
    return sum(c["prompt_tokens"] for c in once), sum(c["completion_tokens"] for c in once)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_root", type=Path, nargs="?", default=Path("demo-data-llm"))
    parser.add_argument("--documents", type=int, default=50_063)
    parser.add_argument("--stories", type=int, default=1_006)
    parser.add_argument("--queries", type=int, default=3_446)
    parser.add_argument("--tokens-per-s", type=float, default=5_103)
    args = parser.parse_args()
    version = (args.data_root / "releases" / "LATEST").read_text().strip()
    release = args.data_root / "releases" / version
    stories = pq.read_table(release / "timelines" / "complex_events.parquet").to_pylist()
    documents = sum(s["n_documents"] for s in stories)
    board = pq.read_table(args.data_root / "agents" / version / "leaderboard.parquet").to_pylist()
    agents = [r for r in board if r.get("action") in ("function", "code")]
    rows = [  # (work, demo units, tokens in and out, month units)
        ("timelines", f"{documents} documents", documents,
         tokens(release / "timelines" / "llm_calls.parquet"), args.documents),
        ("tasks' generated parts", f"{len(stories)} stories", len(stories),
         tokens(release / "tasks" / "llm_calls.parquet"), args.stories),
        ("EV2's judgements", f"{len(stories)} stories", len(stories),
         tokens(release / "reasoning" / "llm_calls.parquet"), args.stories),
        *(
            (f"agent {r['action']} ({r['apis']}, {r['split']})", f"{r['queries']} queries",
             r["queries"], (r["prompt_tokens"], r["completion_tokens"]), args.queries)
            for r in agents
        ),
    ]  # fmt: skip
    print(f"demo: {args.data_root} ({version}); GPU throughput: {SOURCE}\n")
    print("| work | demo | tokens in / out per unit | month units | month tokens out "
          "| H100 hours |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|")
    total = 0.0
    for work, demo, units, (prompt, completion), month in rows:
        out = completion / units * month
        hours = out / args.tokens_per_s / 3600
        total += hours
        print(f"| {work} | {demo} | {prompt / units:,.0f} / {completion / units:,.0f} "
              f"| {month:,} | {out:,.0f} | {hours:.2f} |")  # fmt: skip
    print(f"\none monthly refresh: {total:.1f} H100 hours at {args.tokens_per_s:,.0f} tokens/s")
    print(json.dumps({"h100_hours": round(total, 2)}))


if __name__ == "__main__":
    main()
