"""Progress for long loops: a tqdm bar on a terminal, periodic log lines elsewhere (Airflow)."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")
log = logging.getLogger("gdelt_forecast.ground.progress")


def progress(items: Iterable[T], total: int, desc: str, every_s: float = 30.0) -> Iterator[T]:
    if sys.stderr.isatty():
        yield from tqdm(items, total=total, desc=desc, unit="file", leave=False)
        return
    # tqdm's carriage-return redraws turn into one unreadable line in a task log.
    last = time.monotonic()
    for done, item in enumerate(items, 1):
        yield item
        if time.monotonic() - last >= every_s:
            log.info("%s: %d/%d (%.0f%%)", desc, done, total, 100 * done / max(total, 1))
            last = time.monotonic()
