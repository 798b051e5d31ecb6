"""A round's clock: its open date, deadline and target days, whether it is live or a replay,
and when a submission counts as received.

- The **open date** bounds what the questions read: nothing first seen on or after it.
- The **deadline** is a UTC time on or after the open date's start, by default the open
  date's end. Each horizon ``h`` asks about the day ``h`` days after the deadline's
  day, so every target day starts after the deadline.
- A round opened on today's date (UTC) is **live**: a submission is received when this
  machine's clock says, or when the bucket it is written to says it arrived (the caller
  passes that time). A round on an earlier date is a **replay**, which must be asked for
  (``--replay``). Its clock is simulated at the open date's start, so every submission is on
  time, and a replay never counts towards the live leaderboard. A round cannot open on a
  date that has not come yet.
- A submission received after the deadline is refused, naming both times.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from gdelt_forecast.contract.names import ROUND_ID_PATTERN
from gdelt_forecast.ground.errors import StageError

HORIZONS = (1, 7, 30)  # days after the deadline's day, as MIRAI's test set asks
ROUND_ID = re.compile(ROUND_ID_PATTERN)  # a folder of rounds/


class RoundError(StageError):
    """A round that cannot be opened as asked, or a submission it cannot take."""


@dataclass(frozen=True)
class Clock:
    round_id: str
    open_date: date
    deadline: datetime  # UTC
    horizons: tuple[int, ...]
    replay: bool

    @classmethod
    def opened(
        cls,
        round_id: str,
        open_date: date,
        today: date,
        deadline: datetime | None = None,
        horizons: tuple[int, ...] = HORIZONS,
        replay: bool = False,
    ) -> Clock:
        """The clock of a round opened on ``open_date`` when it is ``today`` (UTC), checked; a
        naive ``deadline`` is read as UTC."""
        if not ROUND_ID.fullmatch(round_id):
            raise RoundError(
                f"round id {round_id!r} is not 1-64 letters, digits, '.', '_' or '-' "
                "(starting with a letter or digit)"
            )
        if open_date > today:
            raise RoundError(f"open date {open_date} has not come yet (today is {today}, UTC)")
        if open_date < today and not replay:
            raise RoundError(
                f"open date {open_date} is before today ({today}, UTC): a live round opens "
                "today; --replay opens one on a past date"
            )
        start = datetime.combine(open_date, time(), UTC)
        if deadline is None:
            deadline = start + timedelta(days=1, microseconds=-1)
        elif deadline.tzinfo is None:
            deadline = deadline.replace(tzinfo=UTC)
        deadline = deadline.astimezone(UTC)
        if deadline < start:
            raise RoundError(f"deadline {deadline:%Y-%m-%dT%H:%M:%SZ} is before the open date")
        if not horizons or any(h < 1 for h in horizons) or len(set(horizons)) != len(horizons):
            raise RoundError(f"horizons {list(horizons)} are not distinct whole days, each >= 1")
        return cls(round_id, open_date, deadline, tuple(sorted(horizons)), replay)

    @classmethod
    def pinned(cls, round_json: dict) -> Clock:
        """The clock a round was opened with, as its ``round.json`` pins it."""
        return cls(
            round_json["round"],
            date.fromisoformat(round_json["open_date"]),
            datetime.fromisoformat(round_json["deadline"].replace("Z", "+00:00")),
            tuple(round_json["horizons"]),
            round_json["replay"],
        )

    def target_days(self) -> dict[int, date]:
        """Each horizon's target day: that many days after the deadline's day."""
        return {h: self.deadline.date() + timedelta(days=h) for h in self.horizons}

    def received(self, now: datetime) -> datetime:
        """When a submission made at ``now`` (UTC: this machine's clock or the bucket's) counts
        as received: ``now`` in a live round, the open date's start in a replay."""
        if self.replay:
            return datetime.combine(self.open_date, time(), UTC)
        return now.astimezone(UTC)

    def check_on_time(self, received: datetime) -> None:
        """RoundError when ``received`` is after the deadline."""
        if received > self.deadline:
            raise RoundError(
                f"round {self.round_id} closed at {self.deadline:%Y-%m-%dT%H:%M:%SZ}: this "
                f"submission was received at {received.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}, "
                "after its deadline"
            )
