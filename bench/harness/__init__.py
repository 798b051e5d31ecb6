"""What the benchmarks share: the repository they run in, each measured run in a fresh
process that reports its own peak memory as one JSON line, and PASS/FAIL verdicts; the local
servers they start are :mod:`bench.harness.servers`'s.

Every bench is a module run from the repository root: ``python -m bench.<folder>.<name>``."""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def module(name: str, *args: str) -> list[str]:
    """The command that runs the bench module ``name`` (its ``__spec__.name``) with ``args``,
    from the repository root (:data:`REPO`, the ``cwd`` to give it)."""
    return [sys.executable, "-m", name, *args]


def bench_parser(doc: str, workers, repeat: str | None = None) -> argparse.ArgumentParser:
    """A bench's command line, with what :func:`in_fresh_process` gives its worker: the
    hidden ``--worker`` (one of ``workers``) and ``--workdir``; ``--repeat`` (3) where
    ``repeat`` says what is repeated. The bench adds its ``--days``."""
    found = argparse.ArgumentParser(description=doc.splitlines()[0])
    found.add_argument("--workdir", type=Path, default=REPO / "bench-data", help="bench folder")
    if repeat:
        found.add_argument("--repeat", type=int, default=3, help=repeat)
    found.add_argument("--worker", choices=workers, help=argparse.SUPPRESS)
    return found


def in_fresh_process(name: str, worker: str, workdir: Path, days: int) -> dict:
    """Run bench module ``name`` with ``--worker WORKER`` and return the JSON its worker
    printed last."""
    cmd = module(name, "--worker", worker, "--workdir", str(workdir), "--days", str(days))
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if proc.returncode:
        sys.exit(f"{worker} run over {days} day(s) failed:\n{proc.stderr}")
    return json.loads(proc.stdout.splitlines()[-1])


def print_with_peak_rss(result: dict) -> None:
    """In a worker: print the result with this process's peak RSS (Linux reports KiB)."""
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def verdict(passed: bool) -> str:
    return "PASS" if passed else "FAIL"
