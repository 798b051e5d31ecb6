import pytest

from tests.llm.scripted import ScriptedServer


@pytest.fixture
def server():
    scripted = ScriptedServer()
    yield scripted
    scripted.stop()
