"""Title, main text and publish date of one HTML page, with trafilatura, under a time limit.

Extraction options (tuned on the 181 pages of the article-extraction benchmark with its own
metric, ``bench/stages/extraction.py``; figures in docs/benchmarks.md):

- first pass: ``favor_precision=True`` with trafilatura's fallback extractors on
  (``fast=False``: its readability and jusText comparisons), tables kept, comments dropped;
  precision mode cuts related-link lists, teasers and bylines that the balanced mode keeps;
- second pass, balanced mode, only when the first gives less than ``SHORT_TEXT`` characters:
  precision mode now and then keeps a scrap (a reprint notice) instead of the article; the
  second result wins when it is at least ``SECOND_PASS_GAIN`` times longer, so a short page
  whose short text is right stays as it is;
- a first paragraph that repeats the title is dropped: the title is a field of its own.
- trafilatura's ``deduplicate`` stays off: its cache is global to the process, so a page's
  text would depend on the pages extracted before it in the same worker.

Text layout: paragraphs (trafilatura's block elements: paragraphs, headings, lists, quotes,
tables) are separated by a blank line (``PARAGRAPH_SEP``); a line break inside a paragraph
(``<br>``), a list item or a table row is a single newline. Splitting on blank lines gives
paragraphs (the OBELICS rule), splitting on newlines and dropping empty strings gives lines
(the MIRAI rule).

Time limit: every extraction runs in a worker process (``python -c``, talking over a socket
pair), one per concurrent caller, reused from page to page. The caller waits ``timeout_s``
for the answer; past it the worker is killed and a new one replaces it. Signals only work in
the main thread, and an abandoned thread would keep burning a core (and the GIL) on a runaway
page, so a process is the one thing that both stops the work and can be used from worker
threads. It also contains crashes and memory blow-ups of lxml on hostile HTML, and
extractions called from several threads run in parallel instead of taking turns on the GIL.
A worker's start-up (about 0.3 s of imports) is not counted against a page's limit. A plain
subprocess rather than ``multiprocessing``: it works from daemonic processes too (such as
``multiprocessing.Pool`` workers) and never re-imports the caller's ``__main__``.

Failures never raise: ``Extracted.error`` is ``"<kind>: <detail>"`` with kind one of
``empty``, ``too_large``, ``bad_gzip``, ``no_text``, ``timeout``, ``crashed``, ``exception``.
A declared charset that names no codec a page can be in (garbage, a bytes-to-bytes codec
such as ``rot13``, a Python-only one such as ``unicode_escape``) is ignored, as browsers
ignore an unknown label, and detection decides.

Text is well-formed (:mod:`gdelt_forecast.ground.wellformed`, boundary ``page``) where it enters:
the decoded HTML, before lxml parses it, and every field of the result once more, the text
that is stored (a character reference such as ``&#x7f;`` names a control character, which
only trafilatura's own cleaning keeps out of the text today).
"""

from __future__ import annotations

import codecs
import gzip
import io
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from dataclasses import astuple, dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import trafilatura
from lxml.etree import Element
from trafilatura.utils import decode_file
from trafilatura.xml import xmltotxt

from gdelt_forecast.ground.wellformed import count_mended, mended, wellformed

# trafilatura's own default cap (MAX_FILE_SIZE); a decompressed page past it is not an article.
MAX_HTML_BYTES = 20_000_000
SHORT_TEXT = 500
SECOND_PASS_GAIN = 2
PARAGRAPH_SEP = "\n\n"

_COMMON: dict[str, Any] = {
    "include_comments": False,
    "include_tables": True,
    "fast": False,
    "deduplicate": False,
    "with_metadata": True,
}
FIRST_PASS: dict[str, Any] = {**_COMMON, "favor_precision": True}
SECOND_PASS: dict[str, Any] = {**_COMMON, "favor_precision": False}

