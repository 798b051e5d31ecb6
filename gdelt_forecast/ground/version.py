"""Which code built a file: the package version and the git commit, from git in a checkout
(an editable install) or from the stamp every build writes into the package (setup.py, which
loads this file by path to name the commit the same way)."""

from __future__ import annotations

import subprocess
from functools import cache
from importlib import metadata, resources
from pathlib import Path

STAMP = "_commit.txt"


@cache  # one process runs one checkout: ask git once
def code_version() -> dict:
    """The package version and its commit; None only for a package copied by hand rather
    than built."""
    checkout = Path(__file__).resolve().parents[2]
    return {
        "package": metadata.version("gdelt-forecast"),
        "git_commit": checkout_commit(checkout) or _stamp(),
    }


def checkout_commit(folder: Path) -> str | None:
    """HEAD of the git checkout at ``folder``, with ``-dirty`` when tracked files differ from
    it; None where there is no checkout or no git."""
    if not (folder / ".git").exists():
        return None
    try:
        head = _git(folder, "rev-parse", "HEAD")
        dirty = _git(folder, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("-dirty" if dirty else "")


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout.strip()


def _stamp() -> str | None:
    stamp = resources.files("gdelt_forecast") / STAMP
    return stamp.read_text().strip() if stamp.is_file() else None
