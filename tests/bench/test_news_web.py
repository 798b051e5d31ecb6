"""bench/month/news_web.py: the simulated news hosts of a month, fetched by the real fetcher through
`articles.resolve`: pages of real paragraphs, one text per URL, and each host's behaviour
(robots.txt, 429 with Retry-After, dead, redirects, not HTML) met as the fetcher meets the web."""

from __future__ import annotations

from datetime import date

from bench.month import mirror as month_mirror
from bench.month import news_web
from gdelt_forecast.articles.fetch import fetch_urls
from gdelt_forecast.articles.ledger import read_ledger
from gdelt_forecast.articles.warc import iter_pages
from gdelt_forecast.ground.config import load_config

SHARES = {"robots": 0.3, "limited": 0.3, "slow": 0.0, "dead": 0.1, "redirect": 0.1, "binary": 0.1}


def test_a_slot_of_urls_is_fetched_from_the_simulated_hosts(tmp_path):
    with news_web.NewsWeb(12, seed=3, shares=SHARES) as web:
        made = month_mirror.build(tmp_path / "mirror", [date(2025, 8, 1)], per_day=1,
                                  hosts=12, port=web.port, missing=0, corrupt=0)  # fmt: skip
        urls = sorted(made.urls)[::20][:60]  # spread over the hosts
        cfg = load_config(None, [*web.fetch_config(), "articles.per_host_delay_s=0",
                                 "articles.backoff_s=0", "articles.retries=2",
                                 "articles.robots=true"], tmp_path / "data")  # fmt: skip
        summary = fetch_urls(cfg, urls)
    ledger = read_ledger(cfg.data_root)
    status = {u: ledger[u]["status"] for u in urls}
    kinds = web.kinds
    host = {u: u.split("/")[2].split(":")[0] for u in urls}
    assert all(status[u] == "robots" for u in urls
               if "robots" in kinds[host[u]] and "/private/" in u
               and "dead" not in kinds[host[u]])  # fmt: skip
    assert all(status[u] != "fetched" for u in urls if "dead" in kinds[host[u]])
    assert web.counts["429"] > 0 and web.counts["301"] > 0  # rate limits and redirects met
    # A limited host refuses each page once: the fetcher waits out Retry-After and gets it.
    limited = [u for u in urls if kinds[host[u]] == {"limited"}]
    assert limited and all(status[u] in ("fetched", "not_html") for u in limited)
    assert all(ledger[u]["attempts"] >= 2 for u in limited)
    assert {"fetched", "robots", "not_html"} <= set(status.values())
    pages = list(iter_pages(cfg.data_root))
    assert len(pages) == summary.fetched > 25
    assert len({p.body for p in pages}) == len(pages)  # one text per URL
    assert any("/moved/" in p.final_url for p in pages)
