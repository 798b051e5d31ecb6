"""``gdelt-forecast round refresh --month YYYY-MM``, and ``monthly_refresh``'s ``rounds``
task after its release: the live rounds' turn of a monthly refresh.

- **Resolves every live round that is due**: open, and its last target day and grace days
  over. One whose GDELT files are not all in yet waits for the next refresh (the summary
  names what it lacks) instead of failing the run; replays are resolved by hand.
- **Opens the next live round**, the one the month's release names in its card and
  manifest: ``live-<build date>``, when the release was built in the month after its own
  (only the newest month's refresh asks about days to come; a release built later names
  none, and none is opened). Without a release of the month yet, the round is the one such a
  release would name today. A named round that can no longer open live (the refresh ran
  past its open date) fails the step, after the resolutions, rather than leave a card
  naming a round that does not exist.

Both are idempotent: a second run of the same day opens and resolves nothing new.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from gdelt_forecast.contract.names import MANIFEST, live_round, version_key
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import ROUND_JSON, ROUNDS, DataRoot
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
    for round_id, pinned in _open_rounds(cfg):
        if pinned["replay"] or not _due(pinned, today):
            continue
        try:
            with partition_lock(cfg, "round", round_id):
                resolve_round(cfg, round_id)
            summary.resolved.append(round_id)
        except RoundError as exc:
            summary.waiting[round_id] = str(exc)
    release, named = _named_round(cfg, month, today)
    if named is None:
        summary.not_opened = (
            f"release {release} of {month} names none" if release
            else f"{month} is not the month before {today:%Y-%m}"
        )  # fmt: skip
        return summary
    round_id, open_date = named["round"], date.fromisoformat(named["open_date"])
    with partition_lock(cfg, "round", round_id):  # the lock of the round's own steps
        summary.opened = open_round(cfg, round_id, open_date, now=now, release=release).round_id
    return summary


def _named_round(cfg: Config, month: str, today: date) -> tuple[str | None, dict | None]:
    """The month's newest release (its highest version) and the live round it names; without
    a release of the month, the round one built today would name."""
    releases = DataRoot(cfg.data_root).releases
    manifests = (json.loads(p.read_text(encoding="utf-8")) for p in releases.glob(f"*/{MANIFEST}"))
    ours = [m for m in manifests if m["month"] == month]
    if ours:
        newest = max(ours, key=lambda m: version_key(m["version"]))
        return newest["version"], newest.get("round")
    round_id = live_round(month, today)
    return None, round_id and {"round": round_id, "open_date": today.isoformat()}


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
