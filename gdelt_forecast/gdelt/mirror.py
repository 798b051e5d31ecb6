"""Build a GDELT-shaped mirror (zips plus masterfilelist.txt) from plain CSV files.

Used by ``make demo``, the tests and the benchmark to serve real rows offline. The list
names files under GDELT's own URL, as upstream does; ingest resolves names against its
configured base URL, so the same list works from file:// and http://127.0.0.1.
"""

from __future__ import annotations

import argparse
import hashlib
import zipfile
from collections.abc import Iterable
from pathlib import Path

UPSTREAM = "http://data.gdeltproject.org/gdeltv2"


def add_file(mirror: Path, csv_name: str, data: bytes) -> tuple[int, str, str]:
    """Zip ``data`` as ``<csv_name>.zip`` in ``mirror``; return its master-list entry."""
    mirror.mkdir(parents=True, exist_ok=True)
    path = mirror / f"{csv_name}.zip"
    # A fixed timestamp keeps the zip, and so its md5, the same on every build.
    member = zipfile.ZipInfo(csv_name, date_time=(1980, 1, 1, 0, 0, 0))
    member.compress_type = zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(member, data)
    blob = path.read_bytes()
    return len(blob), hashlib.md5(blob, usedforsecurity=False).hexdigest(), path.name


def write_masterfile(mirror: Path, entries: Iterable[tuple[int, str, str]]) -> Path:
    path = mirror / "masterfilelist.txt"
    lines = [
        f"{size} {md5} {UPSTREAM}/{name}\n"
        for size, md5, name in sorted(entries, key=lambda e: e[2])
    ]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def build(mirror: Path, csv_files: Iterable[Path]) -> Path:
    """Mirror CSV files named like GDELT's (``20250807220000.export.CSV``)."""
    entries = [add_file(mirror, p.name, p.read_bytes()) for p in csv_files]
    return write_masterfile(mirror, entries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirror", type=Path, help="folder to write the mirror into")
    parser.add_argument(
        "csv", type=Path, nargs="+", help="GDELT CSV files named <slot>.<table>.CSV"
    )
    args = parser.parse_args()
    listed = build(args.mirror, args.csv)
    print(f"mirror: {len(args.csv)} files listed in {listed}")


if __name__ == "__main__":
    main()
