"""What a release holds, file by file: path, size, sha256 and, for tables, rows."""

from __future__ import annotations

from pathlib import Path

from gdelt_forecast.contract.names import MANIFEST
from gdelt_forecast.ground.files import entry


def on_disk(root: Path) -> list[Path]:
    """Every file of the release but the manifest, in path order."""
    return sorted(
        (p for p in root.rglob("*") if p.is_file() and p.relative_to(root).as_posix() != MANIFEST),
        key=lambda p: p.relative_to(root).as_posix(),
    )


def entries(root: Path) -> list[dict]:
    return [entry(root, p) for p in on_disk(root)]
