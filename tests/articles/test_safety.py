"""Address checks on hand-given addresses (nothing resolved, nothing connected), URL checks,
bounded decompression, and connections pinned to the checked address."""

from __future__ import annotations

import gzip
import shutil
import socket
import ssl
import subprocess
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import urllib3

from gdelt_forecast.articles import safety
from gdelt_forecast.articles.safety import (
    PinnedClient,
    Refused,
    Target,
    TooLarge,
    Undecodable,
    Unresolvable,
    check_addresses,
    read_capped,
    resolve_and_check,
    split_url,
)

UA = "gdelt-forecast/test"


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),
        ("224.0.0.1", "multicast"),
        ("::1", "loopback"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("127.0.0.1", "loopback"),
        ("127.0.0.2", "loopback"),
        ("240.0.0.1", "reserved"),
        ("100.64.0.1", "non-global"),  # carrier-grade NAT
        ("::ffff:10.0.0.1", "private"),  # IPv4-mapped
        ("64:ff9b::a9fe:a9fe", "link-local"),  # NAT64 of 169.254.169.254
        ("2002:c0a8:101::1", "private"),  # 6to4 of 192.168.1.1
        ("fc00::1", "private"),
    ],
)
def test_non_public_addresses_are_refused(address, kind):
    reason = check_addresses("news.example", [address], allow_hosts=[])
    assert reason is not None and f"a {kind} address" in reason and address in reason


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"])
def test_public_addresses_pass(address):
    assert check_addresses("news.example", [address], allow_hosts=[]) is None


def test_one_bad_address_among_good_ones_refuses_the_host():
    reason = check_addresses("news.example", ["93.184.216.34", "10.0.0.1"], allow_hosts=[])
    assert reason is not None and "10.0.0.1" in reason


def test_allow_hosts_lets_a_named_host_or_literal_through():
    assert check_addresses("127.0.0.1", ["127.0.0.1"], ["127.0.0.1"]) is None
    assert check_addresses("Mirror.Local.", ["10.1.2.3"], ["mirror.local"]) is None
    assert check_addresses("::1", ["::1"], ["[::1]"]) is None
    # Listing one loopback address does not open the others, nor names resolving to it.
    assert check_addresses("127.0.0.2", ["127.0.0.2"], ["127.0.0.1"]) is not None
    assert check_addresses("evil.example", ["127.0.0.1"], ["127.0.0.1"]) is not None


def test_no_address_or_garbage_is_refused():
    assert "no address" in check_addresses("news.example", [], [])
    assert "not an IP address" in check_addresses("news.example", ["nonsense"], [])


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/a",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "data:text/html,x",
        "/rel",
    ],
)
def test_only_http_and_https(url):
    with pytest.raises(Refused, match="is not http or https"):
        split_url(url)


@pytest.mark.parametrize("url", ["http:///path", "http://example.com:99999/", "http://[::1/"])
def test_malformed_urls_are_refused(url):
    with pytest.raises(Refused):
        split_url(url)


def test_split_url_normalises_host_and_encodes_the_path():
    assert split_url("HTTPS://Bücher.Example./a b?q=ü#frag") == (
        "https",
        "xn--bcher-kva.example",
        443,
        "/a%20b?q=%C3%BC",
    )
    assert split_url("http://[::1]:8080")[1:] == ("::1", 8080, "/")


@pytest.fixture
def fake_dns(monkeypatch):
    """getaddrinfo answering from a dict; IP literals are answered as the OS would, locally."""
    answers: dict[str, list[str] | int] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host not in answers:
            # AI_NUMERICHOST: a name not listed fails here instead of reaching a resolver.
            return real(host, port, *args, **{**kwargs, "flags": socket.AI_NUMERICHOST})
        answer = answers[host]
        if isinstance(answer, int):
            raise socket.gaierror(answer, "fake resolver error")
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in answer
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers


def test_resolve_then_decide(fake_dns):
    fake_dns["news.example"] = ["93.184.216.34", "93.184.216.35"]
    fake_dns["intranet.example"] = ["93.184.216.34", "192.168.1.1"]
    target = resolve_and_check("http://news.example/x?y=1", allow_hosts=[])
    assert target.addresses == ("93.184.216.34", "93.184.216.35")
    assert (target.host, target.port, target.path) == ("news.example", 80, "/x?y=1")
    with pytest.raises(Refused, match="192.168.1.1, a private address"):
        resolve_and_check("https://intranet.example/", allow_hosts=[])
    with pytest.raises(Refused, match="127.0.0.2 is a loopback address"):
        resolve_and_check("http://127.0.0.2:8080/", allow_hosts=["127.0.0.1"])


def test_resolver_failures_say_whether_to_retry(fake_dns):
    fake_dns["gone.example"] = socket.EAI_NONAME
    fake_dns["flaky.example"] = socket.EAI_AGAIN
    with pytest.raises(Unresolvable) as gone:
        resolve_and_check("http://gone.example/", [])
    with pytest.raises(Unresolvable) as flaky:
        resolve_and_check("http://flaky.example/", [])
    assert not gone.value.temporary and flaky.value.temporary


# --- bounded decompression -------------------------------------------------------------------


class _Resp:
    """What read_capped needs of a urllib3 response: headers and raw reads."""

    def __init__(self, raw: bytes, encoding: str = "", piece: int = 1000):
        self.headers = {"Content-Encoding": encoding} if encoding else {}
        self._raw, self._piece = raw, piece
        self.streamed = 0

    def read1(self, amt: int, decode_content: bool) -> bytes:
        assert decode_content is False
        chunk = self._raw[self.streamed : self.streamed + min(amt, self._piece)]
        self.streamed += len(chunk)
        return chunk


