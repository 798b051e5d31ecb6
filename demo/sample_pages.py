"""Package the sample pages as a web archive of the demo's source URLs, for `make demo`.

The demo runs offline, so its GDELT events cannot be fetched from the live web. Instead real
pages shipped in the repo are written into a WARC under source URLs of the demo's quads, as
a web archive would hold them, and the article stage reads that archive
(`articles.archives`). The pages are assigned to URLs for demonstration only: they are not
the articles GDELT coded (see demo/pages/README.md).

- Two stories, so that the timelines stage finds complex events of several documents first
  seen on different days: five pages on the 2019 US-China trade war, one a demo day, under
  the URLs of that day's China-United States quads, and five on the 2019 impeachment
  hearings under those of Russia-United States. The demo days are the real slot's
  2025-08-07 and the four derived from it (tests/fixtures/gdelt/demo-days/).
- Within a story, the first two days' pages go under URLs of one CAMEO relation and the
  test month's three under another (the real slot has both for each pair), so that a
  story's events have two types, the earlier always before the later: EV2's schema-level
  tasks (S-CEC, S-CRR) need type pairs that the month relates one way only. The test
  month's documents stay under the relation its queries ask about.
- The shipped test pages (three English news articles, a German and a French page) under
  the first other source URLs of 2025-08-07, as before: the non-English ones are dropped by
  the language check.

Every page goes under one URL only (under two, it would be one document dated by the
earlier). Story days outside the span are left out.

    python demo/sample_pages.py --data-root demo-data --start-date 2025-07-22 \\
        --end-date 2025-08-12 --out FILE
"""

from __future__ import annotations

import argparse
import gzip
from datetime import date
from pathlib import Path

from gdelt_forecast.articles.warc import write_pages
from gdelt_forecast.ground import dates, duck
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.ground.data_root import silver
from gdelt_forecast.storage.working_copy import staged

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
PAGES = REPO / "demo" / "pages"
SAMPLES_DAY = date(2025, 8, 7)  # the real GDELT slot's day


def _page(prefix: str) -> Path:
    """The demo page whose name (its sha256) starts with ``prefix``."""
    (path,) = PAGES.glob(f"{prefix}*.html.gz")
    return path


# (country, country) -> day -> (the CAMEO relation of the URLs, pages), each page under one of
# that day's source URLs of the pair whose quads of the pair are all of that relation, in the
# order the stories read (the pages' own dates are November 2019's).
STORIES: dict[tuple[str, str], dict[date, tuple[str, list[Path]]]] = {
    ("CHN", "USA"): {  # 130 "Threaten", then 020 "Make an appeal or request"
        date(2025, 7, 22): ("130", [_page("b6906ca0")]),  # PolitiFact: tariffs, trade war
        date(2025, 7, 28): ("130", [_page("702d1da6")]),  # NYT: trade war, farm purchases
        date(2025, 8, 2): ("020", [_page("d605bdef")]),  # CNN: Asian markets, trade talks
        date(2025, 8, 7): ("020", [_page("39d5c43b")]),  # Beijing's tariff demands
        date(2025, 8, 12): ("020", [_page("db6b0816")]),  # AP: Esper accuses China
    },
    ("RUS", "USA"): {  # 090 "Investigate", then 110 "Disapprove"
        date(2025, 7, 22): ("090", [_page("8380689f")]),  # Snopes: Yovanovitch testified
        date(2025, 7, 28): ("090", [_page("7a664e40")]),  # CBS: Volker and Morrison
        date(2025, 8, 2): ("110", [_page("c90731f0")]),  # the White House: a "sham"
        date(2025, 8, 7): ("110", [_page("82b6d780")]),  # AP: Sondland faces questions
        date(2025, 8, 12): ("110", [_page("f5c90a6d")]),  # National Review: Schiff
    },
}
SAMPLES = [
    *sorted((FIXTURES / "articles").glob("*.html.gz")),
    FIXTURES / "html" / "2.html",  # German: dropped by the language check
    FIXTURES / "html" / "4.html",  # French, rendered client-side: dropped too
]
# The country pairs of each day's source URLs; `main` marks the pair the timelines stage
# will give a document under the URL: the pair of most of its quads, ties to the first pair
# (gdelt_forecast/sql/timelines/documents.sql). A story's pages go under URLs of its own pair.
# From the days' silver events, before any warehouse: one link per quad and source URL (the
# warehouse's quad_urls), with the quad's country pair and CAMEO relation.
PAIR_URLS = """
    WITH links AS (
        SELECT DISTINCT quad_id, date, SOURCEURL AS url, least(head, tail) AS a,
            greatest(head, tail) AS b, relation
        FROM read_parquet($parts, hive_partitioning = false)
        WHERE SOURCEURL IS NOT NULL
    ),
    main AS (
        SELECT date, url, a, b
        FROM links
        GROUP BY date, url, a, b
        QUALIFY row_number() OVER (PARTITION BY date, url ORDER BY count(*) DESC, a, b) = 1
    )
    SELECT l.date, l.a, l.b, l.url, (l.a, l.b) = (m.a, m.b) AS main,
        list_distinct(list(l.relation ORDER BY l.relation)) AS relations
    FROM links AS l JOIN main AS m USING (date, url)
    GROUP BY ALL
    ORDER BY l.date, l.a, l.b, main DESC, l.url
"""


