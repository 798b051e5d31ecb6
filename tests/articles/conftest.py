"""Real pages (three news articles, the non-English and thin pages of the HTML fixtures)
mapped onto source URLs of the real GDELT slot, in a WARC as any web archive holds them."""

import gzip
import json
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

from gdelt_forecast.events.normalize import normalize
from gdelt_forecast.ground.config import Config, load_config
from gdelt_forecast.ground.duck import open_warehouse
from gdelt_forecast.warehouse.build import build_database
from tests.articles.sites import HOSTS, Site

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ARTICLES = FIXTURES / "articles"
HTML = FIXTURES / "html"
DAY = date(2025, 8, 7)


def article_pages() -> dict[str, tuple[bytes, str]]:
    """id -> (HTML bytes, first line of the true article body)."""
    truth = json.loads((ARTICLES / "ground-truth.json").read_text())
    return {
        key: (
            gzip.decompress((ARTICLES / f"{key}.html.gz").read_bytes()),
            value["articleBody"].split("\n")[0],
        )
        for key, value in truth.items()
    }


@pytest.fixture
def database(real_day):
    """The real slot normalized (quads with at least one daily mention) into a warehouse."""
    cfg = load_config(None, ["events.min_daily_mentions=1"], real_day)
    normalize(cfg, DAY, DAY)
    build_database(cfg)
    return cfg


def quad_urls(cfg) -> list[str]:
    with open_warehouse(cfg) as con:
        return [
            u for (u,) in con.execute("SELECT DISTINCT url FROM quad_urls ORDER BY url").fetchall()
        ]


@pytest.fixture
def site_at():
    sites: list[Site] = []

    def make(host: str = "127.0.0.1") -> Site:
        sites.append(Site(host))
        return sites[-1]

    yield make
    for site in sites:
        site.stop()


@pytest.fixture
def site(site_at) -> Site:
    return site_at()


@pytest.fixture
def make_cfg(tmp_path) -> Callable[..., Config]:
    """Test settings: the loopback test hosts allowed, no delays, short timeouts, no robots,
    no host ever down."""

    def make(*overrides: str) -> Config:
        base = [
            f"articles.allow_hosts=[{', '.join(HOSTS)}]",
            "articles.per_host_delay_s=0",
            "articles.backoff_s=0",
            "articles.retries=2",
            "articles.connect_timeout_s=2",
            "articles.read_timeout_s=2",
            "articles.robots=false",
            "articles.host_down_after=0",
        ]
        return load_config(None, [*base, *overrides], tmp_path / "data")

    return make
