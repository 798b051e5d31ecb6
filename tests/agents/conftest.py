"""The demo month's release (built once for these tests), and a scripted OpenAI-compatible
server that plays agents through tool calls."""

from __future__ import annotations

import pytest

from tests.llm.scripted import ScriptedServer
from tests.release.conftest import demo_cfg, offline_hub, release  # noqa: F401


@pytest.fixture
def server():
    scripted = ScriptedServer()
    yield scripted
    scripted.stop()
