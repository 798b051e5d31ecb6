"""Where the fetcher may connect and how much it may read: every URL and byte comes from strangers.

- Only http and https URLs; a host is refused when ANY address it resolves to is loopback,
  private, link-local, multicast, reserved, unspecified or otherwise not global, unless the
  host is listed in ``articles.allow_hosts`` (how tests and local mirrors reach 127.0.0.1).
- Connections go to the address that was checked (``PinnedClient``): urllib3 is given the IP
  and the host name travels only in the Host header and, for https, in SNI and certificate
  verification. A DNS answer that changes between the check and the connect (rebinding)
  therefore cannot steer a request to an internal address.
- Bodies are decompressed by ``read_capped`` in bounded pieces and reading stops as soon as
  the cap is passed, so a decompression bomb never inflates in memory.
"""

from __future__ import annotations

import ipaddress
import socket
import time
import zlib
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import certifi
import urllib3
from requests.utils import requote_uri

SCHEMES = {"http": 80, "https": 443}
_PIECE = 64 * 1024  # bytes read from the socket, and most bytes one inflate step may produce
# NAT64 (RFC 6052) routes 64:ff9b::a.b.c.d to the IPv4 address a.b.c.d.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class Refused(Exception):
    """A URL the fetcher must not request; the message says why in one line."""


class Unresolvable(Exception):
    """The host has no address; ``temporary`` when the resolver may answer later."""

    def __init__(self, message: str, temporary: bool):
        super().__init__(message)
        self.temporary = temporary


class TooLarge(Exception):
    """The decompressed body passed the cap."""


class TooSlow(Exception):
    """The body was still arriving at the deadline."""


class Undecodable(Exception):
    """A Content-Encoding that is not supported, or a compressed body that is corrupt."""


@dataclass(frozen=True)
class Target:
    """A checked URL: where its request goes (``addresses``) and what it names (``host``)."""

    url: str
    scheme: str
    host: str  # lower case, IDNA-encoded, IPv6 without brackets
    port: int
    addresses: tuple[str, ...]  # every one checked; tried in the resolver's order
    path: str  # request target: path and query, percent-encoded

    @property
    def host_header(self) -> str:
        name = f"[{self.host}]" if ":" in self.host else self.host
        return name if self.port == SCHEMES[self.scheme] else f"{name}:{self.port}"

    @property
    def origin(self) -> tuple[str, str, int]:
        return self.scheme, self.host, self.port


def _normal_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    if isinstance(ip, ipaddress.IPv4Address):
        return None
    if ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip.sixtofour:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _blocked_kind(ip: IPAddress) -> str | None:
    """What kind of non-public address ``ip`` is ("private address"), or None if global."""
    inner = _embedded_ipv4(ip)
    if inner is not None and (kind := _blocked_kind(inner)):
        return f"{kind} (IPv4 {inner} inside)"
    for kind, flag in (
        ("loopback", ip.is_loopback),
        ("unspecified", ip.is_unspecified),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
        ("non-global", not ip.is_global),
    ):
        if flag:
            return f"{kind} address"
    return None


def check_addresses(
    host: str, addresses: Iterable[str], allow_hosts: Collection[str]
) -> str | None:
    """Why ``host`` resolving to ``addresses`` must not be fetched, or None when it may be.

    Pure: it decides on the addresses it is given and never resolves or connects."""
    if _normal_host(host) in {_normal_host(h) for h in allow_hosts}:
        return None
    addresses = list(addresses)
    if not addresses:
        return f"{host}: no address"
    for text in addresses:
        try:
            # getaddrinfo writes IPv6 scope ids as fe80::1%eth0.
            ip = ipaddress.ip_address(text.split("%", 1)[0])
        except ValueError:
            return f"{host}: {text!r} is not an IP address"
        if kind := _blocked_kind(ip):
            where = f"{host} is" if _normal_host(host) == text else f"{host} resolves to {text},"
            return f"{where} a {kind} (not in articles.allow_hosts)"
    return None


