"""Whether a day's bronze is complete: every file GDELT lists for it has a final outcome.

A day is complete when each (slot, table) the master file list names for it is in the
ledger as downloaded, cached, missing or corrupt; ``failed`` and absent files are pending.
Later stages start from complete days only, so a half-ingested day never reaches a release.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta

from gdelt_forecast.gdelt import ledger
from gdelt_forecast.gdelt.ingest import list_slot_files
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import DataRoot

FINAL = {"downloaded", "cached", "missing", "corrupt"}


@dataclass
class DayStatus:
    day: str
    listed: int
    statuses: dict[str, int] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.listed > 0 and not self.pending


def day_status(cfg: Config, day: date) -> DayStatus:
    first = datetime.combine(day, time())
    listing = list_slot_files(cfg, first, first + timedelta(days=1, seconds=-1), cfg.gdelt.tables)
    book = ledger.read(DataRoot(cfg.data_root).ledger, {f.slot for f in listing.files})
    outcomes = {
        f.name: book.get((f.slot, f.stream, f.table), {}).get("status") for f in listing.files
    }
    return DayStatus(
        day=day.isoformat(),
        listed=len(listing.files),
        statuses=dict(Counter(s or "not ingested" for s in outcomes.values())),
        pending=sorted(name for name, status in outcomes.items() if status not in FINAL),
    )
