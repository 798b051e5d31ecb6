"""The minimal JSON-schema validator and the request hash."""

import pytest

from gdelt_forecast.config import load_config
from gdelt_forecast.llm import Request, request_hash
from gdelt_forecast.llm.answer import parse_answer
from gdelt_forecast.llm.schema import check_schema, validate
from tests.llm.scripted import SCHEMA, request

EVENT = {
    "type": "object",
    "properties": {
        "date": {"type": ["string", "null"]},
        "kind": {"enum": ["start", "end"]},
        "n": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
    },
    "required": ["date", "kind"],
    "additionalProperties": False,
}


def test_valid_answers_pass():
    validate({"date": None, "kind": "start"}, EVENT)
    validate({"date": "2025-08-07", "kind": "end", "n": 3, "tags": ["a"]}, EVENT)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"kind": "start"}, r"\$: missing date"),
        ({"date": 7, "kind": "start"}, r"\$.date: expected string or null, got number"),
        ({"date": None, "kind": "middle"}, r"\$.kind: 'middle' is not one of"),
        ({"date": None, "kind": "end", "extra": 1}, "unexpected property 'extra'"),
        ({"date": None, "kind": "end", "n": True}, r"\$.n: expected integer, got boolean"),
        ({"date": None, "kind": "end", "tags": []}, "fewer than 1 items"),
        ({"date": None, "kind": "end", "tags": ["a", "b", "c"]}, "more than 2 items"),
        ({"date": None, "kind": "end", "tags": ["a", 2]}, r"\$.tags\[1\]: expected string"),
        ([], "expected object, got array"),
    ],
)
def test_violations_name_the_place(value, message):
    with pytest.raises(ValueError, match=message):
        validate(value, EVENT)


def test_schemas_with_unchecked_keywords_are_refused():
    with pytest.raises(ValueError, match=r"schema.properties.d: unsupported keyword\(s\) pattern"):
        check_schema({"type": "object", "properties": {"d": {"type": "string", "pattern": "x"}}})
    with pytest.raises(ValueError, match="unknown type"):
        check_schema({"type": "date"})
    with pytest.raises(ValueError, match="unsupported keyword"):
        Request("k", "s", [], {"type": "object", "oneOf": []})
    with pytest.raises(ValueError, match="schema name"):
        Request("k", "s", [], SCHEMA, "complement:3")


def test_raw_control_characters_in_strings_are_accepted():
    text = '{"events": ["line one\nline two\tend"]}'  # a real newline and tab in a string
    assert parse_answer(text, SCHEMA) == {"events": ["line one\nline two\tend"]}
    with pytest.raises(ValueError):
        parse_answer('["events"]', SCHEMA)


def test_hash_covers_model_messages_schema_and_params_not_key_or_step(tmp_path):
    cfg = load_config(None, [], tmp_path)
    base = request_hash(request("p"), cfg.llm)
    assert base == request_hash(request("p", key="other", step="adjust"), cfg.llm)
    assert len(base) == 64
    for changed in (["llm.model=x"], ["llm.temperature=0.7"], ["llm.max_tokens=7"], ["llm.seed=0"]):
        assert request_hash(request("p"), load_config(None, changed, tmp_path).llm) != base
    assert request_hash(request("q"), cfg.llm) != base
    renamed = Request("ce1", "extract", request("p").messages, SCHEMA, "other")
    assert request_hash(renamed, cfg.llm) != base
