"""Which pages the article stage works on: the source URLs of the days' quads, read from
the days' silver events (what the warehouse's ``quad_urls`` is made of), so that the article
stage runs between ``normalize`` and the one ``database`` build of a month."""

from __future__ import annotations

import logging
from datetime import date

from gdelt_forecast.ground import dates, duck
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import PART, DataRoot, silver
from gdelt_forecast.ground.errors import StageError

log = logging.getLogger(__name__)


def urls_for_days(cfg: Config, first: date, last: date) -> dict[str, date]:
    """Each source URL of the quads of [first, last], with the earliest day it is a source
    on (a URL belongs to that day's article outputs). Days without silver events have none;
    a range without any is refused."""
    root = DataRoot(cfg.data_root)
    parts = [
        path
        for day in dates.days(first, last)
        if (path := root.path(silver("events", day)) / PART).exists()
    ]
    if not parts:
        raise StageError(
            f"no silver events for {first}..{last} under {DataRoot(cfg.data_root).silver_root}: "
            "run `gdelt-forecast normalize` first"
        )
    with duck.connect(cfg) as con:
        rows = duck.records(con, "articles/urls.sql", parts=[str(p) for p in parts])
    return {r["url"]: r["date"] for r in rows}


def fetch_days(cfg: Config, first: date, last: date):
    """``gdelt-forecast articles fetch``: fetch the source pages of the days' quads, unless
    the pages come from web archives (``articles.archives``)."""
    from gdelt_forecast.articles.fetch import FetchSummary, fetch_urls

    urls = urls_for_days(cfg, first, last)
    if cfg.articles.archives:
        log.info(
            "articles.archives is set: nothing fetched, pages come from %s",
            ", ".join(map(str, cfg.articles.archives)),
        )
        return FetchSummary(urls=len(urls), skipped=len(urls))
    return fetch_urls(cfg, urls)
