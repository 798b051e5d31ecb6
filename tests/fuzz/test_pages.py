"""A fetched page's way in, property-tested: any bytes under any declared charset (a header's
or a ``<meta>``'s, real codec names, Python-only codecs, garbage, absurdly long) decode,
extract and clean to a result or a documented error, never an exception, and every text
that comes out (body, title, date, error, header values) is well-formed: no lone surrogate,
NUL or control character but tab, newline and carriage return, so Parquet and JSON take it.

Real pages (tests/fixtures/articles and tests/fixtures/html) are mutated: bytes spliced in,
re-encoded, a ``<meta charset>`` put in front."""

from __future__ import annotations

import gzip
import io
import json
from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gdelt_forecast.articles.extract import Extracted, _codec, _decode, extract_now
from gdelt_forecast.articles.process import preset_for, process_page
from gdelt_forecast.articles.warc import Page, iter_pages
from gdelt_forecast.contract.documents import DOCS, EXCLUSIONS
from gdelt_forecast.ground.config import load_config
from tests.fuzz.strategies import CHARACTERS, TEXT, assert_wellformed

pytestmark = pytest.mark.fuzz


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PAGES = [gzip.decompress(p.read_bytes()) for p in sorted((FIXTURES / "articles").glob("*.gz"))]
PAGES += [(FIXTURES / "html" / name).read_bytes() for name in ("1.html", "5.html", "6.html")]
# Labels a header or <meta> may carry: WHATWG ones, ones browsers refuse (utf-7), ones only
# Python knows (bytes-to-bytes codecs, idna, the escapes, "undefined"), and nonsense.
LABELS = (
    "utf-8", "UTF8", " utf-8 ", "utf-16", "utf-16le", "utf-16be", "utf-32", "utf-7",
    "x-user-defined", "iso-8859-1", "latin1", "us-ascii", "windows-1252", "windows-1251",
    "shift_jis", "euc-jp", "iso-2022-jp", "gb18030", "gbk", "big5", "koi8-r", "euc-kr",
    "utf-8-sig", "replacement", "mbcs", "rot13", "hex", "base64", "zlib", "bz2", "uu",
    "quopri", "idna", "punycode", "undefined", "unicode_escape", "raw_unicode_escape",
    "charmap", "", " ", "\x00", "utf\x008", "ütf-8", "../../etc/passwd", "a" * 100_000,
)  # fmt: skip
CHARSETS = st.one_of(
    st.none(),
    st.sampled_from(LABELS),
    TEXT,
    st.builds(
        lambda s, n: s * n, st.text(CHARACTERS, min_size=1, max_size=5), st.integers(1, 50_000)
    ),
)
# Codecs a real page could be in, to re-encode a real page with.
ENCODINGS = ("utf-8", "utf-16", "utf-16-le", "utf-32", "utf-7", "cp1252", "shift_jis", "koi8-r")
KINDS = ("empty", "too_large", "bad_gzip", "no_text", "timeout", "crashed")


def splice(page: bytes, at: float, data: bytes) -> bytes:
    i = int(at * len(page))
    return page[:i] + data + page[i:]


def reencode(page: bytes, encoding: str) -> bytes:
    return page.decode("utf-8", "replace").encode(encoding, "replace")


def with_meta(page: bytes, label: str | None) -> bytes:
    return b'<meta charset="' + (label or "").encode("utf-8", "surrogatepass") + b'">' + page


# By index: a failing example then names the page, not its 50 kB.
REAL = st.integers(0, len(PAGES) - 1).map(lambda i: PAGES[i])
BODIES = st.one_of(
    st.binary(max_size=600),
    st.builds(splice, REAL, st.floats(0, 1), st.binary(min_size=1, max_size=200)),
    st.builds(
        lambda page, at, text: splice(page, at, text.encode("utf-8", "surrogatepass")),
        REAL,
        st.floats(0, 1),
        TEXT,
    ),
    st.builds(reencode, REAL, st.sampled_from(ENCODINGS)),
    st.builds(with_meta, st.builds(reencode, REAL, st.sampled_from(ENCODINGS)), CHARSETS),
)


def assert_result(result: Extracted) -> None:
    assert isinstance(result, Extracted)
    # "exception" is documented too, but decoding and extraction raise for no input: an
    # exception here is a bug, a label or byte the module should have handled.
    assert result.error is None or result.error.split(":")[0] in KINDS, result.error
    assert result.error is not None or result.text
    for value in (result.title, result.text, result.date, result.error):
        assert_wellformed(value)


@given(data=st.one_of(st.binary(max_size=2_000), BODIES), charset=CHARSETS)
@example(data=b"\xff\\ud800 \x00", charset="unicode_escape")
@example(data=b"\xff<p>a</p>", charset="rot13")
@example(data=b"\xff<p>a</p>", charset="undefined")
@example(data=b"\xff<p>a</p>", charset="\x00")
@example(data=b'\xff<meta charset="hex">', charset=None)
@example(data=b"\xe9+2AA-", charset="utf-7")
def test_any_bytes_under_any_charset_decode_to_wellformed_text(data: bytes, charset):
    text = _decode(data, charset)
    assert isinstance(text, str)
    assert_wellformed(text)


