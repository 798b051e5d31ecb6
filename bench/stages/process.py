"""Benchmark: cost per document of the article stage's steps, on real pages.

Over the 181 pages of the article-extraction benchmark (``--fixtures``, as for
``bench/stages/extraction.py``), one core, in this process: trafilatura extraction as the pipeline
configures it (``extract_now``: the same work as ``extract`` without the worker hand-over),
then the OBELICS filters of the ``mirai`` and ``obelics`` presets on the extracted text
(``obelics.clean``: paragraph and document values and checks, langdetect included).
Figures: documents per second per core for each step and for the whole, and the share of
the filters in it. Target, from the issue: the filters cost no more than extraction itself.
The exit status is 1 when that fails.

Run: ``python -m bench.stages.process [--fixtures DIR]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bench.harness import verdict
from bench.stages.extraction import FIXTURES_HELP, load_pages
from gdelt_forecast.articles import obelics
from gdelt_forecast.articles.extract import extract_now
from gdelt_forecast.articles.process import as_paragraphs


def timed(fn, items):
    """Results of ``fn`` over ``items`` and the CPU seconds they took (one core)."""
    t0 = time.process_time()
    results = [fn(item) for item in items]
    return results, time.process_time() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, required=True, help=FIXTURES_HELP)
    args = parser.parse_args()
    pages, _ = load_pages(args.fixtures)
    extracted, extract_s = timed(extract_now, pages.values())
    texts = [e.text for e in extracted if e.text]
    n = len(pages)
    print(f"{n} pages, {len(texts)} with text; CPU seconds on one core\n")
    print(f"{'step':<28}{'s':>8}{'docs/s/core':>13}{'ms/doc':>9}")
    print(
        f"{'extraction (trafilatura)':<28}{extract_s:>8.2f}{n / extract_s:>13.1f}"
        f"{1000 * extract_s / n:>9.1f}"
    )
    ok = True
    for name, preset in obelics.PRESETS.items():
        cleaned, clean_s = timed(lambda t, p=preset: obelics.clean(as_paragraphs(t, p), p), texts)
        kept = sum(c.kept for c in cleaned)
        total = extract_s + clean_s
        print(
            f"{'filters, ' + name:<28}{clean_s:>8.2f}{len(texts) / clean_s:>13.1f}"
            f"{1000 * clean_s / len(texts):>9.1f}   kept {kept}/{len(texts)}"
        )
        print(f"{'whole, ' + name:<28}{total:>8.2f}{n / total:>13.1f}{1000 * total / n:>9.1f}")
        passed = clean_s <= extract_s
        ok &= passed
        print(
            f"  filters / extraction: {clean_s / extract_s:.2f}x (target <= 1.0x) {verdict(passed)}"
        )
    print(f"overall: {verdict(ok)}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
