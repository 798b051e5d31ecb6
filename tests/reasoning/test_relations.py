"""Temporal relations from dates, against hand-labelled pairs at day, month and year
precision."""

from __future__ import annotations

import pytest

from gdelt_forecast.contract.relations import INVERSE, temporal


@pytest.mark.parametrize(
    ("a", "b", "relation"),
    [
        ("2025-08-01", "2025-08-02", "Before"),
        ("2025-08-02", "2025-08-01", "After"),
        ("2025-08-02", "2025-08-02", "Vague"),  # one day: not ordered by the dates
        ("2025-07", "2025-08-01", "Before"),  # July ends before August 1st
        ("2025-08", "2025-08-15", "Vague"),  # the 15th falls in the month
        ("2025-08-31", "2025-08", "Vague"),
        ("2025-09-01", "2025-08", "After"),
        ("2024", "2025-01-01", "Before"),
        ("2025", "2025-06", "Vague"),
        ("2025", "2024-12-31", "After"),
        ("2019", "2025-07-22", "Before"),
        ("2025-08-07", None, None),
        ("2025-02-31", "2025-03-01", None),  # no such day: no period
    ],
)
def test_relations_from_dates(a, b, relation):
    assert temporal(a, b) == relation
    if relation is not None:
        assert temporal(b, a) == INVERSE[relation]
