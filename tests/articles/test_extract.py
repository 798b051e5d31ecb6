"""Article extraction: real pages give their text and title; bad input and slow pages give an
error, never an exception; the time limit holds in worker threads."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gdelt_forecast.articles import extract as extract_module
from gdelt_forecast.articles.extract import PARAGRAPH_SEP, Extracted, extract, extract_now

HTML = Path(__file__).resolve().parents[1] / "fixtures" / "html"
INDEX = {
    row["file"]: row
    for row in map(json.loads, (HTML / "index.jsonl").read_text(encoding="utf-8").splitlines())
}
ARTICLES = ["5.html", "6.html"]
FILLER = " ".join(["This sentence is here so that the page reads like a real article."] * 12)


def page(title: str, body: str, head: str = "") -> str:
    return (
        f"<html><head>{head}<title>{title}</title></head><body><article><h1>{title}</h1>"
        f"{body}</article></body></html>"
    )


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("name", ARTICLES)
def test_article_text_holds_the_expected_snippets(name):
    entry = INDEX[name]
    result = extract((HTML / name).read_bytes(), url=entry["url"])
    assert result.error is None
    assert result.title
    assert entry["expected_snippets"]
    for snippet in entry["expected_snippets"]:
        assert snippet in flat(result.text)
    # paragraphs apart by one blank line, never more
    assert PARAGRAPH_SEP in result.text
    assert "\n\n\n" not in result.text
    assert result.date is None or re.fullmatch(r"\d{4}-\d{2}-\d{2}", result.date)


def test_gzipped_page_gives_the_same_result():
    data = (HTML / "6.html").read_bytes()
    assert extract(gzip.compress(data)) == extract(data)


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"", "empty"),
        (b"   \n ", "empty"),
        (bytes(range(256)) * 40, "no_text"),
        (b"\x1f\x8b\x08\x00garbage", "bad_gzip"),
        (gzip.compress(b"<html>", mtime=0)[:-6], "bad_gzip"),
    ],
)
def test_bad_input_gives_an_error_not_an_exception(data, kind):
    result = extract(data)
    assert result.text is None
    assert result.error.startswith(f"{kind}: ")


def test_oversized_page_is_refused(monkeypatch):
    monkeypatch.setattr(extract_module, "MAX_HTML_BYTES", 1000)
    big = page("Big", f"<p>{FILLER}</p>" * 5).encode()
    assert extract_now(big).error.startswith("too_large: ")
    assert extract_now(gzip.compress(big)).error.startswith("too_large: ")


def test_time_limit_gives_an_error_and_the_next_page_still_works():
    data = (HTML / "6.html").read_bytes()
    slow = extract(data, timeout_s=1e-4)
    assert slow == Extracted(error="timeout: no result after 0.0001 s")
    assert extract(data).error is None


def test_time_limit_holds_in_worker_threads():
    data = (HTML / "5.html").read_bytes()
    with ThreadPoolExecutor(3) as pool:
        quick = list(pool.map(lambda _: extract(data), range(3)))
        slow = list(pool.map(lambda _: extract(data, timeout_s=1e-4), range(3)))
    assert all(r == quick[0] and r.error is None for r in quick)
    assert all(r.error.startswith("timeout: ") for r in slow)


def test_a_dead_idle_worker_is_replaced():
    data = (HTML / "5.html").read_bytes()
    expected = extract(data)
    worker = extract_module._pool.acquire()
    worker.process.kill()
    worker.process.wait()
    extract_module._pool.release(worker)
    assert extract(data) == expected


def test_a_worker_dying_mid_page_gives_an_error(monkeypatch):
    pool = extract_module._Pool()
    worker = pool.acquire()
    worker.process.kill()
    worker.process.wait()
    monkeypatch.setattr(pool, "acquire", lambda: worker)
    monkeypatch.setattr(extract_module, "_pool", pool)
    result = extract((HTML / "5.html").read_bytes())
    assert result == Extracted(error="crashed: extraction worker exited with code -9")


def test_a_worker_that_cannot_start_gives_an_error(monkeypatch):
    monkeypatch.setattr(extract_module, "_pool", extract_module._Pool())
    monkeypatch.setattr(sys, "executable", shutil.which("false"))
    result = extract((HTML / "5.html").read_bytes())
    assert result.error == (
        "exception: no extraction worker: RuntimeError: extraction worker did not start"
        " (exit code 1)"
    )


def test_declared_charsets_decode_legacy_pages():
    body = f"<p>Le café « crème » coûte deux euros. {FILLER}</p>"
    html = page("Café", body, '<meta charset="iso-8859-1">')
    # latin-1 is read as windows-1252, as browsers do: byte 0x80 is the euro sign
    legacy = html.encode("cp1252").replace(b"deux euros", b"2 \x80")
    result = extract_now(legacy)
    assert "Le café « crème » coûte 2 €." in result.text
    # a charset from the HTTP header is used when the page declares none
    cyrillic = page("Новости", f"<p>Новости дня: погода хорошая. {FILLER}</p>").encode("cp1251")
    assert "Новости дня" in extract_now(cyrillic, charset="windows-1251").text


def test_paragraph_repeating_the_title_is_dropped():
    result = extract_now(page("A Headline", f"<p>{FILLER}</p><p>Second paragraph. {FILLER}</p>"))
    assert result.title == "A Headline"
    assert result.text.startswith("This sentence")
    assert result.text.count(PARAGRAPH_SEP) == 1
