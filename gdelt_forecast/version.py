"""Which code built a file: the package version, and the git commit of a checkout."""

from __future__ import annotations

import subprocess
from functools import cache
from importlib import metadata
from pathlib import Path


@cache  # one process runs one checkout: ask git once
def code_version() -> dict:
    """The package version, and the git commit when the package runs from a checkout."""
    version = {"package": metadata.version("gdelt-forecast"), "git_commit": None}
    checkout = Path(__file__).resolve().parents[1]
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
    return dict(version)
