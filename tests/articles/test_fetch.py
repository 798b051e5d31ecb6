"""The article fetcher against scripted servers on loopback addresses (127.0.0.0/8 only)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import struct
import time
import tracemalloc
import zlib
from collections import Counter
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from gdelt_forecast.articles import fetch
from gdelt_forecast.articles.fetch import FetchSummary, fetch_urls, retry_after
from gdelt_forecast.articles.ledger import read_ledger
from gdelt_forecast.articles.process import preset_for, process_page
from gdelt_forecast.articles.robots import Rules, product_token
from gdelt_forecast.articles.warc import iter_pages, write_pages
from gdelt_forecast.ground.config import Config
from tests.articles.conftest import DAY, HTML, article_pages
from tests.articles.sites import HOSTS, NOTED_LATE_S, articles_settings, child, html, slow, status


def statuses(cfg: Config) -> dict[str, str]:
    return {url: row["status"] for url, row in read_ledger(cfg.data_root).items()}


# --- pages ------------------------------------------------------------------------------------


def test_html_page_is_stored_and_read_back_byte_for_byte(site, make_cfg):
    body = "<html><head><title>Zürich</title></head><body>Äpfel – 東京</body></html>".encode()
    plain = site.serve("/plain", html(body))
    zipped = site.serve("/zipped", html(gzip.compress(body), Content_Encoding="gzip"))
    cfg = make_cfg()
    summary = fetch_urls(cfg, [plain, zipped, plain])

    assert (summary.urls, summary.fetched, summary.requests) == (2, 2, 2)
    assert summary.bytes == 2 * len(body)
    assert site.headers[0]["User-Agent"] == cfg.articles.user_agent
    assert "gzip" in site.headers[0]["Accept-Encoding"]
    ledger = read_ledger(cfg.data_root)
    pages = {page.url: page for page in iter_pages(cfg.data_root)}
    assert set(pages) == {plain, zipped}
    for url, page in pages.items():
        row = ledger[url]
        assert page.body == body  # the zipped one is stored decoded
        assert (page.final_url, page.http_status) == (url, 200)
        assert page.content_type == "text/html; charset=utf-8"
        assert row["status"] == "fetched" and row["bytes"] == len(body)
        assert row["sha256"] == hashlib.sha256(body).hexdigest()
        assert row["fetched_at"] == page.fetched_at and row["attempts"] == 1
        # The ledger's file and offset lead straight to the page.
        with (cfg.data_root / row["warc_file"]).open("rb") as fh:
            fh.seek(row["warc_offset"])
            record = next(iter(ArchiveIterator(fh)))
            assert record.rec_headers.get_header("WARC-Target-URI") == url
            assert record.content_stream().read() == body
    # The same pages from the file itself; nothing half-written is left around.
    warcs = list((cfg.data_root / "articles/pages").iterdir())
    assert [w.name.endswith(".warc.gz") for w in warcs] == [True]
    assert [p.body for p in iter_pages(warcs)] == [body, body]
    assert not list((cfg.data_root / "articles/fetch_journal").glob("*.jsonl"))


def test_not_found_and_other_client_errors(site, make_cfg):
    urls = [site.serve("/gone", status(410)), site.serve("/no", status(403))]
    urls.append(site.base + "/missing")
    cfg = make_cfg()
    summary = fetch_urls(cfg, urls)
    ledger = read_ledger(cfg.data_root)
    assert [ledger[u]["status"] for u in urls] == ["not_found", "failed", "not_found"]
    assert [ledger[u]["http_status"] for u in urls] == [410, 403, 404]
    assert (summary.not_found, summary.failed, summary.requests) == (2, 1, 3)


def test_only_html_is_kept(site, make_cfg):
    pdf = site.serve("/a.pdf", html(b"%PDF-1.7", Content_Type="application/pdf"))
    xhtml = site.serve("/x", html(b"<html/>", Content_Type="application/xhtml+xml"))
    untyped = site.serve("/untyped", status(200, b"<html></html>"))
    cfg = make_cfg()
    fetch_urls(cfg, [pdf, xhtml, untyped])
    ledger = read_ledger(cfg.data_root)
    assert [ledger[u]["status"] for u in (pdf, xhtml, untyped)] == [
        "not_html",
        "fetched",
        "not_html",
    ]
    assert ledger[pdf]["error"] == "Content-Type application/pdf"
    assert ledger[untyped]["error"] == "Content-Type (none)"


def test_429_with_retry_after_then_success(site, make_cfg):
    url = site.serve("/busy", status(429, Retry_After="1"), html())
    cfg = make_cfg()
    t0 = time.monotonic()
    summary = fetch_urls(cfg, [url])
    assert time.monotonic() - t0 >= 0.9  # the server's Retry-After, not backoff_s (0 here)
    row = read_ledger(cfg.data_root)[url]
    assert (row["status"], row["attempts"], site.hits["/busy"]) == ("fetched", 2, 2)
    assert summary.requests == 2


def test_retry_after_over_the_limit_ends_retryable_and_a_rerun_tries_again(site, make_cfg):
    url = site.serve("/later", status(503, Retry_After="3600"), html())
    cfg = make_cfg("articles.max_retry_after_s=10")
    t0 = time.monotonic()
    fetch_urls(cfg, [url])
    assert time.monotonic() - t0 < 5
    row = read_ledger(cfg.data_root)[url]
    assert (row["status"], row["http_status"], site.hits["/later"]) == ("retryable", 503, 1)
    assert "Retry-After 3600 s over max_retry_after_s" in row["error"]

    summary = fetch_urls(cfg, [url])
    row = read_ledger(cfg.data_root)[url]
    assert (summary.skipped, row["status"], row["attempts"]) == (0, "fetched", 2)


def test_5xx_then_success_and_retries_running_out(site, make_cfg):
    healed = site.serve("/healed", status(500), status(502), html())
    broken = site.serve("/broken", status(500))
    cfg = make_cfg("articles.retries=2")
    summary = fetch_urls(cfg, [healed, broken])
    ledger = read_ledger(cfg.data_root)
    assert (ledger[healed]["status"], ledger[healed]["attempts"]) == ("fetched", 3)
    assert (ledger[broken]["status"], ledger[broken]["http_status"]) == ("retryable", 500)
    assert (site.hits["/healed"], site.hits["/broken"], summary.retryable) == (3, 3, 1)


def test_retry_after_values():
    assert retry_after("7") == 7.0
    assert retry_after(None) is None and retry_after("soon") is None
    assert 50 < retry_after(formatdate(time.time() + 60, usegmt=True)) <= 60
    assert retry_after(formatdate(time.time() - 60, usegmt=True)) == 0.0


def test_slow_server_hits_the_read_timeout(site, make_cfg):
    url = site.serve("/slow", slow(5, html()))
    cfg = make_cfg("articles.read_timeout_s=0.3", "articles.retries=0")
    t0 = time.monotonic()
    fetch_urls(cfg, [url])
    assert time.monotonic() - t0 < 2
    row = read_ledger(cfg.data_root)[url]
    assert row["status"] == "retryable" and "timed out" in row["error"]


def trickle(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.send_header("Content-Length", "100000")
    h.end_headers()
    while not h.server.site.stopping.wait(0.05):
        h.wfile.write(b"<p>" * 10)
        h.wfile.flush()


def test_a_server_trickling_bytes_hits_the_page_time_limit(site, make_cfg):
    url = site.serve("/trickle", trickle)
    cfg = make_cfg("articles.page_timeout_s=0.3", "articles.read_timeout_s=1", "articles.retries=0")
    t0 = time.monotonic()
    fetch_urls(cfg, [url])
    assert time.monotonic() - t0 < 2
    row = read_ledger(cfg.data_root)[url]
    assert row["status"] == "retryable" and "at the time limit" in row["error"]


def test_oversized_bodies_are_refused(site, make_cfg):
    big = b"<p>" + b"x" * 2_000_000
    declared = site.serve("/declared", html(big))
    # HTTP/1.0 without Content-Length: the body ends when the server closes.
    undeclared = site.serve("/undeclared", html(big, Content_Length=None))
    cfg = make_cfg("articles.max_bytes=1000000")
    summary = fetch_urls(cfg, [declared, undeclared])
    ledger = read_ledger(cfg.data_root)
    assert ledger[declared]["error"] == "Content-Length 2,000,003 over max_bytes"
    assert ledger[undeclared]["error"] == "body over 1,000,000 bytes decompressed"
    assert summary.too_large == 2 and summary.fetched == 0


def gzip_bomb(size: int) -> bytes:
    """``size`` zero bytes (a multiple of 1 MiB) as a valid gzip stream of about size/1000
    bytes. Each MiB is compressed as a fully flushed block, which decodes the same anywhere,
    so one compressed MiB is repeated instead of compressing the whole size."""
    mib = bytes(1 << 20)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = deflate.compress(mib) + deflate.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(size >> 20):
        crc = zlib.crc32(mib, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<II", crc, size & 0xFFFFFFFF)
    return header + block * (size >> 20) + deflate.flush() + trailer


def test_gzip_bomb_is_refused_without_inflating(site, make_cfg):
    assert gzip.decompress(gzip_bomb(4 << 20)) == bytes(4 << 20)
    bomb = gzip_bomb(1 << 30)  # 1 GiB of zeros in about 1 MB
    assert len(bomb) < 2_000_000
    url = site.serve("/bomb", html(bomb, Content_Encoding="gzip"))
    cfg = make_cfg("articles.max_bytes=1000000")
    fetch_urls(cfg, [site.serve("/warm-up", html())])  # first-use allocations out of the count
    tracemalloc.start()
    try:
        fetch_urls(cfg, [url])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    row = read_ledger(cfg.data_root)[url]
    assert (row["status"], row["error"]) == ("too_large", "body over 1,000,000 bytes decompressed")
    # About 2 MiB: the 1 MB cap plus 64 KiB pieces. Inflating each 8 KiB read whole would
    # already peak near 23 MiB, and the whole bomb at 1 GiB.
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.0f} MiB"


# --- redirects --------------------------------------------------------------------------------


def test_redirects_are_followed_and_each_hop_is_checked(site, site_at, make_cfg):
    outside = site_at("127.0.0.2")  # loopback, but not in allow_hosts
    target = outside.serve("/internal", html())
    page = site.serve("/page", html())
    moved = site.serve("/moved", status(301, Location="/page"))
    escape = site.serve("/escape", status(302, Location=target))
    loop = site.serve("/loop", status(302, Location="/loop"))
    cfg = make_cfg("articles.max_redirects=3")
    fetch_urls(cfg, [moved, escape, loop])

    ledger = read_ledger(cfg.data_root)
    assert (ledger[moved]["status"], ledger[moved]["final_url"]) == ("fetched", page)
    assert ledger[escape]["status"] == "refused" and ledger[escape]["final_url"] == target
    assert "127.0.0.2 is a loopback address" in ledger[escape]["error"]
    assert outside.hits == Counter()  # never connected to
    assert ledger[loop]["status"] == "failed" and ledger[loop]["error"] == "more than 3 redirects"
    assert site.hits["/loop"] == 4
    [stored] = iter_pages(cfg.data_root)
    assert (stored.url, stored.final_url) == (moved, page)


def test_urls_that_are_not_http_or_resolve_to_private_addresses(make_cfg):
    urls = ["ftp://example.com/a", "http://10.0.0.1/", "http://[::1]:9/", "not a url"]
    cfg = make_cfg()
    summary = fetch_urls(cfg, urls)
    assert set(statuses(cfg).values()) == {"refused"} and summary.refused == 4
    assert summary.requests == 0


# --- robots.txt -------------------------------------------------------------------------------


def test_robots_txt_is_honoured(site_at, make_cfg):
    ruled, down, none = (site_at(h) for h in HOSTS)
    ruled.serve(
        "/robots.txt", html(b"User-agent: *\nDisallow: /private\n", Content_Type="text/plain")
    )
    down.serve("/robots.txt", status(503))
    urls = [ruled.serve(p, html()) for p in ("/private/a", "/public", "/public2")]
    urls += [down.serve("/a", html()), none.serve("/a", html())]
    cfg = make_cfg("articles.robots=true", "articles.retries=0")
    summary = fetch_urls(cfg, urls)

    ledger = read_ledger(cfg.data_root)
    assert [ledger[u]["status"] for u in urls] == [
        "robots",
        "fetched",
        "fetched",
        "retryable",
        "fetched",
    ]
    assert ruled.hits == Counter({"/robots.txt": 1, "/public": 1, "/public2": 1})
    assert down.hits == Counter({"/robots.txt": 1})  # unreachable: nothing fetched for now
    assert none.hits == Counter({"/robots.txt": 1, "/a": 1})  # 404: everything allowed
    assert summary.robots_fetches == 3
    assert "HTTP 503" in ledger[urls[3]]["error"]


def test_host_names_pinned_by_articles_resolve_are_fetched_with_their_robots(site, make_cfg):
    site.serve(
        "/robots.txt", html(b"User-agent: *\nDisallow: /private\n", Content_Type="text/plain")
    )
    port = site.base.rsplit(":", 1)[1]
    urls = [
        site.serve(p, html()).replace("127.0.0.1", "news-7.sim.test") for p in ("/a", "/private/b")
    ]
    cfg = make_cfg("articles.robots=true", "articles.resolve={news-7.sim.test: 127.0.0.1}",
                   "articles.allow_hosts=[news-7.sim.test]")  # fmt: skip
    summary = fetch_urls(cfg, urls)
    assert statuses(cfg) == {urls[0]: "fetched", urls[1]: "robots"}
    assert summary.robots_fetches == 1 and site.hits == Counter({"/robots.txt": 1, "/a": 1})
    assert {h["Host"] for h in site.headers} == {f"news-7.sim.test:{port}"}
    # pinned, but not allowed: its loopback address is refused as a DNS answer would be
    other = site.serve("/c", html()).replace("127.0.0.1", "news-7.sim.test")
    cfg = make_cfg("articles.resolve={news-7.sim.test: 127.0.0.1}", "articles.allow_hosts=[]")
    fetch_urls(cfg, [other])
    assert statuses(cfg)[other] == "refused" and site.hits["/c"] == 0


def test_robots_txt_redirects_are_followed_and_checked(site_at, make_cfg):
    moved, escaping, outside = site_at(HOSTS[0]), site_at(HOSTS[1]), site_at("127.0.0.2")
    moved.serve("/robots.txt", status(301, Location="/rules.txt"))
    moved.serve("/rules.txt", html(b"User-agent: *\nDisallow: /x\n", Content_Type="text/plain"))
    escaping.serve("/robots.txt", status(302, Location=outside.serve("/robots.txt", status(404))))
    urls = [moved.serve("/x", html()), escaping.serve("/x", html())]
    cfg = make_cfg("articles.robots=true")
    fetch_urls(cfg, urls)
    ledger = read_ledger(cfg.data_root)
    assert [ledger[u]["status"] for u in urls] == ["robots", "fetched"]
    assert outside.hits == Counter()  # a refused hop means no robots.txt: allowed


def test_robots_rules_follow_rfc_9309():
    rules = Rules(
        "User-agent: other\nDisallow: /\n\n"
        "User-agent: gdelt-forecast\nDisallow: /news/\nAllow: /news/public\n"
        "Disallow: /*.pdf$\nDisallow: /*?print=\nAllow: /tie\nDisallow: /tie\n",
        product_token("gdelt-forecast/0.1 (research crawler)"),
    )
    assert rules.allows("/") and rules.allows("/world/x")
    assert not rules.allows("/news/2025/x") and rules.allows("/news/public/x")  # longest wins
    assert not rules.allows("/a/b.pdf") and rules.allows("/a/b.pdf.html")
    assert not rules.allows("/story?print=1") and rules.allows("/story?id=1&print=1")
    assert rules.allows("/tie")  # allow wins a tie
    assert not Rules("User-agent: *\nDisallow: /\n", "gdelt-forecast").allows("/x")
    assert Rules("User-agent: other\nDisallow: /\n", "gdelt-forecast").allows("/x")


# --- limits -----------------------------------------------------------------------------------


def test_per_host_and_global_limits(site_at, make_cfg):
    sites = [site_at(h) for h in HOSTS]
    urls = [s.serve(f"/{i}", slow(0.1, html())) for s in sites for i in range(6)]
    cfg = make_cfg("articles.per_host=2", "articles.concurrency=5")
    fetch_urls(cfg, urls)
    assert [s.max_active for s in sites] == [2, 2, 2]
    events = sorted(
        [(t, 1) for s in sites for t in s.starts] + [(t, -1) for s in sites for t in s.ends]
    )
    in_flight = [sum(step for _, step in events[: i + 1]) for i in range(len(events))]
    assert max(in_flight) <= 5


def test_per_host_delay_between_requests(site, make_cfg):
    urls = [site.serve(f"/{i}", html()) for i in range(3)]
    cfg = make_cfg("articles.per_host=2", "articles.per_host_delay_s=0.3")
    fetch_urls(cfg, urls)
    # Two slots, yet one request per interval: the delay is between the starts.
    gaps = [b - a for a, b in zip(site.starts, site.starts[1:], strict=False)]
    assert len(gaps) == 2 and min(gaps) >= 0.3 - NOTED_LATE_S


# --- resuming ---------------------------------------------------------------------------------


def test_rerun_fetches_nothing_settled(site, make_cfg):
    urls = [site.serve("/a", html()), site.serve("/b", status(404))]
    cfg = make_cfg()
    fetch_urls(cfg, urls)
    before = read_ledger(cfg.data_root)
    summary = fetch_urls(cfg, urls)
    assert (summary.skipped, summary.requests) == (2, 0)
    assert read_ledger(cfg.data_root) == before
    assert site.hits == Counter({"/a": 1, "/b": 1})


def test_interrupted_run_records_requests_in_flight_and_resume_fetches_nothing_twice(
    site_at, make_cfg, monkeypatch
):
    sites = [site_at(h) for h in HOSTS[:2]]
    urls = [s.serve(f"/{i}", slow(0.05, html())) for s in sites for i in range(8)]
    cfg = make_cfg("articles.concurrency=4", "articles.per_host=2")
    real_add, calls = fetch._Store.add, []

    def add_then_fail(store, out):
        real_add(store, out)
        calls.append(out.url)
        if len(calls) == 5:
            raise KeyboardInterrupt

    monkeypatch.setattr(fetch._Store, "add", add_then_fail)
    with pytest.raises(KeyboardInterrupt):
        fetch_urls(cfg, urls)
    monkeypatch.undo()
    done = statuses(cfg)
    assert len(done) > 5  # the requests in flight when it stopped were recorded too
    assert set(done.values()) == {"fetched"}

    summary = fetch_urls(cfg, urls)
    assert summary.skipped == len(done) and summary.fetched == len(urls) - len(done)
    assert all(s.hits == Counter({f"/{i}": 1 for i in range(8)}) for s in sites)
    assert len(list(iter_pages(cfg.data_root))) == len(urls)


_CHILD = """
import json, os, sys
from gdelt_forecast.articles import fetch
from gdelt_forecast.ground.config import load_config

