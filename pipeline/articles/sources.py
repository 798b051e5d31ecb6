"""Which pages the article stage works on: the source URLs of the days' quads."""

from __future__ import annotations

from datetime import date

from pipeline.config import Config
from pipeline.warehouse.build import open_read_only


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
    """``gdelt-forecast articles fetch``: fetch the source pages of the days' quads."""
    from pipeline.articles.fetch import fetch_urls

    return fetch_urls(cfg, urls_for_days(cfg, first, last))
