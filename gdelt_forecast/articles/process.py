"""``gdelt-forecast articles process``: fetched pages to clean English documents.

For the source URLs of the quads of some days, each stored page is extracted
(trafilatura), language-identified (langdetect) and cleaned with the OBELICS filters of the
configured preset. Kept documents get a stable ``doc_id`` (a hash of their text, so exact
duplicates collapse into one) and MIRAI's abstract; every removed document and paragraph
goes to an exclusion table with the filter that removed it and its value. Outputs, per day
(a URL belongs to the earliest day of its quads):

    articles/docs/date=D/part-0.parquet        one row per (url, kept document)
    articles/exclusions/date=D/part-0.parquet  one row per removed document or paragraph
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path

import pyarrow as pa

from gdelt_forecast.articles import obelics
from gdelt_forecast.articles.extract import extract
from gdelt_forecast.articles.ledger import read_ledger
from gdelt_forecast.articles.sources import urls_for_days
from gdelt_forecast.articles.warc import Page, iter_pages
from gdelt_forecast.contract.documents import DOCS, EXCLUSIONS, VALUES
from gdelt_forecast.ground import dates
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import PART, DataRoot, article
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.ground.progress import progress
from gdelt_forecast.ground.summary import StageSummary

log = logging.getLogger(__name__)
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.IGNORECASE)


class ArticlesError(StageError):
    """The articles stage cannot run (no warehouse, no pages)."""


@dataclass
class Summary(StageSummary):
    first_day: str
    last_day: str
    urls: int = 0
    pages: int = 0
    extracted: int = 0
    kept: int = 0
    documents: int = 0
    removed: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def line(self) -> str:
        removed = ", ".join(f"{why} -{n:,}" for why, n in sorted(self.removed.items()))
        return (
            f"articles process {self.first_day}..{self.last_day}: {self.urls:,} URLs, "
            f"{self.pages:,} pages, {self.extracted:,} extracted, {self.kept:,} kept as "
            f"{self.documents:,} documents; {removed or 'nothing removed'} ({self.seconds:.1f} s)"
        )


def mirai_abstract(title: str | None, text: str) -> str:
    """MIRAI's abstract: the title, then paragraphs until it is longer than 50 characters
    (dataset_construction/6_generate_final_data.py of the MIRAI release)."""
    paragraphs = text.split("\n")
    abstract = (title or "") + "\n" + paragraphs[0]
    for paragraph in paragraphs[1:]:
        if len(abstract) > 50:
            break
        abstract += "\n" + paragraph
    return abstract


def doc_id(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def preset_for(cfg: Config, name: str | None = None) -> obelics.Preset:
    """The named (else the configured) preset, checking the configured language."""
    preset = obelics.PRESETS[name or cfg.articles.preset]
    if cfg.articles.language == preset.document.lang:
        return preset
    return replace(
        preset,
        version=f"{preset.version}+lang={cfg.articles.language}",
        document=replace(preset.document, lang=cfg.articles.language),
    )


def as_paragraphs(text: str, preset: obelics.Preset) -> str:
    """Extracted text (paragraphs apart by a blank line, lines by a newline) split the
    preset's way (OBELICS: paragraphs; MIRAI: lines). Empty pieces are layout, not
    paragraphs, so they are neither tested nor excluded."""
    pieces = (piece.strip("\n") for piece in text.split(preset.separator))
    return preset.separator.join(piece for piece in pieces if piece.strip())


def _exclusion(
    url: str,
    day: date,
    preset: str,
    *,
    filter_name: str,
    reason: str,
    value: object = None,
    paragraph: int | None = None,
    text: str | None = None,
) -> dict:
    """One exclusions row: a paragraph's when `paragraph` (its index) is given, else the
    document's."""
    return {
        "url": url,
        "date": day,
        "level": "document" if paragraph is None else "paragraph",
        "paragraph": paragraph,
        "text": text,
        "filter": filter_name,
        "value": None if value is None else str(value),
        "reason": reason,
        "preset": preset,
    }


def _removal(
    url: str,
    day: date,
    preset: str,
    verdict: obelics.Verdict,
    *,
    paragraph: int | None = None,
    text: str | None = None,
) -> dict:
    """The exclusions row of a paragraph or document that an OBELICS filter removed."""
    return _exclusion(
        url,
        day,
        preset,
        filter_name=verdict.filter,
        reason=verdict.reason,
        value=verdict.value,
        paragraph=paragraph,
        text=text,
    )