def assign(pair_urls: list[tuple[date, str, str, str, bool, list[str]]]) -> dict[str, Path]:
    """url -> sample page: each story day's pages under its pair's URLs of that day whose
    quads of the pair are all of the day's relation (first the URLs whose documents the
    timelines stage will give to that pair), the other samples under the other URLs of
    SAMPLES_DAY."""
    days = {row[0] for row in pair_urls}
    pages: dict[str, Path] = {}
    for pair, story in STORIES.items():
        for day, (relation, story_pages) in story.items():
            if day not in days:
                continue
            urls = [
                url
                for d, a, b, url, _, rels in pair_urls
                if (d, a, b) == (day, *pair) and rels == [relation] and url not in pages
            ]
            if len(urls) < len(story_pages):
                raise SystemExit(
                    f"demo: {pair} has {len(urls)} source URLs of relation {relation} on "
                    f"{day}, {len(story_pages)} wanted"
                )
            pages.update(zip(urls, story_pages, strict=False))
    free = sorted({row[3] for row in pair_urls if row[0] == SAMPLES_DAY} - set(pages))
    pages.update(zip(free, SAMPLES, strict=False))
    return pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", required=True, help="a folder, or s3://bucket/prefix")
    parser.add_argument("--config", help="YAML config (default: configs/default.yaml)")
    parser.add_argument("--start-date", type=date.fromisoformat, required=True)
    parser.add_argument("--end-date", type=date.fromisoformat, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.start_date > args.end_date:
        parser.error("--start-date is after --end-date")
    cfg = load_config(args.config, data_root=args.data_root)
    span = dates.days(args.start_date, args.end_date)
    with staged(cfg, [silver("events", d) for d in span]) as local, duck.connect(local) as con:
        parts = [local.data_root / silver("events", d) / "part-0.parquet" for d in span]
        parts = [str(p) for p in parts if p.exists()]
        if not parts:
            raise SystemExit(f"demo: no silver events {args.start_date}..{args.end_date}")
        pair_urls = con.execute(PAIR_URLS, {"parts": parts}).fetchall()
    pages = {
        url: gzip.decompress(page.read_bytes()) if page.suffix == ".gz" else page.read_bytes()
        for url, page in assign(pair_urls).items()
    }
    write_pages(args.out, pages)
    urls = {row[3] for row in pair_urls}
    days = len({row[0] for row in pair_urls})
    print(
        f"demo pages: {len(pages)} sample pages archived under {len(pages)} of the "
        f"{len(urls)} source URLs of {days} days ({args.start_date}..{args.end_date}) "
        f"in {args.out}"
    )


if __name__ == "__main__":
    main()
