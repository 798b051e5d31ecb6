"""A round's clock (:mod:`gdelt_forecast.rounds.clock`): its deadline and target days, live
or replay, and a submission on time or late."""

from datetime import UTC, date, datetime

import pytest

from gdelt_forecast.rounds.clock import Clock, RoundError

OPEN = date(2025, 8, 3)


def test_by_default_the_deadline_ends_the_open_date_and_targets_follow_it():
    clock = Clock.opened("2025-08-03", OPEN, today=OPEN)
    assert clock.deadline == datetime(2025, 8, 3, 23, 59, 59, 999_999, UTC)
    assert clock.target_days() == {1: date(2025, 8, 4), 7: date(2025, 8, 10), 30: date(2025, 9, 2)}
    assert not clock.replay


def test_a_later_deadline_moves_the_targets_and_a_naive_one_is_utc():
    clock = Clock.opened("r", OPEN, today=OPEN, deadline=datetime(2025, 8, 5, 12), horizons=(7, 1))
    assert clock.deadline == datetime(2025, 8, 5, 12, tzinfo=UTC)
    assert clock.horizons == (1, 7)
    assert clock.target_days() == {1: date(2025, 8, 6), 7: date(2025, 8, 12)}


@pytest.mark.parametrize(
    ("round_id", "open_date", "kwargs", "why"),
    [
        ("../r", OPEN, {}, "is not 1-64 letters"),
        ("", OPEN, {}, "is not 1-64 letters"),
        ("r" * 65, OPEN, {}, "is not 1-64 letters"),
        ("r", date(2025, 8, 4), {}, "open date 2025-08-04 has not come yet"),
        ("r", date(2025, 8, 2), {}, "--replay opens one on a past date"),
        ("r", OPEN, {"deadline": datetime(2025, 8, 2, 23, tzinfo=UTC)}, "before the open date"),
        ("r", OPEN, {"horizons": ()}, "are not distinct whole days"),
        ("r", OPEN, {"horizons": (0, 7)}, "are not distinct whole days"),
        ("r", OPEN, {"horizons": (7, 7)}, "are not distinct whole days"),
    ],
)
def test_a_round_that_cannot_open_says_why(round_id, open_date, kwargs, why):
    with pytest.raises(RoundError, match=why.replace("(", r"\(")):
        Clock.opened(round_id, open_date, today=OPEN, **kwargs)


def test_a_live_submission_is_on_time_up_to_the_deadline_and_late_after():
    clock = Clock.opened("live", OPEN, today=OPEN)
    on_time = clock.received(datetime(2025, 8, 3, 23, 59, 59, 999_999, UTC))
    clock.check_on_time(on_time)
    late = clock.received(datetime(2025, 8, 4, 0, 0, 0, tzinfo=UTC))
    with pytest.raises(RoundError) as caught:
        clock.check_on_time(late)
    assert str(caught.value) == (
        "round live closed at 2025-08-03T23:59:59Z: this submission was received at "
        "2025-08-04T00:00:00Z, after its deadline"
    )


def test_a_replay_receives_everything_at_its_open_date():
    clock = Clock.opened("replay", date(2025, 7, 1), today=OPEN, replay=True)
    received = clock.received(datetime(2026, 11, 29, 12, tzinfo=UTC))
    assert received == datetime(2025, 7, 1, tzinfo=UTC)
    clock.check_on_time(received)
