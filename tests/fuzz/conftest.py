"""The property tests' settings, here so that only what runs them needs hypothesis (the vLLM
environment runs tests/vllm without it), and the scripted OpenAI-compatible server that
those of the model's boundary answer through."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from tests.llm.scripted import ScriptedServer

# The property tests (tests/fuzz/, marked fuzz): bounded and repeatable in `make test`, long
# and random in `make fuzz`, which chooses the profile. No deadline: a loaded CI machine's
# slow example is no failure; each boundary's own deadline is what a test asserts.
settings.register_profile(
    "ci", max_examples=25, derandomize=True, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)  # fmt: skip
settings.register_profile(
    "fuzz", max_examples=500, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)  # fmt: skip
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="module")
def server():
    scripted = ScriptedServer()
    yield scripted
    scripted.stop()
