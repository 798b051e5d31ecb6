"""A round's clock (:func:`gdelt_forecast.rounds.clock.Clock.opened`), property-tested: any
round id, open date, deadline (naive or in any zone) and horizons give a clock or a
RoundError, never another exception; and every target day of a clock starts after its
deadline, which is on or after the open date's start."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, timezone

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gdelt_forecast.rounds.clock import Clock, RoundError
from tests.fuzz.strategies import TEXT

pytestmark = pytest.mark.fuzz

TODAY = date(2025, 8, 3)
ZONES = st.one_of(
    st.none(), st.builds(lambda m: timezone(timedelta(minutes=m)), st.integers(-1439, 1439))
)
DEADLINES = st.one_of(
    st.none(),
    st.builds(
        lambda d, z: d.replace(tzinfo=z),
        st.datetimes(datetime(2025, 7, 1), datetime(2025, 9, 1)),
        ZONES,
    ),
)


@given(
    st.one_of(TEXT, st.sampled_from(["2025-08-03", "r.1_a-b"])),
    st.dates(date(2025, 7, 25), date(2025, 8, 10)),
    DEADLINES,
    st.lists(st.integers(-3, 400), max_size=5).map(tuple),
    st.booleans(),
)
@example("r", TODAY, datetime(2025, 8, 3, 0, 30, tzinfo=timezone(timedelta(hours=2))), (1,), False)
def test_any_arguments_give_a_clock_or_a_round_error(
    round_id, open_date, deadline, horizons, replay
):
    try:
        clock = Clock.opened(round_id, open_date, TODAY, deadline, horizons, replay)
    except RoundError as exc:
        assert str(exc).isprintable()  # the id is quoted escaped
        return
    start = datetime.combine(open_date, time(), UTC)
    assert clock.deadline.tzinfo == UTC and clock.deadline >= start
    for day in clock.target_days().values():
        assert datetime.combine(day, time(), UTC) > clock.deadline
    clock.check_on_time(clock.received(start))
