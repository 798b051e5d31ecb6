"""What the benchmarks share: each measured run in a fresh process that reports its own
peak memory as one JSON line, and PASS/FAIL verdicts."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path


def in_fresh_process(script: str, worker: str, workdir: Path, days: int) -> dict:
    """Run ``script --worker WORKER`` and return the JSON its worker printed last."""
    cmd = [sys.executable, script, "--worker", worker, "--workdir", str(workdir)]
    proc = subprocess.run([*cmd, "--days", str(days)], capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"{worker} run over {days} day(s) failed:\n{proc.stderr}")
    return json.loads(proc.stdout.splitlines()[-1])


def print_with_peak_rss(result: dict) -> None:
    """In a worker: print the result with this process's peak RSS (Linux reports KiB)."""
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def verdict(passed: bool) -> str:
    return "PASS" if passed else "FAIL"
