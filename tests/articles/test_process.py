"""The article stage end to end on real pages: kept articles, excluded pages with their
reasons, every source URL accounted for, duplicates collapsed, and the warehouse tables."""

import hashlib
import json
import shutil
from datetime import datetime

import pyarrow.parquet as pq
import pytest

from gdelt_forecast.articles.ledger import settle_finished_runs
from gdelt_forecast.articles.process import (
    ArticlesError,
    doc_id,
    mirai_abstract,
    preset_for,
    process,
    process_page,
)
from gdelt_forecast.articles.warc import _OPEN, Page, write_pages
from gdelt_forecast.cli import main
from gdelt_forecast.contract.documents import FILTERS
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.duck import open_warehouse
from gdelt_forecast.warehouse.build import build_database
from tests.articles.conftest import DAY, HTML, article_pages, quad_urls


def docs(cfg):
    return pq.read_table(cfg.data_root / "articles/docs/date=2025-08-07/part-0.parquet")


def exclusions(cfg):
    path = cfg.data_root / "articles/exclusions/date=2025-08-07/part-0.parquet"
    return pq.read_table(path).to_pylist()


@pytest.fixture
def archive(database, tmp_path):
    """Articles on the first three source URLs, German and French pages on the next two."""
    urls = quad_urls(database)
    articles = article_pages()
    pages = {url: body for url, (body, _) in zip(urls, articles.values(), strict=False)}
    pages[urls[3]] = (HTML / "2.html").read_bytes()  # non-English (de)
    pages[urls[4]] = (HTML / "4.html").read_bytes()  # thin, client-side rendered (fr)
    firsts = {url: first for url, (_, first) in zip(urls, articles.values(), strict=False)}
    return write_pages(tmp_path / "pages.warc.gz", pages), urls, firsts


def test_articles_kept_pages_excluded_every_url_accounted_for(database, archive):
    warc, urls, firsts = archive
    summary = process(database, DAY, DAY, [warc])
    assert (summary.urls, summary.pages, summary.kept, summary.documents) == (len(urls), 5, 3, 3)
    assert summary.removed == {"lang": 2, "fetch": len(urls) - 5}

    kept = {row["url"]: row for row in docs(database).to_pylist()}
    assert set(kept) == set(urls[:3])
    for url, row in kept.items():
        assert firsts[url][:60] in row["text"]
        assert row["doc_id"] == doc_id(row["text"])
        assert row["url_md5"] == hashlib.md5(url.encode()).hexdigest()
        assert row["abstract"] == mirai_abstract(row["title"], row["text"])
        assert row["lang"] == "en" and row["lang_score"] >= 0.8 and row["words"] >= 10
        assert row["preset"] == "mirai-v1"

    removed = {e["url"]: e for e in exclusions(database) if e["level"] == "document"}
    assert removed[urls[3]]["reason"] == "lang de != en"
    assert removed[urls[4]]["reason"] == "lang fr != en"
    assert removed[urls[3]]["filter"] == "lang" and removed[urls[3]]["value"] == "de"
    assert removed[urls[5]]["reason"] == "no page: not fetched"
    assert (removed[urls[5]]["filter"], removed[urls[5]]["value"]) == ("fetch", "not fetched")
    assert set(kept) | set(removed) == set(urls) and not set(kept) & set(removed)


def test_the_fetched_pages_are_read_from_the_files_the_ledger_names(database, archive):
    """A month's process reads the WARC files its URLs' ledger rows name, not every file of
    the history: a file no row names (another run's, or planted) is not opened, and a newer
    page of a URL in it does not replace the ledger's."""
    warc, urls, firsts = archive
    pages = DataRoot(database.data_root).pages
    pages.mkdir(parents=True)
    # A run that died with its WARC open and its journal empty: settling the ledger recovers
    # each of its pages as fetched, in the file it is sealed into.
    shutil.copyfile(warc, pages / f".run1-00001.warc.gz{_OPEN}")
    DataRoot(database.data_root).fetch_journal.mkdir(parents=True)
    (DataRoot(database.data_root).fetch_journal / "run1.jsonl").touch()
    assert settle_finished_runs(database.data_root) == 5
    body, _ = list(article_pages().values())[1]
    write_pages(pages / "planted-00001.warc.gz", {urls[0]: body})  # newer, named by no row
    (pages / "garbage-00001.warc.gz").write_bytes(b"not a WARC file")

    summary = process(database, DAY, DAY)
    assert (summary.pages, summary.kept) == (5, 3)
    kept = {row["url"]: row["text"] for row in docs(database).to_pylist()}
    assert firsts[urls[0]][:60] in kept[urls[0]]


