"""The site's pages from Jinja2 templates that escape every value by default, written as plain
files with links relative to the page, so that the same folder works from ``file://``, from
``python -m http.server`` and from a bucket's static hosting.

Nothing from a release or a run is trusted: it reaches a page only through a template's
autoescaping (never ``|safe``), a URL only through :func:`web_url` (http and https, anything
else shown as text), a file name only through :func:`slug`. The one HTML that is not a template's
is the card's Markdown, rendered with raw HTML off (:func:`markdown`).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from urllib.parse import quote, urlsplit

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup

# No inline script or style, nothing from another origin: a page that a planted <script> or
# onerror= got into (were it ever unescaped) still would not run it. A meta tag is what static
# hosting allows; frame-ancestors and report-uri need a header and are not set.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'"
)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def slug(name: str) -> str:
    """A file name for ``name`` (a run's or query's id): itself where it is plain, else its
    plain characters and a hash of the whole, so that two names never share a file."""
    plain = _UNSAFE.sub("_", name)[:80].lstrip(".") or "_"
    if plain == name:
        return name
    return f"{plain}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"


def web_url(url: object) -> str | None:
    """``url`` where a browser may follow it from a page (http or https with a host), else None:
    a ``javascript:``, ``data:`` or relative URL from the data is shown, never linked."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    return url.strip() if parts.scheme in ("http", "https") and parts.netloc else None


def _number(value: object, digits: int = 1) -> str:
    if value is None:
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def markdown(text: str) -> Markup:
    """A release card's Markdown (its YAML header left out) as HTML, its headings one level
    down so that the page's own title stays the only ``h1``."""
    if text.startswith("---\n"):
        text = text.split("\n---\n", 1)[-1]
    # CommonMark with raw HTML off (it is shown as text) and tables on; markdown-it refuses
    # javascript:, vbscript: and file: links itself (validateLink).
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(text)
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(int(token.tag[1]) + 1, 6)}"
    return Markup(md.renderer.render(tokens, md.options, {}))


class Pages:
    """Writes pages under ``out``; each template gets ``root``, the relative way back to the
    site's top (``../`` per folder), and ``href(path)`` for a link to another page."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.env = Environment(
            loader=PackageLoader("gdelt_forecast.site"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            undefined=StrictUndefined,  # a misspelt field is an error, not an empty cell
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters.update(num=_number, web_url=web_url, slug=slug)
        self.written = 0

    def write(self, path: str, template: str, **values: object) -> None:
        root = "../" * path.count("/")
        html = self.env.get_template(template).render(
            root=root, csp=CSP, href=lambda target: root + quote(target), **values
        )
        self._save(path, html.encode("utf-8"))
        self.written += 1  # the data files are not pages

    def data(self, path: str, value: object) -> None:
        """``value`` for a page's script, as a script file of its own that sets
        ``window.SITE_DATA``: no inline script is needed, and a page opened from file:// can
        load it (fetch() of a file cannot). The JSON is ASCII, so no character of the data
        can end a string or the script early; the page's script writes it with textContent."""
        text = f"window.SITE_DATA = {json.dumps(value, ensure_ascii=True, default=str)};\n"
        self._save(path, text.encode("ascii"))

    def _save(self, path: str, data: bytes) -> None:
        target = self.out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
