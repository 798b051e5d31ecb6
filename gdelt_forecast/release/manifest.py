"""What a release holds, file by file: path, size, sha256 and, for tables, rows."""

from __future__ import annotations

import hashlib
import json
import subprocess
from importlib import metadata
from pathlib import Path

import pyarrow.parquet as pq

MANIFEST = "manifest.json"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def parquet_rows(path: Path) -> int:
    return pq.ParquetFile(path).metadata.num_rows


def entry(root: Path, path: Path) -> dict:
    item = {
        "path": path.relative_to(root).as_posix(),
        "bytes": path.stat().st_size,
        "sha256": sha256(path),
    }
    if path.suffix == ".parquet":
        item["rows"] = parquet_rows(path)
    return item


def on_disk(root: Path) -> list[Path]:
    """Every file of the release but the manifest, in path order."""
    return sorted(
        (p for p in root.rglob("*") if p.is_file() and p.relative_to(root).as_posix() != MANIFEST),
        key=lambda p: p.relative_to(root).as_posix(),
    )


def entries(root: Path) -> list[dict]:
    return [entry(root, p) for p in on_disk(root)]


def write_json(path: Path, data: dict) -> None:
    """Indented UTF-8 JSON in the dict's own order (MIRAI's info files pair their keys with
    embedding rows by order), with a final newline."""
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def code_version() -> dict:
    """The package version, and the git commit when the package runs from a checkout."""
    version = {"package": metadata.version("gdelt-forecast"), "git_commit": None}
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / ".git").exists():
        try:
            done = subprocess.run(
                ["git", "-C", str(checkout), "rev-parse", "HEAD"],
                capture_output=True,
                text=True,
                timeout=10,
                check=True,
            )
            version["git_commit"] = done.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass  # no git on this machine: the package version alone identifies the code
    return version
