"""``call_tool`` for every tool on the demo release: any arguments (any JSON, or the tool's
own shape with hostile strings in it) give a JSON-ready result or a ValueError, never
another exception, within the call's deadline; whatever it accepted is valid against the
tool's declared schema, and whatever it says can be written as UTF-8."""

from __future__ import annotations

import json
import time
from datetime import date

import jsonschema
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gdelt_forecast.environment import TOOLS, call_tool, open_environment, tool_schemas
from tests.fuzz.strategies import JSON, TEXT, nested
from tests.release.conftest import demo_cfg, offline_hub, release  # noqa: F401

pytestmark = pytest.mark.fuzz

DEADLINE_S = 5.0
SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in tool_schemas()}
# Values a model would send, so that the shaped arguments also reach the queries.
GOOD = {
    "^[0-9]{4}-[0-9]{2}-[0-9]{2}$": ["2025-08-01", "2025-07-22", "2025-02-30", "2025-W31-1"],
    "^[A-Z]{3}$": ["USA", "RUS", "CHN", "ZZZ"],
    "^[0-9]{2,3}$": ["01", "010", "190", "20", "999"],
}


def shaped(schema: dict) -> st.SearchStrategy:
    """Values of ``schema``'s shape, each string either one a model would send or any text."""
    if "anyOf" in schema:
        return st.one_of(*(shaped(s) for s in schema["anyOf"]))
    kind = schema.get("type")
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(shaped(schema["items"]), max_size=4)
    if kind == "object":
        fields = {k: shaped(v) for k, v in schema["properties"].items()}
        return st.fixed_dictionaries({}, optional=fields)
    if "enum" in schema:
        return st.one_of(st.sampled_from(schema["enum"]), TEXT)
    return st.one_of(st.sampled_from(GOOD.get(schema.get("pattern"), ["war", "Iran"])), TEXT)


def arguments(name: str) -> st.SearchStrategy:
    return st.one_of(
        shaped(SCHEMAS[name]),
        st.dictionaries(TEXT, JSON, max_size=3),
        JSON,
        st.builds(json.dumps, shaped(SCHEMAS[name])),  # JSON text, as a model sends it
        st.sampled_from([nested(100_000), "{", '{"date": "\\ud800"}', "null"]),
    )


@pytest.fixture(scope="module")
def env(release):  # noqa: F811 (the imported fixture)
    with open_environment(release, date(2025, 8, 10)) as opened:
        yield opened


@pytest.mark.parametrize("name", TOOLS)
def test_any_arguments_give_a_result_or_a_value_error(env, name):
    @given(args=arguments(name))
    @example(args={"date_range": {"start_date": "2025-W31-1"}})
    @example(args={"date_range": {"start_date": "\ud800", "\udfff": None}})
    @example(args={"keywords": ["\ud800"], "title": "\x00", "name": "\ufeff\x1b[2J"})
    @example(args={"\ud800": 1})
    @example(args=nested(100_000))
    def check(args):
        started = time.monotonic()
        try:
            value = call_tool(env, name, args, DEADLINE_S)
        except ValueError as exc:
            str(exc).encode("utf-8")  # an error observation can be written
            return
        finally:
            assert time.monotonic() - started < DEADLINE_S + 2
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        given_args = json.loads(args) if isinstance(args, str) else args
        jsonschema.validate(given_args, SCHEMAS[name])  # accepted: valid as declared

    check()


def test_an_unknown_tool_name_of_any_text_is_a_value_error(env):
    @given(name=TEXT)
    def check(name):
        if name not in TOOLS:
            with pytest.raises(ValueError, match="unknown tool"):
                call_tool(env, name, {})

    check()