_GZIP_MAGIC = b"\x1f\x8b"
# The WHATWG prescan looks at the first 1024 bytes; real pages put the tag later than that.
_META_CHARSET = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.I)
_SNIFF_BYTES = 4096
# Text codecs of Python's that are no page's charset (WHATWG Encoding names none of them):
# they decode any bytes to garbage (the escapes even to NUL and lone surrogates) or fail.
_NOT_CHARSETS = frozenset(
    {"idna", "punycode", "undefined", "unicode-escape", "raw-unicode-escape", "utf-7", "charmap"}
)
_WORDS = re.compile(r"\w+")
# trafilatura's block elements, and the raw HTML ones its fallback extractors leave in place
_TRAFILATURA_BLOCKS = {"p", "head", "list", "quote", "table", "code", "graphic"}
_HTML_BLOCKS = {"h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "dl", "blockquote", "pre", "figure"}
_BLOCKS = _TRAFILATURA_BLOCKS | _HTML_BLOCKS
# Inline elements: trafilatura's, and raw HTML ones; any other element is a container.
_INLINE = {"hi", "ref", "lb", "del"} | {
    *("a", "abbr", "b", "bdi", "bdo", "br", "cite", "data", "dfn", "em", "font", "i", "img"),
    *("kbd", "mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u"),
    *("var", "wbr"),
}
_STARTUP_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Extracted:
    title: str | None = None
    text: str | None = None
    date: str | None = None  # ISO date, YYYY-MM-DD
    error: str | None = None


def extract(
    html: bytes | str, url: str | None = None, timeout_s: float = 30.0, charset: str | None = None
) -> Extracted:
    """Extract one page (HTML as bytes, gzipped bytes or text) within ``timeout_s`` seconds.

    ``charset`` is the one an HTTP Content-Type header declared, if any. Thread-safe.
    """
    try:
        worker = _pool.acquire()
    except Exception as exc:  # recorded, never raised: the module's contract
        return Extracted(error=f"exception: no extraction worker: {type(exc).__name__}: {exc}")
    try:
        worker.conn.send((html, url, charset))
        if not worker.conn.poll(timeout_s):
            worker.kill()
            return Extracted(error=f"timeout: no result after {timeout_s:g} s")
        result, mended_there = worker.conn.recv()
    except (EOFError, OSError):  # the worker died: a crash in lxml, or killed for memory
        code = worker.exitcode()
        worker.kill()
        return Extracted(error=f"crashed: extraction worker exited with code {code}")
    except Exception as exc:  # such as an argument that cannot be pickled
        worker.kill()
        return Extracted(error=f"exception: {type(exc).__name__}: {exc}")
    _pool.release(worker)
    count_mended(mended_there)
    return result


def extract_now(html: bytes | str, url: str | None = None, charset: str | None = None) -> Extracted:
    """``extract`` in the calling thread, without a time limit (what a worker runs)."""
    try:
        result = _extract(html, url, charset)
    except Exception as exc:  # recorded, never raised: the module's contract
        result = Extracted(error=f"exception: {type(exc).__name__}: {exc}")
    return _wellformed(result)


def _wellformed(result: Extracted) -> Extracted:
    """Every text of ``result`` written as is to Parquet and JSON: well-formed."""
    return Extracted(
        *(None if value is None else wellformed(value, "page") for value in astuple(result))
    )


def _extract(html: bytes | str, url: str | None, charset: str | None) -> Extracted:
    if isinstance(html, bytes) and html.startswith(_GZIP_MAGIC):
        try:
            html = _gunzip(html)
        except (OSError, EOFError, zlib.error) as exc:
            return Extracted(error=f"bad_gzip: {exc}")
    if len(html) > MAX_HTML_BYTES:
        return Extracted(error=f"too_large: over {MAX_HTML_BYTES} bytes")
    text_html = _decode(html, charset) if isinstance(html, bytes) else wellformed(html, "page")
    if not text_html.strip():
        return Extracted(error="empty: no HTML")

    first = trafilatura.bare_extraction(text_html, url=url, **FIRST_PASS)
    best, best_text = first, _paragraphs(first)
    if len(best_text) < SHORT_TEXT:
        second = trafilatura.bare_extraction(text_html, url=url, **SECOND_PASS)
        second_text = _paragraphs(second)
        if len(second_text) >= SECOND_PASS_GAIN * max(len(best_text), 1):
            best, best_text = second, second_text
    title = (best.title or None) if best is not None else None
    date = (best.date or None) if best is not None else None
    if not best_text:
        return Extracted(title=title, date=date, error="no_text: trafilatura found no main text")
    return Extracted(title=title, text=best_text, date=date)


def _paragraphs(document: Any) -> str:
    """The body as text, one paragraph per block, without a leading copy of the title."""
    if document is None or document.body is None:
        return ""
    blocks = [text for unit in _units(document.body) if (text := xmltotxt(unit, False).strip())]
    if blocks and document.title and _words(blocks[0]) == _words(document.title):
        blocks = blocks[1:]
    return PARAGRAPH_SEP.join(blocks)


def _units(element: Any) -> Iterator[Any]:
    """The elements to render as one paragraph each, in document order: blocks, and runs of
    text and inline elements. Other elements are containers to descend into (trafilatura's
    fallback extractors return raw ``<div>`` trees, and loose text can sit between blocks);
    rendering a whole container as one paragraph would lose its paragraph breaks. Moves
    inline children into new ``<p>`` runs: the tree is the caller's to spend."""
    if element.tag in _BLOCKS or not len(element):
        yield element
        return
    run = Element("p")
    run.text = element.text
    for child in list(element):
        if child.tag in _INLINE and not any(node.tag in _BLOCKS for node in child.iter()):
            run.append(child)  # with its tail, which follows it in the text
            continue
        yield run
        run = Element("p")
        run.text, child.tail = child.tail, None
        yield from _units(child)
    yield run


def _words(text: str) -> list[str]:
    return _WORDS.findall(text.lower())


def _gunzip(data: bytes) -> bytes:
    # Read one byte past the cap: an oversized page is seen without inflating all of a bomb.
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
        return stream.read(MAX_HTML_BYTES + 1)


def _decode(data: bytes, charset: str | None) -> str:
    """Bytes to well-formed text: a BOM, then valid UTF-8, then the declared charset (HTTP
    header, then ``<meta>``), then trafilatura's detection (charset_normalizer, lossy UTF-8
    at worst). Never raises, whatever the bytes and the label."""
    # Even valid UTF-8 holds NUL and control characters, and some codecs decode to lone
    # surrogates: none of them is text a page means, and lxml refuses some.
    return wellformed(_decode_declared(data, charset), "page")


def _decode_declared(data: bytes, charset: str | None) -> str:
    if data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8) :].decode("utf-8", errors="replace")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    # Valid UTF-8 first: servers often declare latin-1 for UTF-8 pages, and text in a legacy
    # charset hardly ever forms valid multi-byte UTF-8 sequences by chance.
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    meta = _META_CHARSET.search(data[:_SNIFF_BYTES])
    declared = [charset, meta.group(1).decode("ascii") if meta else None]
    for label in filter(None, declared):
        codec = _codec(label)
        if codec:
            try:
                return data.decode(codec)
            except UnicodeError:  # UnicodeDecodeError's base: what any text codec raises
                continue
    return decode_file(data)