args = json.loads(sys.argv[1])
real_add, seen = fetch._Store.add, []

def add(store, out):
    seen.append(out.url)
    if len(seen) == args["die_at"]:
        store.warcs.append(out.warc)  # the page reaches its WARC file ...
        os._exit(3)  # ... and the process dies before the journal line
    real_add(store, out)

fetch._Store.add = add
fetch.fetch_urls(load_config(None, args["set"], args["data_root"]), args["urls"])
"""


def test_killed_run_is_resumed_and_its_unjournaled_page_recovered(site, make_cfg):
    urls = [site.serve(f"/{i}", html(f"<p>page {i}</p>".encode())) for i in range(6)]
    cfg = make_cfg("articles.concurrency=1")
    args = {"set": articles_settings(cfg), "data_root": str(cfg.data_root), "urls": urls,
            "die_at": 3}  # fmt: skip
    run = child(_CHILD, json.dumps(args))
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == 3, stderr
    [unfinished] = (cfg.data_root / "articles/pages").glob(".*.warc.gz.open")
    with unfinished.open("ab") as fh:
        fh.write(gzip.compress(b"WARC/1.1\r\n" * 100)[:50])  # a record torn mid-write
    assert len(list((cfg.data_root / "articles/fetch_journal").glob("*.jsonl"))) == 1

    summary = fetch_urls(cfg, urls)
    assert summary.recovered == 1 and summary.skipped == 3 and summary.fetched == 3
    assert site.hits == Counter({f"/{i}": 1 for i in range(6)})
    ledger = read_ledger(cfg.data_root)
    assert [ledger[u]["status"] for u in urls] == ["fetched"] * 6
    bodies = {p.url: p.body for p in iter_pages(cfg.data_root)}
    assert bodies == {u: f"<p>page {i}</p>".encode() for i, u in enumerate(urls)}
    assert not list((cfg.data_root / "articles").rglob(".*.open"))


# --- reading other archives -------------------------------------------------------------------


def test_iter_pages_reads_a_foreign_warc(tmp_path):
    """A WARC as other crawlers write it: gzip content encoding and chunked transfer kept."""
    body = b"<html><body>archived</body></html>"
    zipped = gzip.compress(body)
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(zipped), zipped)
    for name, compress in (("other.warc.gz", True), ("other.warc", False)):
        buf = io.BytesIO()
        writer = WARCWriter(buf, gzip=compress)
        writer.write_record(writer.create_warcinfo_record(name, {"software": "other"}))
        headers = [
            ("Content-Type", "text/html"),
            ("Content-Encoding", "gzip"),
            ("Transfer-Encoding", "chunked"),
        ]
        writer.write_record(
            writer.create_warc_record(
                "https://news.example/a",
                "response",
                payload=io.BytesIO(chunked),
                http_headers=StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1"),
            )
        )
        (tmp_path / name).write_bytes(buf.getvalue())
    pages = list(iter_pages(tmp_path))  # a folder of WARC files
    assert [(p.url, p.final_url, p.http_status, p.body) for p in pages] == [
        ("https://news.example/a", "https://news.example/a", 200, body)
    ] * 2
    assert list(iter_pages(str(tmp_path / "other.warc")))[0].content_type == "text/html"


def test_write_pages_packages_pages_one_has(tmp_path):
    pages = {"https://news.example/a": "<p>Zürich</p>".encode(), "https://news.example/b": b"x"}
    warc = write_pages(tmp_path / "mine.warc.gz", pages)
    assert warc == tmp_path / "mine.warc.gz"
    assert gzip.decompress(warc.read_bytes()).startswith(b"WARC/1.1\r\n")
    read = list(iter_pages(warc))
    assert {p.url: p.body for p in read} == pages
    assert {(p.final_url == p.url, p.http_status, p.content_type) for p in read} == {
        (True, 200, "text/html; charset=utf-8")
    }
    plain = write_pages(tmp_path / "plain.warc.gz", {"https://x.example/": b"hi"}, "text/plain")
    assert [p.content_type for p in iter_pages(plain)] == ["text/plain"]


def test_summary_line_and_dict():
    summary = FetchSummary(urls=3, fetched=2, not_found=1, requests=3, bytes=2_500_000)
    assert summary.line().startswith("fetch: 3 URLs, 0 already done; 2 fetched, 1 not found,")
    assert summary.to_dict()["fetched"] == 2


# --- real pages, fetched then processed ---------------------------------------------------


def test_real_pages_served_locally_are_fetched_then_kept_or_excluded(site, make_cfg):
    articles = article_pages()
    urls = {key: site.serve(f"/news/{key[:12]}", html(body)) for key, (body, _) in articles.items()}
    kinds = {
        json.loads(line)["file"]: json.loads(line)["kind"]
        for line in (HTML / "index.jsonl").read_text().splitlines()
    }
    others = {name: site.serve(f"/{name}", html((HTML / name).read_bytes())) for name in kinds}
    cfg = make_cfg()
    summary = fetch_urls(cfg, [*urls.values(), *others.values()])
    assert summary.fetched == len(urls) + len(others) == 9

    preset = preset_for(cfg)
    outcome = {}
    for page in iter_pages(cfg.data_root):
        row, excluded = process_page(page, DAY, preset, cfg.articles.extract_timeout_s)
        outcome[page.url] = row or next(e for e in excluded if e["level"] == "document")
    for key, url in urls.items():
        assert articles[key][1][:60] in outcome[url]["text"]  # kept, with its article text
    for name, url in others.items():
        if kinds[name] == "article":
            assert outcome[url]["doc_id"]  # the two English pages of the HTML fixtures
        else:  # non-English, index and thin pages: all German or French
            assert outcome[url]["filter"] == "lang", (name, outcome[url])
            assert outcome[url]["reason"] in ("lang de != en", "lang fr != en")
