"""WARC files: the pages we fetch, and the web archives the article stage reads.

Our own files live under ``<data_root>/articles/pages/``, named ``<run>-<n>.warc.gz``: WARC
1.1, one gzip member per record, a warcinfo record first, then a response and a request
record per fetched page. The response payload is the decoded body (Content-Encoding and
Transfer-Encoding removed from its headers, Content-Length set to the decoded size), so any
WARC reader sees the bytes the ledger's sha256 names. The response carries
``GDELT-Forecast-Source-URI``: the URL asked for, before redirects. A file being written is
named ``.<run>-<n>.warc.gz.open`` and renamed once closed; one a dead run left open is cut
after its last complete gzip member (``seal``). A run starts a new file past
``WARC_MAX_BYTES``.

``iter_pages`` reads every HTTP response of these or of any web archive's WARC (or ARC)
files, gzipped or not; ``write_pages`` packages pages one already has as a WARC file. A
page's URLs and Content-Type come out well-formed (:mod:`gdelt_forecast.ground.wellformed`,
boundary ``page``): another archive's headers may hold NUL or control characters, which
the documents' Parquet and a terminal should never see.
"""

from __future__ import annotations

import io
import os
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.recordbuilder import RecordBuilder
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeaders
from warcio.timeutils import datetime_to_iso_date, iso_date_to_datetime
from warcio.warcwriter import WARCWriter

from gdelt_forecast import __version__
from gdelt_forecast.ground.data_root import PAGES, DataRoot
from gdelt_forecast.ground.wellformed import wellformed

SOURCE_HEADER = "GDELT-Forecast-Source-URI"
WARC_MAX_BYTES = 1 << 30  # the customary WARC file size
WARC_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")
_OPEN = ".open"
_DROPPED_HEADERS = frozenset({"content-encoding", "transfer-encoding", "content-length"})
_BUILDER = RecordBuilder(warc_version="1.1")


@dataclass(frozen=True)
class Page:
    """One HTTP response from a WARC file."""

    url: str  # the URL asked for (before redirects, when the WARC says so)
    final_url: str
    fetched_at: datetime
    http_status: int
    content_type: str
    body: bytes


# --- writing ----------------------------------------------------------------------------------


def _gzip_member(record: ArcWarcRecord) -> bytes:
    """One record as one gzip member. warcio would compress at level 9; level 6 is several
    times faster for about the same size."""
    buf = io.BytesIO()
    WARCWriter(buf, gzip=False, warc_version="1.1").write_record(record)
    packer = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return packer.compress(buf.getvalue()) + packer.flush()


def response_records(
    url: str,
    body: bytes,
    *,
    status: str = "200 OK",
    headers: Iterable[tuple[str, str]] = (),
    protocol: str = "HTTP/1.1",
    source_url: str | None = None,
    fetched_at: datetime | None = None,
    request: tuple[str, Iterable[tuple[str, str]]] | None = None,
) -> bytes:
    """The response record of ``body``, the decoded body of ``url`` (asked for as
    ``source_url``, before redirects), then, given ``request`` (its request line and
    headers), its request record: each record one gzip member. The HTTP headers lose
    Content-Encoding, Transfer-Encoding and Content-Length and get the body's length.
    Compression runs outside the GIL, so fetch workers build their records in parallel."""
    moment = (fetched_at or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None)
    date = datetime_to_iso_date(moment, use_micros=True)
    kept = [(k, v) for k, v in headers if k.lower() not in _DROPPED_HEADERS]
    kept.append(("Content-Length", str(len(body))))
    response = _BUILDER.create_warc_record(
        url,
        "response",
        payload=io.BytesIO(body),
        length=len(body),
        http_headers=StatusAndHeaders(status, kept, protocol=protocol),
        warc_headers_dict={"WARC-Date": date, SOURCE_HEADER: source_url or url},
    )
    if request is None:
        return _gzip_member(response)
    line, request_headers = request
    request_record = _BUILDER.create_warc_record(
        url,
        "request",
        http_headers=StatusAndHeaders(line, list(request_headers), is_http_request=True),
        warc_headers_dict={
            "WARC-Date": date,
            "WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID"),
        },
    )
    return _gzip_member(response) + _gzip_member(request_record)


def write_pages(
    path: Path, pages: Mapping[str, bytes], content_type: str = "text/html; charset=utf-8"
) -> Path:
    """Write ``pages`` (body by URL) to ``path`` as a gzipped WARC file: one response record
    per URL, HTTP 200 with ``content_type``. The article stage reads it like any archive
    (``articles.archives``)."""
    path = Path(path)
    now = datetime.now(UTC)
    with path.open("wb") as fh:
        for url, body in pages.items():
            headers = [("Content-Type", content_type)]
            fh.write(response_records(url, body, headers=headers, fetched_at=now))
    return path