@given(label=st.one_of(st.sampled_from(LABELS), TEXT))
@example(label="\ud800")
@example(label="\x00")
@example(label="rot13")
def test_a_charset_label_names_a_text_codec_or_none(label: str):
    codec = _codec(label)
    if codec is not None:
        b"<p>abc</p>".decode(codec, "replace")  # a text codec: bytes to str


@given(data=BODIES, charset=CHARSETS)
@example(data=b"\xff<title>a\x00\x85b</title><p>" + b"word \x01 " * 200, charset="unicode_escape")
@example(data=b"<title>&#1;&#xD800;&#x80;&#0;</title><p>&#1;&#xD800;&#x80;&#0;</p>", charset=None)
@example(data=b"\xff" + PAGES[0], charset="rot13")
@example(data=b"\xff" + PAGES[0], charset="\x00")
def test_any_page_extracts_to_wellformed_fields_or_a_documented_error(data: bytes, charset):
    assert_result(extract_now(data, "https://news.example/a", charset))


@given(html=TEXT)
@example(html="<title>\ud800\x00</title><p>" + "a\x1b[2J word " * 200 + "</p>")
def test_text_given_as_str_extracts_like_bytes(html: str):
    assert_result(extract_now(html))


# --- the process step: a WARC's page to rows Parquet takes -------------------------------


def write_both(row: dict | None, excluded: list[dict]) -> None:
    tables = [pa.Table.from_pylist(excluded, schema=EXCLUSIONS)]
    if row is not None:
        tables.append(pa.Table.from_pylist([row], schema=DOCS))
    for table in tables:
        pq.write_table(table, io.BytesIO())
    json.dumps([row, excluded], default=str, ensure_ascii=False).encode("utf-8")


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    return preset_for(load_config(None, [], tmp_path_factory.mktemp("data")))


CONTENT_TYPES = st.one_of(
    TEXT, st.builds(lambda label: f"text/html; charset={label}", st.one_of(TEXT, CHARSETS))
)


@given(body=BODIES, content_type=CONTENT_TYPES)
@example(body=PAGES[0], content_type="text/html; charset=\ud800")
@example(body=b"\xff" + PAGES[0], content_type="text/html; charset=rot13")
def test_a_page_becomes_rows_parquet_and_json_can_write(preset, body: bytes, content_type: str):
    page = Page(
        url="https://news.example/a",
        final_url="https://news.example/a",
        fetched_at=None,  # not read by process_page
        http_status=200,
        content_type=content_type,
        body=body,
    )
    row, excluded = process_page(page, date(2025, 8, 7), preset, 30.0)
    assert row is not None or excluded
    for record in [row or {}, *excluded]:
        for value in record.values():
            if isinstance(value, str):
                assert_wellformed(value)
    write_both(row, excluded)


# --- header values as stored: a WARC's headers read back, a server's headers fetched -------

WARC_TEMPLATE = (
    b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: %s\r\n"
    b"WARC-Date: 2025-08-07T22:00:00Z\r\nWARC-Record-ID: <urn:uuid:%s>\r\n"
    b"Content-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n"
)
HEADER_VALUE = st.binary(min_size=1, max_size=80).map(
    lambda b: b.replace(b"\r", b"").replace(b"\n", b"").strip() or b"x"
)


@given(uri=HEADER_VALUE, content_type=HEADER_VALUE)
@example(uri=b"https://news.example/\x00\x1b[2J", content_type=b"text/html; charset=\x85\xff\x00")
def test_header_values_read_from_a_warc_are_wellformed(tmp_path_factory, uri, content_type):
    http = b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\n\r\n<p>x</p>" % content_type
    record = WARC_TEMPLATE % (uri, b"12345678-1234-1234-1234-123456789012", len(http), http)
    path = tmp_path_factory.mktemp("warc") / "hostile.warc"
    path.write_bytes(record)
    for page in iter_pages(path):
        for value in (page.url, page.final_url, page.content_type):
            assert_wellformed(value)


def test_header_values_a_server_sends_are_stored_wellformed(tmp_path):
    """The fetcher's ledger row keeps the Content-Type header, and a redirect's Location as
    the final URL: each mended where it enters."""
    from gdelt_forecast.articles.fetch import fetch_urls
    from gdelt_forecast.articles.ledger import read_ledger
    from tests.articles.sites import HOSTS, Site, html, status

    site = Site("127.0.0.1")
    try:
        hostile = "text/html; charset=\x85\x1b[2J\x7futf-8"
        url = site.serve("/hostile", html(Content_Type=hostile))
        moved = site.serve("/moved", status(302, Location="/next\x00\x1b[2J\x85"))
        cfg = load_config(
            None,
            [
                f"articles.allow_hosts=[{', '.join(HOSTS)}]",
                "articles.per_host_delay_s=0",
                "articles.retries=0",
                "articles.robots=false",
            ],
            tmp_path / "data",
        )
        fetch_urls(cfg, [url, moved])
        ledger = read_ledger(cfg.data_root)
        assert ledger[url]["status"] == "fetched"
        assert ledger[url]["content_type"] == "text/html; charset=\ufffd\ufffd[2J\ufffdutf-8"
        for row in ledger.values():
            for value in row.values():
                if isinstance(value, str):
                    assert_wellformed(value)
        # The WARC keeps the header as sent (warcio writes a non-ASCII one RFC 5987-encoded).
        for page in iter_pages(cfg.data_root):
            assert_wellformed(page.content_type)
    finally:
        site.stop()
