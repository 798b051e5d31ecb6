"""The docs made from what they describe: docs/configuration.md from the config models
(:mod:`gdelt_forecast.pipeline.config_doc`), and the stage table of docs/architecture.md from the
stages' declarations (:mod:`gdelt_forecast.pipeline.stage_doc`), between its two marker lines.

``python -m gdelt_forecast.pipeline.docs_pages`` (``make docs``) rewrites them; ``--check`` leaves
them alone and exits 1 with the difference when one is stale, which tests/test_docs_pages.py
asserts never happens.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable
from pathlib import Path

from gdelt_forecast.pipeline import config_doc, stage_doc

DOCS = Path(__file__).resolve().parents[2] / "docs"
BEGIN = "<!-- made by `make docs` from {source}: edit that, not this table -->\n"
END = "<!-- end of what `make docs` made -->\n"


# page -> (what writes it, the source a region's marker names; None: the whole page)
PAGES: dict[str, tuple[Callable[[], str], str | None]] = {
    "configuration.md": (config_doc.render, None),
    "architecture.md": (stage_doc.render, "gdelt_forecast/pipeline/stages.py"),
}


def made(name: str, written: str) -> str:
    """Page ``name`` as it should read, from its text as ``written``: the whole page, or its
    region between the markers (ValueError when the page lacks them)."""
    render, source = PAGES[name]
    if source is None:
        return render()
    begin = BEGIN.format(source=source)
    if begin not in written or END not in written:
        raise ValueError(f"docs/{name} lacks the lines {begin.strip()!r} and {END.strip()!r}")
    head, rest = written.split(begin, 1)
    return head + begin + render() + END + rest.split(END, 1)[1]


def difference(name: str, docs: Path = DOCS) -> str:
    """How ``docs/<name>`` differs from what it should read, as a unified diff; empty when
    it does not."""
    path = docs / name
    written = path.read_text(encoding="utf-8") if path.exists() else ""
    lines = difflib.unified_diff(
        written.splitlines(keepends=True),
        made(name, written).splitlines(keepends=True),
        fromfile=f"{path} (as it is)",
        tofile=f"{path} (as made)",
    )
    return "".join(lines)


def main(argv: list[str] | None = None, docs: Path = DOCS) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gdelt_forecast.pipeline.docs_pages",
        description="Write the docs made from the config models and the stages' declarations.",
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a page is stale"
    )
    args = parser.parse_args(argv)
    stale = 0
    for name in PAGES:
        path = docs / name
        if args.check:
            if found := difference(name, docs):
                print(f"{path} is stale (run `make docs`):\n{found}", file=sys.stderr)
                stale = 1
            continue
        written = path.read_text(encoding="utf-8") if path.exists() else ""
        path.write_text(made(name, written), encoding="utf-8")
    return stale


if __name__ == "__main__":
    sys.exit(main())