def split_url(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, request path) of an http(s) URL; Refused for anything else."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise Refused(f"malformed URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise Refused(f"scheme {scheme or '(none)'!r} is not http or https")
    if not parts.hostname:
        raise Refused("URL has no host")
    try:
        host = _normal_host(parts.hostname).encode("idna").decode("ascii")
    except UnicodeError:
        raise Refused(f"host {parts.hostname!r} is not a valid name") from None
    path = requote_uri(parts.path or "/") + (f"?{requote_uri(parts.query)}" if parts.query else "")
    return scheme, host, port or SCHEMES[scheme], path


def resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        temporary = exc.errno == socket.EAI_AGAIN
        raise Unresolvable(f"cannot resolve {host}: {exc.strerror}", temporary) from None
    except UnicodeError:
        raise Unresolvable(f"cannot resolve {host}: invalid name", temporary=False) from None
    # Keep the resolver's order (its preference) without repeats.
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def resolve_and_check(
    url: str, allow_hosts: Collection[str], pinned: Mapping[str, object] | None = None
) -> Target:
    """Resolve the URL's host (``pinned`` answers for the hosts it names, as
    ``articles.resolve``) and check every address; Refused or Unresolvable if not fit."""
    scheme, host, port, path = split_url(url)
    answers = {_normal_host(name): str(address) for name, address in (pinned or {}).items()}
    addresses = [answers[host]] if host in answers else resolve(host, port)
    if reason := check_addresses(host, addresses, allow_hosts):
        raise Refused(reason)
    return Target(url, scheme, host, port, tuple(addresses), path)


class _Stamped:
    """A connection that notes when its last request's bytes were written (``sent_at``, by
    ``time.monotonic``): the host reads them a network's latency later, so the next request
    to it is spaced from this moment, not from when the turn was given (the process may stall
    in between) nor from when the answer ended (a slow host's answer time is not owed).
    urllib3 has no hook between sending a request and reading its answer; this is one."""

    sent_at: float | None = None

    def request(self, *args, **kwargs) -> None:
        self.sent_at = None  # a request that fails midway was not sent
        super().request(*args, **kwargs)
        self.sent_at = time.monotonic()


class _HTTPConnection(_Stamped, urllib3.connection.HTTPConnection):
    pass


class _HTTPSConnection(_Stamped, urllib3.connection.HTTPSConnection):
    pass


class _HTTPPool(urllib3.HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


def sent_at(resp: urllib3.BaseHTTPResponse) -> float | None:
    """When the request ``resp`` answers was written (``time.monotonic``), if known."""
    return getattr(resp.connection, "sent_at", None)


class PinnedClient:
    """GET requests sent to a Target's checked address, never to a fresh DNS answer.

    Pools are keyed by address (and, for https, by host name, which sets SNI and the name
    the certificate must match). No proxy is used: a proxy would connect on our behalf to
    whatever its own DNS says."""

    def __init__(
        self,
        user_agent: str,
        timeout: tuple[float, float],
        pools: int,
        per_pool: int,
        ca_certs: str | None = None,
    ):
        self._headers = {
            "User-Agent": user_agent,
            "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1",
            # Only what read_capped can inflate with a bound.
            "Accept-Encoding": "gzip, deflate",
        }
        self._timeout = urllib3.Timeout(connect=timeout[0], read=timeout[1])
        self._manager = urllib3.PoolManager(
            num_pools=pools,
            maxsize=per_pool,
            block=False,
            cert_reqs="CERT_REQUIRED",
            ca_certs=ca_certs or certifi.where(),
        )
        self._manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}

    @property
    def request_headers(self) -> dict[str, str]:
        return dict(self._headers)

    def pool(self, target: Target, address: str) -> urllib3.HTTPConnectionPool:
        extra = {"server_hostname": target.host} if target.scheme == "https" else None
        return self._manager.connection_from_host(
            address, target.port, target.scheme, pool_kwargs=extra
        )

    def get(self, target: Target) -> urllib3.BaseHTTPResponse:
        """Send the request to the first checked address that accepts a connection; the
        caller reads the body (``read_capped``) and calls ``release``. Raises urllib3's
        errors for connection problems and timeouts."""
        *others, last = target.addresses
        for address in others:
            try:
                return self._send(target, address)
            except urllib3.exceptions.ConnectTimeoutError:  # NewConnectionError included
                continue
        return self._send(target, last)

    def _send(self, target: Target, address: str) -> urllib3.BaseHTTPResponse:
        return self.pool(target, address).urlopen(
            "GET",
            target.path,
            headers={**self._headers, "Host": target.host_header},
            redirect=False,
            retries=False,
            preload_content=False,
            decode_content=False,
            assert_same_host=False,
            timeout=self._timeout,
        )

    def close(self) -> None:
        self._manager.clear()