def test_read_capped_decodes_gzip_members_deflate_and_identity():
    text = b"<p>news</p>" * 5000
    assert read_capped(_Resp(text), 10**6) == text
    two_members = gzip.compress(text[:100]) + gzip.compress(text[100:])
    assert read_capped(_Resp(two_members, "gzip"), 10**6) == text
    assert read_capped(_Resp(zlib.compress(text), "deflate"), 10**6) == text
    # Junk after the end of a gzip body is ignored, as browsers do.
    assert read_capped(_Resp(gzip.compress(text) + b"\0\0junk", "x-gzip"), 10**6) == text


def test_read_capped_stops_past_the_cap_without_inflating_the_rest():
    bomb = gzip.compress(bytes(50 * 2**20), compresslevel=9)  # 50 MiB of zeros, ~50 KB
    resp = _Resp(bomb, "gzip", piece=1024)
    with pytest.raises(TooLarge):
        read_capped(resp, max_bytes=100_000)
    assert resp.streamed < len(bomb) / 10
    assert len(read_capped(_Resp(bomb, "gzip"), 100_000, truncate=True)) == 100_000


@pytest.mark.parametrize(
    ("raw", "encoding", "message"),
    [
        (b"x", "br", "unsupported Content-Encoding"),
        (b"x", "gzip, gzip", "unsupported Content-Encoding"),
        (b"not gzip at all", "gzip", "corrupt compressed body"),
        # mtime=0: the header's time is in the test's id, which every xdist worker must agree on
        (gzip.compress(b"<p>cut</p>" * 100, mtime=0)[:-20], "gzip", "ends early"),
    ],
)
def test_read_capped_refuses_what_it_cannot_decode(raw, encoding, message):
    with pytest.raises(Undecodable, match=message):
        read_capped(_Resp(raw, encoding), 10**6)


# --- pinned connections ----------------------------------------------------------------------


class _Echo(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's naming)
        body = f"host={self.headers['Host']} ua={self.headers['User-Agent']}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def echo_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _get(client: PinnedClient, target: Target) -> bytes:
    resp = client.get(target)
    try:
        return read_capped(resp, 10_000)
    finally:
        safety.release(resp, read_all=True)


def test_requests_go_to_the_checked_address_not_a_new_dns_answer(echo_server, fake_dns):
    port = echo_server.server_address[1]
    # The name now resolves to a public address: a client that resolved again would go there.
    fake_dns["pinned.example"] = ["93.184.216.34"]
    target = Target(
        f"http://pinned.example:{port}/", "http", "pinned.example", port, ("127.0.0.1",), "/"
    )
    client = PinnedClient(UA, (2, 2), pools=4, per_pool=2)
    assert _get(client, target) == f"host=pinned.example:{port} ua={UA}".encode()
    client.close()


def test_the_next_checked_address_is_tried_when_one_refuses(echo_server):
    port = echo_server.server_address[1]
    # Nothing listens on 127.0.0.5 at this port: the connection is refused locally.
    target = Target("http://x/", "http", "x.example", port, ("127.0.0.5", "127.0.0.1"), "/")
    client = PinnedClient(UA, (2, 2), pools=4, per_pool=2)
    assert _get(client, target).startswith(b"host=x.example:")
    client.close()


@pytest.fixture
def tls_files(tmp_path):
    if not shutil.which("openssl"):
        pytest.skip("openssl command not available")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=pinned.example"]
        + ["-addext", "subjectAltName=DNS:pinned.example"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


def test_https_is_pinned_but_keeps_sni_and_certificate_checks(tls_files, fake_dns):
    cert, key = tls_files
    names: list[str | None] = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda sock, name, ctx: names.append(name)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    port = server.server_address[1]
    fake_dns["pinned.example"] = ["93.184.216.34"]
    client = PinnedClient(UA, (2, 2), pools=4, per_pool=2, ca_certs=str(cert))
    try:
        good = Target(
            "https://pinned.example/", "https", "pinned.example", port, ("127.0.0.1",), "/"
        )
        assert _get(client, good).startswith(b"host=pinned.example:")
        assert names == ["pinned.example"]
        # The certificate names pinned.example: a host it does not cover fails verification.
        other = Target(
            "https://other.example/", "https", "other.example", port, ("127.0.0.1",), "/"
        )
        with pytest.raises(urllib3.exceptions.SSLError):
            client.get(other)
    finally:
        client.close()
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_pinned_hosts_skip_dns_but_not_the_address_check(fake_dns):
    pinned = {"News-1.Sim.Test.": "127.0.0.1"}  # names compare as hosts do
    target = resolve_and_check("http://news-1.sim.test:8080/a", ["news-1.sim.test"], pinned)
    assert (target.addresses, target.host, target.port) == (("127.0.0.1",), "news-1.sim.test", 8080)
    with pytest.raises(Refused, match="news-1.sim.test resolves to 127.0.0.1, a loopback"):
        resolve_and_check("http://news-1.sim.test/a", [], pinned)
    fake_dns["other.example"] = ["93.184.216.34"]  # hosts it does not name still ask DNS
    assert resolve_and_check("http://other.example/", [], pinned).addresses == ("93.184.216.34",)
