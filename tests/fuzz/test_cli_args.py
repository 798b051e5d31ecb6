"""`gdelt-forecast airflow run --conf`: any text is a run's params or a usage error (exit 2),
never a crash, and any JSON object comes back as it was given."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gdelt_forecast.cli import UsageError, conf_of
from tests.fuzz.strategies import TEXT

pytestmark = pytest.mark.fuzz

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(TEXT)
def test_any_text_is_params_or_a_usage_error(text):
    try:
        assert isinstance(conf_of(text), dict)
    except UsageError as exc:
        assert str(exc).startswith("--conf ")


@given(st.dictionaries(st.text(), JSON_VALUES, max_size=6))
def test_any_json_object_comes_back_as_given(conf):
    assert conf_of(json.dumps(conf)) == conf


def test_nesting_past_pythons_recursion_limit_is_a_usage_error():
    with pytest.raises(UsageError, match="--conf is not JSON"):
        conf_of("[" * 100_000)