class RunWarcs:
    """The WARC files of one fetch run, ``<run>-<n>.warc.gz`` under ``articles/pages``."""

    def __init__(self, data_root: Path, run: str, user_agent: str, robots: bool):
        self._run, self._user_agent, self._robots = run, user_agent, robots
        self._pages = DataRoot(data_root).pages
        self._pages.mkdir(parents=True, exist_ok=True)
        self._warc: io.BufferedWriter | None = None
        self._name = ""
        self._files = 0

    def append(self, records: bytes) -> tuple[str, int]:
        """Write ``records`` (gzip members) and flush them; return the file (relative to
        data_root) and the offset they start at."""
        if self._warc is None or self._warc.tell() >= WARC_MAX_BYTES:
            self._close_warc()
            self._open_warc()
        assert self._warc is not None
        offset = self._warc.tell()
        self._warc.write(records)
        # Flushed before the journal line, so a line never names a record still in a buffer.
        self._warc.flush()
        return f"{PAGES}/{self._name}", offset

    def _open_warc(self) -> None:
        self._files += 1
        self._name = f"{self._run}-{self._files:05d}.warc.gz"
        self._warc = (self._pages / f".{self._name}{_OPEN}").open("xb")
        info = _BUILDER.create_warcinfo_record(
            self._name,
            {
                "software": f"gdelt-forecast/{__version__} (warcio)",
                "http-header-user-agent": self._user_agent,
                "robots": "obey" if self._robots else "ignore",
                "format": "WARC File Format 1.1",
                "conformsTo": "https://iipc.github.io/warc-specifications/specifications/"
                "warc-format/warc-1.1/",
            },
        )
        self._warc.write(_gzip_member(info))

    def _close_warc(self) -> None:
        if self._warc is None:
            return
        self._warc.flush()
        os.fsync(self._warc.fileno())
        self._warc.close()
        self._warc = None
        os.replace(self._pages / f".{self._name}{_OPEN}", self._pages / self._name)

    def close(self) -> None:
        self._close_warc()


# --- files a dead run left open ---------------------------------------------------------------


def unfinished_files(data_root: Path, run: str) -> list[Path]:
    """The WARC files run ``run`` left open, in order."""
    return sorted(DataRoot(data_root).pages.glob(f".{run}-*.warc.gz{_OPEN}"))


def _complete_members_end(path: Path) -> int:
    """The offset just past the last complete gzip member of ``path``."""
    end = offset = 0
    unzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            data = chunk
            while data:
                try:
                    unzip.decompress(data)  # our own records: each at most max_bytes and headers
                except zlib.error:
                    return end
                if not unzip.eof:
                    offset += len(data)
                    break
                offset += len(data) - len(unzip.unused_data)
                end, data = offset, unzip.unused_data
                unzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
    return end


def seal(path: Path) -> tuple[str, int]:
    """Finish the open file ``path``: cut it after its last complete gzip member and give it
    its final name, or delete it when no member is complete. Return its final file
    (relative to data_root) and the offset of the cut (0: deleted)."""
    name = path.name[1 : -len(_OPEN)]
    end = _complete_members_end(path)
    if end == 0:
        path.unlink()
    else:
        with path.open("r+b") as fh:
            fh.truncate(end)
            os.fsync(fh.fileno())
        os.replace(path, path.with_name(name))
    return f"{PAGES}/{name}", end


# --- reading ----------------------------------------------------------------------------------


def _warc_date(value: str) -> datetime:
    return iso_date_to_datetime(value).replace(tzinfo=UTC)


def _page(record: ArcWarcRecord) -> Page | None:
    """The Page of an HTTP response record; None for any other record."""
    if record.rec_type != "response" or record.http_headers is None:
        return None
    final_url = wellformed(record.rec_headers.get_header("WARC-Target-URI") or "", "page")
    try:
        status = int(record.http_headers.get_statuscode())
    except (TypeError, ValueError):
        return None
    return Page(
        url=wellformed(record.rec_headers.get_header(SOURCE_HEADER) or final_url, "page"),
        final_url=final_url,
        fetched_at=_warc_date(record.rec_headers.get_header("WARC-Date")),
        http_status=status,
        content_type=wellformed(record.http_headers.get_header("Content-Type") or "", "page"),
        # Decodes chunked transfer and gzip content encoding that other archives keep.
        body=record.content_stream().read(),
    )


def pages_with_offsets(path: Path) -> Iterator[tuple[int, Page]]:
    """Each page of the WARC file ``path`` with the offset of its response record."""
    with path.open("rb") as fh:
        records = ArchiveIterator(fh)
        for record in records:
            if page := _page(record):
                yield records.get_record_offset(), page


def warc_paths(source: str | Path | Iterable[str | Path]) -> list[Path]:
    """The WARC files ``source`` names: a data root (its articles/pages), a folder holding
    WARC or ARC files, a file, or several of these."""
    found: list[Path] = []
    for item in [source] if isinstance(source, str | Path) else source:
        path = Path(item)
        if not path.is_dir():
            found.append(path)
            continue
        folder = path / PAGES
        folder = folder if folder.is_dir() else path
        found += sorted(
            f
            for f in folder.iterdir()
            if f.name.endswith(WARC_SUFFIXES) and not f.name.startswith(".") and f.is_file()
        )
    return found


def iter_pages(source: str | Path | Iterable[str | Path]) -> Iterator[Page]:
    """Every HTTP response in the WARC (or ARC) files of ``source`` (see ``warc_paths``),
    gzipped or not, ours or any web archive's, in file order."""
    for path in warc_paths(source):
        with path.open("rb") as fh:
            for record in ArchiveIterator(fh, arc2warc=True):
                if page := _page(record):
                    yield page
