"""The OpenForecast paper's numbered-list answers (appendix prompt table)."""

import pytest

from gdelt_forecast.llm import parse_numbered


@pytest.mark.parametrize(
    "text",
    [
        "1. Russia recognizes Donetsk; 2. Troops enter Donbas; 3. Sanctions follow",
        "1. Russia recognizes Donetsk;\n2. Troops enter Donbas;\n3. Sanctions follow;",
        "The completed event timeline is:\n1) Russia recognizes Donetsk\n 2)  Troops enter "
        "Donbas \n\n3) Sanctions follow\n",
        "1. Russia recognizes Donetsk; 2. Troops enter Donbas; 3. Sanctions follow; etc.",
        "1. Russia recognizes Donetsk. 2. Troops enter Donbas. 3. Sanctions follow",
    ],
)
def test_paper_formats(text):
    items = parse_numbered(text)
    assert [i.rstrip(".") for i in items] == [
        "Russia recognizes Donetsk",
        "Troops enter Donbas",
        "Sanctions follow",
    ]


@pytest.mark.parametrize("text", ["None", "None.", "  none\n", '"None"'])
def test_none_is_an_empty_list(text):
    assert parse_numbered(text) == []


def test_numbers_inside_an_event_do_not_split_it():
    text = "1. Biden met Macron on March 2. 2. Version 2.0 of the accord; 3. It ends"
    assert parse_numbered(text) == [
        "Biden met Macron on March 2.",
        "Version 2.0 of the accord",
        "It ends",
    ]


def test_items_must_be_numbered_in_order():
    assert parse_numbered("1. a\n3. b") == ["a\n3. b"]


def test_text_without_a_list_is_refused():
    with pytest.raises(ValueError, match="no numbered list"):
        parse_numbered("The article describes no timeline.")