def test_obelics_preset_removes_paragraphs_and_records_them(database, archive):
    warc, urls, _ = archive
    cfg = load_config(
        None, ["events.min_daily_mentions=1", "articles.preset=obelics"], database.data_root
    )
    summary = process(cfg, DAY, DAY, [warc])
    assert summary.removed["no paragraph kept"] == 2
    paragraphs = [e for e in exclusions(cfg) if e["level"] == "paragraph"]
    german = [e for e in paragraphs if e["url"] == urls[3]]
    assert german and all(e["preset"] == "obelics-v1" for e in german)
    assert "stopwords" in {e["filter"] for e in german}  # English stop words, German text
    for e in german:
        assert e["text"] and e["reason"].startswith(f"{e['filter']} ")
        assert e["value"] is not None


def test_exclusion_rows_name_the_filter_its_value_and_the_reason(tmp_path):
    # The German page under OBELICS, pinned: these rows are what the exclusions hold. The
    # value is whole, the reason shows it short.
    preset = preset_for(load_config(None, [], tmp_path), "obelics")
    url = "https://news.example/2"
    page = Page(url, url, datetime(2025, 8, 7), 200, "text/html", (HTML / "2.html").read_bytes())
    row, excluded = process_page(page, DAY, preset, 30.0)
    assert row is None
    assert [
        (e["level"], e["paragraph"], e["filter"], e["value"], e["reason"]) for e in excluded
    ] == [
        (
            "paragraph",
            0,
            "special_characters",
            "0.3333333333333333",
            "special_characters 0.3333 > 0.3",
        ),
        ("paragraph", 1, "words", "2", "words 2 < 4"),
        ("paragraph", 2, "stopwords", "0.04", "stopwords 0.04 < 0.3"),
        ("paragraph", 3, "words", "3", "words 3 < 4"),
        ("paragraph", 4, "words", "1", "words 1 < 4"),
        ("paragraph", 5, "stopwords", "0.0", "stopwords 0 < 0.3"),
        ("document", None, "no paragraph kept", None, "no paragraph kept"),
    ]
    assert excluded[1]["text"] == "24. März 2004, 19:49 | Genesis" and excluded[-1]["text"] is None
    assert {(e["url"], e["date"], e["preset"]) for e in excluded} == {(url, DAY, "obelics-v1")}


def test_rerun_is_identical_and_duplicates_collapse_in_the_warehouse(database, archive, tmp_path):
    warc, urls, _ = archive
    process(database, DAY, DAY, [warc])
    first = (database.data_root / "articles/docs/date=2025-08-07/part-0.parquet").read_bytes()
    process(database, DAY, DAY, [warc])
    assert (
        database.data_root / "articles/docs/date=2025-08-07/part-0.parquet"
    ).read_bytes() == first

    body, _ = next(iter(article_pages().values()))
    twice = write_pages(tmp_path / "twice.warc.gz", {urls[0]: body, urls[6]: body})
    process(database, DAY, DAY, [twice])
    rows = docs(database).to_pylist()
    assert len(rows) == 2 and rows[0]["doc_id"] == rows[1]["doc_id"]
    summary = build_database(database)
    assert summary.news == 1
    with open_warehouse(database) as con:
        linked = con.execute("SELECT count(DISTINCT quad_id) FROM quad_docs").fetchone()[0]
        quads_of_urls = con.execute(
            "SELECT count(DISTINCT quad_id) FROM quad_urls WHERE url IN (?, ?)", [urls[0], urls[6]]
        ).fetchone()[0]
        assert linked == quads_of_urls
        n_docs = con.execute("SELECT sum(n_docs), max(n_docs) FROM quads").fetchone()
        assert n_docs == (quads_of_urls, 1)


def test_process_needs_pages(database):
    with pytest.raises(ArticlesError, match="no pages under"):
        process(database, DAY, DAY)


def test_explain_prints_every_filter_value(capsys):
    assert main(["articles", "explain", str(HTML / "5.html"), str(HTML / "2.html")]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    english, german = lines
    assert english["kept"] is True and english["reason"] is None
    assert english["title"].startswith("Colder Temperatures Forecast")
    names = list(FILTERS)  # the paragraph filters first, then the two of the language
    assert set(names) <= set(english["document"])
    assert all(set(names[:7]) <= set(p) and "kept" in p for p in english["paragraphs"])
    assert (german["kept"], german["reason"], german["document"]["lang"]) == (
        False,
        "lang de != en",
        "de",
    )
    assert main(["articles", "explain", str(HTML / "2.html"), "--preset", "obelics"]) == 0
    obelics = json.loads(capsys.readouterr().out)
    assert obelics["reason"] == "no paragraph kept"
    assert all(not p["kept"] for p in obelics["paragraphs"])
