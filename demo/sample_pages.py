"""Package the sample pages as a web archive of the demo's source URLs, for `make demo`.

The demo runs offline, so its GDELT events cannot be fetched from the live web. Instead the
shipped sample pages (three English news articles, a German and a French page) are written
into a WARC under the first source URLs of the demo day's quads, as a web archive would hold
them, and the article stage reads that archive (`articles.archives`).

    python demo/sample_pages.py --data-root demo-data --day 2025-08-07 --out FILE
"""

from __future__ import annotations

import argparse
import gzip
from datetime import date
from pathlib import Path

from pipeline.articles.sources import urls_for_days
from pipeline.articles.warc import write_pages
from pipeline.config import load_config

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
SAMPLES = [
    *sorted((FIXTURES / "articles").glob("*.html.gz")),
    FIXTURES / "html" / "2.html",  # German: dropped by the language check
    FIXTURES / "html" / "4.html",  # French, rendered client-side: dropped too
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", type=Path, required=True)
    parser.add_argument("--config", help="YAML config (default: configs/default.yaml)")
    parser.add_argument("--day", type=date.fromisoformat, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    cfg = load_config(args.config, data_root=args.data_root)
    urls = sorted(urls_for_days(cfg, args.day, args.day))
    pages = {}
    for url, sample in zip(urls, SAMPLES, strict=False):
        body = sample.read_bytes()
        pages[url] = gzip.decompress(body) if sample.suffix == ".gz" else body
    write_pages(args.out, pages)
    print(f"demo pages: {len(pages)} sample pages archived under {len(pages)} of the "
          f"{len(urls)} source URLs of {args.day} in {args.out}")  # fmt: skip


if __name__ == "__main__":
    main()
