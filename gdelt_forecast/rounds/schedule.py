"""``gdelt-forecast round refresh --month YYYY-MM``, and ``monthly_refresh``'s ``rounds``
task after its release: the live rounds' turn of a monthly refresh.

- **Opens the next live round**, ``live-<today>``, on today's date (UTC), when the month
  refreshed is the one before today's: only the newest month's refresh asks about days to
  come (refreshing an older month by hand opens none, and says so). Opening it again the
  same day leaves it as it is.
- **Resolves every live round that is due**: open, and its last target day and grace days
  over. One whose GDELT files are not all in yet waits for the next refresh (the summary
  names what it lacks) instead of failing the run; replays are resolved by hand.

Both are idempotent: a second run of the same day opens and resolves nothing new.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import ROUND_JSON, ROUNDS, DataRoot
from gdelt_forecast.ground.dates import month_range
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.rounds.clock import RoundError
from gdelt_forecast.rounds.questions import open_round
from gdelt_forecast.rounds.resolve import resolve_round
from gdelt_forecast.storage.locks import partition_lock


@dataclass
class Summary(StageSummary):
    month: str
    opened: str | None = None  # the live round opened (or already open) today
    not_opened: str | None = None  # why none was
    resolved: list[str] = field(default_factory=list)
    waiting: dict[str, str] = field(default_factory=dict)  # due, not resolvable yet: why
    seconds: float = 0.0

    def line(self) -> str:
        opened = f"opened {self.opened}" if self.opened else f"no round opened ({self.not_opened})"
        waiting = "; ".join(f"{r} waits: {why}" for r, why in self.waiting.items())
        return (
            f"round refresh {self.month}: {opened}; resolved {len(self.resolved)} "
            f"({', '.join(self.resolved) or 'none due'})"
            + (f"; {waiting}" if waiting else "")
            + f" ({self.seconds:.1f} s)"
        )


def refresh_rounds(cfg: Config, month: str, now: datetime | None = None) -> Summary:
    """The rounds' turn of the refresh of ``month`` (the module's doc)."""
    now = now or datetime.now(UTC)
    today = now.date()
    summary = Summary(month=month)
    _, last = month_range(month)
    if last != today.replace(day=1) - timedelta(days=1):
        summary.not_opened = f"{month} is not the month before {today:%Y-%m}"
    else:
        round_id = f"live-{today.isoformat()}"
        with partition_lock(cfg, "round", round_id):  # the lock of the round's own steps
            summary.opened = open_round(cfg, round_id, today, now=now).round_id
    for round_id, pinned in _open_rounds(cfg):
        if pinned["replay"] or not _due(pinned, today):
            continue
        try:
            with partition_lock(cfg, "round", round_id):
                resolve_round(cfg, round_id)
            summary.resolved.append(round_id)
        except RoundError as exc:
            summary.waiting[round_id] = str(exc)
    return summary


def _open_rounds(cfg: Config) -> list[tuple[str, dict]]:
    folder = DataRoot(cfg.data_root).path(ROUNDS)
    found = []
    for path in sorted(folder.glob(f"*/{ROUND_JSON}")):
        pinned = json.loads(path.read_text(encoding="utf-8"))
        if pinned["state"] == "open":
            found.append((path.parent.name, pinned))
    return found


def _due(pinned: dict, today: date) -> bool:
    """Whether the round's last target day and its grace days are over."""
    last = max(date.fromisoformat(d) for d in pinned["target_days"].values())
    return today > last + timedelta(days=pinned["grace_days"])