def _codec(label: str) -> str | None:
    """Python's codec for a declared charset label, as browsers read it, or None."""
    try:
        info = codecs.lookup(label.strip())
    except (LookupError, ValueError):  # ValueError: a NUL or a lone surrogate in the label
        return None
    name = info.name
    # Browsers read latin-1 and ASCII as windows-1252 (WHATWG Encoding), and a UTF-16 label
    # in a page whose <meta> could be read as ASCII is wrong (real UTF-16 has a BOM).
    if name in ("iso8859-1", "ascii"):
        return "cp1252"
    if name.startswith("utf-16") or name in _NOT_CHARSETS or not info._is_text_encoding:
        return None
    return name


# --- worker processes ------------------------------------------------------------------------

# The package's root, so a worker imports this same code whether or not the project is installed.
_ROOT = str(Path(__file__).resolve().parents[2])


class _Worker:
    """A ``python -c`` child serving extractions over a socket pair."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [_ROOT, env.get("PYTHONPATH")]))
        code = f"from {__name__} import _serve; _serve({theirs.fileno()})"
        # stderr stays the caller's, so a worker that cannot start says why.
        self.process = subprocess.Popen(
            [sys.executable, "-c", code],
            pass_fds=[theirs.fileno()],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        theirs.close()
        self.conn = Connection(ours.detach())
        # Wait for the worker's imports, so its start-up never counts against a page's limit.
        try:
            ready = self.conn.poll(_STARTUP_TIMEOUT_S) and self.conn.recv() == "ready"
        except (EOFError, OSError):
            ready = False
        if not ready:
            code = self.exitcode()
            self.kill()
            raise RuntimeError(f"extraction worker did not start (exit code {code})")

    def alive(self) -> bool:
        return self.process.poll() is None

    def exitcode(self) -> int | None:
        try:
            return self.process.wait(1)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self.conn.close()


class _Pool:
    """Idle workers; a caller takes one (a new one when none is idle) and gives it back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []

    def acquire(self) -> _Worker:
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive():
                    return worker
                worker.kill()
        return _Worker()  # outside the lock: other callers need not wait for a start-up

    def release(self, worker: _Worker) -> None:
        with self._lock:
            self._idle.append(worker)

    def forget(self) -> None:
        """In a forked child: the idle workers are the parent's, never to be shared."""
        self._lock = threading.Lock()
        self._idle = []


def _serve(fd: int) -> None:
    """A worker's loop: one (html, url, charset) in, one ``Extracted`` out with the texts it
    mended (counted by the caller's process, which reports them), until EOF."""
    # Ctrl-C is the caller's to handle: the worker ends when the caller closes the socket.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Failures are in Extracted.error; without a handler trafilatura's warnings hit stderr.
    logging.getLogger().addHandler(logging.NullHandler())
    conn = Connection(fd)
    conn.send("ready")
    while True:
        try:
            html, url, charset = conn.recv()
            before = mended()
            result = extract_now(html, url, charset)
            conn.send((result, mended(since=before)))
        except (EOFError, OSError):  # the caller closed its end or exited
            return


_pool = _Pool()
os.register_at_fork(after_in_child=_pool.forget)