def process_page(page: Page, day: date, preset: obelics.Preset, timeout_s: float):
    """One page to (document row or None, exclusion rows)."""
    version = preset.version
    charset = _CHARSET.search(page.content_type or "")
    extracted = extract(
        page.body, page.final_url or page.url, timeout_s, charset[1] if charset else None
    )
    if extracted.error or not extracted.text:
        reason = extracted.error or "no_text: nothing extracted"
        return None, [_exclusion(page.url, day, version, filter_name="extraction", reason=reason)]
    cleaned = obelics.clean(as_paragraphs(extracted.text, preset), preset)
    excluded = [
        _removal(page.url, day, version, paragraph.verdict, paragraph=index, text=paragraph.text)
        for index, paragraph in enumerate(cleaned.paragraphs)
        if paragraph.verdict is not None
    ]
    if cleaned.verdict is not None:
        excluded.append(
            _removal(page.url, day, version, cleaned.verdict, text=cleaned.text or None)
        )
        return None, excluded
    row = {
        "doc_id": doc_id(cleaned.text),
        "url": page.url,
        "url_md5": hashlib.md5(page.url.encode(), usedforsecurity=False).hexdigest(),
        "date": day,
        "title": extracted.title,
        "text": cleaned.text,
        "abstract": mirai_abstract(extracted.title, cleaned.text),
        "published": extracted.date,
        "preset": version,
        **{name: cleaned.values.get(name) for name, _ in VALUES},
    }
    return row, excluded


def process(cfg: Config, first: date, last: date, warc: list[Path] | None = None) -> Summary:
    """Turn the fetched pages of the days' source URLs into documents and exclusions."""
    wanted = urls_for_days(cfg, first, last)
    ledger = read_ledger(cfg.data_root, wanted)
    # The fetch's own pages are read from the WARC files the ledger names for these URLs,
    # not from every file of the history.
    named = {r["warc_file"] for r in ledger.values() if r["status"] == "fetched" and r["warc_file"]}
    sources = list(warc or cfg.articles.archives or (cfg.data_root / f for f in sorted(named)))
    if wanted and not (sources or ledger):
        raise ArticlesError(
            f"no pages under {DataRoot(cfg.data_root).pages} for the {len(wanted):,} source "
            "URLs of these days: run `gdelt-forecast articles fetch`, or pass --warc"
        )
    preset = preset_for(cfg)
    results: dict[str, tuple[datetime | None, dict | None, list[dict]]] = {}
    summary = Summary(first.isoformat(), last.isoformat(), urls=len(wanted))
    in_flight: dict[Future, tuple[str, datetime]] = {}

    def collect(done: Iterable[Future]) -> None:
        for future in done:
            url, fetched_at = in_flight.pop(future)
            known = results.get(url)
            # An archive may hold a URL twice (a re-fetch): the newest page wins.
            if known is None or fetched_at >= known[0]:
                results[url] = (fetched_at, *future.result())

    pages = (page for page in iter_pages(sources) if page.url in wanted)
    with ThreadPoolExecutor(cfg.articles.workers, thread_name_prefix="process") as pool:
        for page in progress(pages, len(wanted), "articles"):
            # A bounded number of pages in flight keeps memory flat over a month of pages.
            if len(in_flight) >= 4 * cfg.articles.workers:
                collect(wait(in_flight, return_when=FIRST_COMPLETED).done)
            job = pool.submit(
                process_page, page, wanted[page.url], preset, cfg.articles.extract_timeout_s
            )
            in_flight[job] = (page.url, page.fetched_at)
        collect(wait(in_flight).done)
    summary.pages = len(results)
    for url, day in wanted.items():
        if url not in results:
            status = ledger.get(url, {}).get("status") or "not fetched"
            gone = _exclusion(
                url,
                day,
                preset.version,
                filter_name="fetch",
                reason=f"no page: {status}",
                value=status,
            )
            results[url] = (None, None, [gone])
    _write(cfg, first, last, results.values())
    rows = [row for _, row, _ in results.values() if row]
    dropped = Counter(
        e["filter"]
        for _, _, excluded in results.values()
        for e in excluded
        if e["level"] == "document"
    )
    summary.extracted = summary.pages - dropped["extraction"]
    summary.kept = len(rows)
    summary.documents = len({row["doc_id"] for row in rows})
    summary.removed = dict(dropped)
    return summary


def _write(cfg: Config, first: date, last: date, results: Iterable[tuple]) -> None:
    """One docs and one exclusions file per day of [first, last], replaced whole."""
    docs, exclusions = defaultdict(list), defaultdict(list)
    for _, row, excluded in results:
        if row:
            docs[row["date"]].append(row)
        for e in excluded:
            exclusions[e["date"]].append(e)
    root = DataRoot(cfg.data_root)
    for day in dates.days(first, last):
        day_docs = sorted(docs[day], key=lambda r: (r["url"], r["doc_id"]))
        day_ex = sorted(exclusions[day], key=lambda r: (r["url"], r["level"], r["paragraph"] or -1))
        docs_table = pa.Table.from_pylist(day_docs, schema=DOCS)
        write_parquet(docs_table, root.path(article("docs", day)) / PART)
        excluded_table = pa.Table.from_pylist(day_ex, schema=EXCLUSIONS)
        write_parquet(excluded_table, root.path(article("exclusions", day)) / PART)
