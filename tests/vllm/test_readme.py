"""The blocks of the README and its usage pages marked `<!-- readme: needs an LLM server -->`,
run as written against the real vLLM server: its variables (GDELT_FORECAST_DATA_ROOT,
GDELT_FORECAST_CONFIG) name the demo's data root and a config that is the demo's with `llm`
pointing at the server, as a user's would."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("vllm") is None:
    pytest.skip("vLLM is not installed: run `make test-vllm`", allow_module_level=True)

import yaml  # noqa: E402 (after the skip: see test_server.py)

from gdelt_forecast.pipeline.runner import run  # noqa: E402
from tests.release.conftest import MONTH, REPO, demo_month  # noqa: E402
from tests.release.test_readme import blocks, pages  # noqa: E402
from tests.vllm.test_timelines import answering  # noqa: E402


def test_the_readme_blocks_that_need_a_server(vllm_server, demo_built, tmp_path):
    demo = demo_month(demo_built, tmp_path / "data", tmp_path / "mirror")
    release = Path(run("release", demo, MONTH).path)
    assert release.name == "2025.08.0"  # the version the README's blocks name
    config = yaml.safe_load((REPO / "configs/demo.yaml").read_text())
    for override in [*answering(vllm_server, 40), "agents.max_context_tokens=12000"]:
        key, value = override.split("=", 1)
        section, name = key.split(".")
        config.setdefault(section, {})[name] = yaml.safe_load(value)
    (tmp_path / "llm.yaml").write_text(yaml.safe_dump(config))
    code = [c for reason, lang, c in blocks(pages())
            if reason == "needs an LLM server" and lang == "sh"]  # fmt: skip
    assert code
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "bin").symlink_to(Path(sys.executable).parent)
    env = {**os.environ, "GDELT_FORECAST_DATA_ROOT": str(demo.data_root),
           "GDELT_FORECAST_CONFIG": str(tmp_path / "llm.yaml")}  # fmt: skip
    done = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + "\n".join(code)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    assert re.search(r"agent \S+ on 2025\.08\.0: 2 queries x 1", out)
    assert "MIRAI's queries on 2025.08.0" in out and "history baseline" in out
    # docs/rounds.md's model forecasters: the real model's answers, cleaned, were accepted.
    for forecaster in ("direct-io", "agent-function-all"):
        assert f"round submit llm-2025-08-03: {forecaster}'s" in out