def release(resp: urllib3.BaseHTTPResponse, read_all: bool) -> None:
    """Hand the connection back; one whose body was not read to the end is closed first,
    since the next request on it would read the rest of this body as its answer."""
    if not read_all:
        resp.close()
    resp.release_conn()


class _Inflater:
    """Streaming gzip / deflate decoding in pieces of at most _PIECE bytes."""

    def __init__(self, coding: str):
        # 32 + MAX_WBITS accepts a zlib or gzip header: some servers label one as the other.
        self._wbits = 16 + zlib.MAX_WBITS if coding in ("gzip", "x-gzip") else 32 + zlib.MAX_WBITS
        self._zlib = zlib.decompressobj(self._wbits)

    def feed(self, data: bytes) -> Iterator[bytes]:
        while True:
            try:
                out = self._zlib.decompress(data, _PIECE)
            except zlib.error as exc:
                raise Undecodable(f"corrupt compressed body: {exc}") from None
            if out:
                yield out
            data = self._zlib.unconsumed_tail
            if self._zlib.eof:
                # gzip allows members back to back; other bytes after the end are junk that
                # browsers ignore, and so do we.
                data = self._zlib.unused_data
                if not data.startswith(b"\x1f\x8b"):
                    return
                self._zlib = zlib.decompressobj(self._wbits)
            elif not data and len(out) < _PIECE:
                return

    def finish(self) -> None:
        if not self._zlib.eof:
            raise Undecodable("compressed body ends early")


def _inflater(content_encoding: str) -> _Inflater | None:
    codings = [c.strip().lower() for c in content_encoding.split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if not codings:
        return None
    if len(codings) > 1 or codings[0] not in ("gzip", "x-gzip", "deflate"):
        raise Undecodable(f"unsupported Content-Encoding {content_encoding!r}")
    return _Inflater(codings[0])


def read_capped(
    resp: urllib3.BaseHTTPResponse,
    max_bytes: int,
    truncate: bool = False,
    deadline: float | None = None,
) -> bytes:
    """The decoded body, read piece by piece. Past ``max_bytes`` decoded bytes: TooLarge,
    or with ``truncate`` the first ``max_bytes``. Never holds more than the cap plus one
    piece, however well the body compresses. Past ``deadline`` (time.monotonic): TooSlow,
    since the read timeout alone lets a server that trickles bytes hold on for hours."""
    inflater = _inflater(resp.headers.get("Content-Encoding", ""))
    body = bytearray()
    # read1: one socket read per call, so the deadline is checked however slowly bytes come.
    while raw := resp.read1(_PIECE, decode_content=False):
        if deadline is not None and time.monotonic() > deadline:
            raise TooSlow(f"body still arriving after {len(body):,} bytes at the time limit")
        for piece in inflater.feed(raw) if inflater else (raw,):
            body += piece
            if len(body) > max_bytes:
                if truncate:
                    return bytes(body[:max_bytes])
                raise TooLarge(f"body over {max_bytes:,} bytes decompressed")
    if inflater:
        inflater.finish()
    return bytes(body)
