"""Which pages the article stage works on: the source URLs of the days' quads."""

from __future__ import annotations

import logging
from datetime import date

from gdelt_forecast.config import Config
from gdelt_forecast.warehouse.build import open_read_only

log = logging.getLogger(__name__)


def urls_for_days(cfg: Config, first: date, last: date) -> dict[str, date]:
    """Each source URL of the quads of [first, last], with the earliest day it is a source
    on (a URL belongs to that day's article outputs)."""
    with open_read_only(cfg) as con:
        rows = con.execute(
            "SELECT url, min(date) FROM quad_urls WHERE date BETWEEN ? AND ? GROUP BY url "
            "ORDER BY url",
            [first, last],
        ).fetchall()
    return dict(rows)


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
