"""Answer models (what the server is asked for and the answer is held to) and the request
hash."""

from typing import Annotated, Literal

import pytest
from pydantic import Field

from gdelt_forecast.ground.config import load_config
from gdelt_forecast.llm import Answer, Request, request_hash
from gdelt_forecast.llm.answer import parse_answer
from gdelt_forecast.llm.schema import json_schema, unbounded, validated
from tests.llm.scripted import Texts, request


class Event(Answer):
    date: str | None
    kind: Literal["start", "end"]
    n: int = 0
    tags: Annotated[list[str], Field(min_length=1, max_length=2)] = ["x"]


def test_valid_answers_pass_as_plain_dicts():
    assert validated(Event, {"date": None, "kind": "start"}) == {
        "date": None,
        "kind": "start",
        "n": 0,
        "tags": ["x"],
    }
    full = {"date": "2025-08-07", "kind": "end", "n": 3, "tags": ["a"]}
    assert validated(Event, full) == full


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"kind": "start"}, r"^\$\.date: Field required$"),
        ({"date": 7, "kind": "start"}, r"^\$\.date: Input should be a valid string$"),
        ({"date": None, "kind": "middle"}, r"^\$\.kind: Input should be 'start' or 'end'$"),
        ({"date": None, "kind": "end", "extra": 1}, r"^\$\.extra: Extra inputs are not"),
        ({"date": None, "kind": "end", "n": True}, r"^\$\.n: Input should be a valid integer$"),
        ({"date": None, "kind": "end", "n": "3"}, r"^\$\.n: Input should be a valid integer$"),
        ({"date": None, "kind": "end", "tags": []}, r"^\$\.tags: List should have at least 1"),
        ({"date": None, "kind": "end", "tags": ["a", "b", "c"]}, "at most 2 items"),
        ({"date": None, "kind": "end", "tags": ["a", 2]}, r"^\$\.tags\.1: Input should be a valid"),
        ([], "expected a JSON object, got list"),
        ({"kind": "middle", "n": 1.5}, r"^\$\.date: Field required; \$\.kind: .*; \$\.n: "),
    ],
)
def test_violations_name_the_place(value, message):
    with pytest.raises(ValueError, match=message):
        validated(Event, value)


def test_the_schema_sent_is_the_models():
    schema = json_schema(Event)
    assert schema["additionalProperties"] is False and schema["required"] == ["date", "kind"]
    assert schema["properties"]["kind"]["enum"] == ["start", "end"]
    assert schema["properties"]["tags"] | {"default": None} == {
        "type": "array",
        "items": {"type": "string"},
        "minItems": 1,
        "maxItems": 2,
        "title": "Tags",
        "default": None,
    }


def test_a_request_needs_an_answer_model_and_a_plain_name():
    with pytest.raises(ValueError, match="an Answer model"):
        Request("k", "s", [], {"type": "object"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="schema name"):
        Request("k", "s", [], Texts, "complement:3")


def test_raw_control_characters_in_strings_are_accepted():
    text = '{"events": ["line one\nline two\tend"]}'  # a real newline and tab in a string
    assert parse_answer(text, Texts) == {"events": ["line one\nline two\tend"]}
    with pytest.raises(ValueError):
        parse_answer('["events"]', Texts)


def test_hash_covers_model_messages_schema_and_params_not_key_or_step(tmp_path):
    cfg = load_config(None, [], tmp_path)
    base = request_hash(request("p"), cfg.llm)
    assert base == request_hash(request("p", key="other", step="adjust"), cfg.llm)
    assert len(base) == 64
    for changed in (["llm.model=x"], ["llm.temperature=0.7"], ["llm.max_tokens=7"], ["llm.seed=0"]):
        assert request_hash(request("p"), load_config(None, changed, tmp_path).llm) != base
    assert request_hash(request("q"), cfg.llm) != base
    renamed = Request("ce1", "extract", request("p").messages, Texts, "other")
    assert request_hash(renamed, cfg.llm) != base


def test_every_answer_model_of_the_package_is_bounded():
    """Every string, integer, array and open object of every answer the package asks a
    model for has a maximum, so that guided decoding ends before max_tokens."""
    import importlib
    import pkgutil

    import gdelt_forecast

    for module in pkgutil.walk_packages(gdelt_forecast.__path__, "gdelt_forecast."):
        if not module.name.startswith(("gdelt_forecast.dags", "gdelt_forecast.airflow")):
            importlib.import_module(module.name)
    models, todo = [], [Answer]
    while todo:
        found = todo.pop().__subclasses__()
        models += [m for m in found if m.__module__.startswith("gdelt_forecast.")]
        todo += found
    names = {m.__name__ for m in models}
    assert {"Events", "Order", "QA", "MCAC", "MCNC", "PairRelation", "Forecast"} <= names
    assert {m.__name__: unbounded(m) for m in models if unbounded(m)} == {}


def test_unbounded_names_each_open_place():
    class Open(Answer):
        text: str
        tags: list[str]
        n: int

    assert unbounded(Open) == ["$.text", "$.tags", "$.tags[]", "$.n"]
