"""Package the sample pages as a web archive of the demo's source URLs, for `make demo`.

The demo runs offline, so its GDELT events cannot be fetched from the live web. Instead real
pages shipped in the repo are written into a WARC under source URLs of the demo day's quads,
as a web archive would hold them, and the article stage reads that archive
(`articles.archives`). The pages are assigned to URLs for demonstration only: they are not
the articles GDELT coded (see demo/pages/README.md).

- Two stories, so that the timelines stage finds complex events of several documents: three
  pages on the 2019 US-China trade talks under the URLs of the day's China-United States
  quads, two on the 2019 impeachment hearings under those of Russia-United States.
- The shipped test pages (three English news articles, a German and a French page) under the
  first other source URLs, as before: the non-English ones are dropped by the language check.

    python demo/sample_pages.py --data-root demo-data --day 2025-08-07 --out FILE
"""

from __future__ import annotations

import argparse
import gzip
from datetime import date
from pathlib import Path

from pipeline.articles.warc import write_pages
from pipeline.config import load_config
from pipeline.objectstore import staged
from pipeline.warehouse.build import open_read_only

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
PAGES = REPO / "demo" / "pages"
STORIES = {  # (country, country) -> pages, each under one of the pair's source URLs
    ("CHN", "USA"): [
        PAGES / "702d1da63b8e064cb70617620e45c2d116b4912c9bc9d518dcf5ce54bb8057ed.html.gz",
        PAGES / "d605bdef2cde7308a9f2fbd1484d4a9c3da0167177245d346da61e455f42208d.html.gz",
        PAGES / "39d5c43beb60605c3eec760c99500e62e7bd71ebbe4ae05edf382125e1b0b80a.html.gz",
    ],
    ("RUS", "USA"): [
        PAGES / "7a664e40d256470fdb12d10c3f8d1c6db0581e9b080c71765e55f273a3ac7d03.html.gz",
        PAGES / "c90731f051d033e49e4cfcc920895051bbc3b54ef1a11519abcf22a115c3aa79.html.gz",
    ],
}
SAMPLES = [
    *sorted((FIXTURES / "articles").glob("*.html.gz")),
    FIXTURES / "html" / "2.html",  # German: dropped by the language check
    FIXTURES / "html" / "4.html",  # French, rendered client-side: dropped too
]
PAIR_URLS = """
    SELECT DISTINCT least(q.head, q.tail), greatest(q.head, q.tail), u.url
    FROM quad_urls AS u JOIN quads AS q USING (quad_id)
    WHERE u.date = ?
    ORDER BY 1, 2, 3
"""


def assign(pair_urls: list[tuple[str, str, str]]) -> dict[str, Path]:
    """url -> sample page: the stories under their pairs' URLs, the rest under the others."""
    pages: dict[str, Path] = {}
    for pair, story in STORIES.items():
        urls = [url for a, b, url in pair_urls if (a, b) == pair and url not in pages]
        if len(urls) < len(story):
            raise SystemExit(f"demo: {pair} has {len(urls)} source URLs, {len(story)} wanted")
        pages.update(zip(urls, story, strict=False))
    free = sorted({url for _, _, url in pair_urls} - set(pages))
    pages.update(zip(free, SAMPLES, strict=False))
    return pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", required=True, help="a folder, or s3://bucket/prefix")
    parser.add_argument("--config", help="YAML config (default: configs/default.yaml)")
    parser.add_argument("--day", type=date.fromisoformat, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    cfg = load_config(args.config, data_root=args.data_root)
    with staged(cfg, []) as local, open_read_only(local) as con:
        pair_urls = con.execute(PAIR_URLS, [args.day]).fetchall()
    pages = {
        url: gzip.decompress(page.read_bytes()) if page.suffix == ".gz" else page.read_bytes()
        for url, page in assign(pair_urls).items()
    }
    write_pages(args.out, pages)
    urls = {url for _, _, url in pair_urls}
    print(f"demo pages: {len(pages)} sample pages archived under {len(pages)} of the "
          f"{len(urls)} source URLs of {args.day} in {args.out}")  # fmt: skip


if __name__ == "__main__":
    main()
