"""The batch ``test_resume_after_a_kill`` runs in a subprocess, then kills:
``python -m tests.llm.resume_batch <base_url> <data_root>``."""

import sys

from gdelt_forecast.ground.config import load_config
from gdelt_forecast.llm import run
from tests.llm.scripted import MODEL, request

FAST = [f"a{i}" for i in range(4)]
HELD = ["b0", "b1"]  # sorted after the fast ones, so sent last


def batch():
    return [request(p, key=p) for p in HELD + FAST]


if __name__ == "__main__":
    url, root = sys.argv[1:3]
    overrides = [f"llm.base_url={url}", f"llm.model={MODEL}", "llm.max_concurrency=2"]
    run(load_config(None, [*overrides, "llm.timeout_s=60", "llm.max_retries=0"], root), batch())
