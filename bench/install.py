"""Benchmark: what a plain ``pip install .`` gives (newest releases, no constraints file).

``make bench-install`` builds the environment (``pip install .`` into a fresh venv, the only
step that talks to the package index) and then runs this script on it, which reads the
environment only:

- its size on disk and every distribution in it, largest first, with its size;
- that it holds no GPU package (torch, triton, nvidia-*, cuda-*, cupy, jax[cuda]) and stays
  under 1.5 GiB: the exit code is 1 otherwise;
- every distribution that ``constraints.txt`` does not pin, and those whose newest release
  differs from the pin (the constraints must pin all a plain install resolves);
- that it runs: the CLI answers ``--help``, the local embedding model embeds a text, and the
  package names the commit it was built from.

Run: ``python -m bench.install VENV``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIMIT = 1.5 * 2**30
GPU = re.compile(r"^(torch|torchvision|torchaudio|triton|nvidia-.*|cuda-.*|cupy.*|jax-cuda.*)$")

# Run by the environment's own interpreter: each distribution's name, version and bytes.
LIST = """
import json, os
from importlib import metadata
rows = []
for dist in metadata.distributions():
    size = 0
    for f in dist.files or []:
        path = dist.locate_file(f)
        if os.path.isfile(path):
            size += os.path.getsize(path)
    rows.append([dist.metadata["Name"], dist.version, size])
print(json.dumps(rows))
"""


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("venv", type=Path)
    venv = parser.parse_args().venv.resolve()
    python = venv / "bin" / "python"
    # Outside the checkout, so that only the installed package can be imported.
    run = partial(subprocess.run, capture_output=True, text=True, cwd=venv)
    rows = json.loads(run([python, "-c", LIST], check=True).stdout)
    rows.sort(key=lambda r: -r[2])
    total = folder_size(venv)
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            pins[normal(name)] = version.strip()
    ours = {"gdelt-forecast", "pip", "setuptools"}
    print(f"plain install: {total / 2**20:,.0f} MiB on disk, {len(rows)} distributions ({venv})")
    for name, version, size in rows:
        pin = pins.get(normal(name))
        note = "" if pin in (version, None) else f" (constraints.txt: {pin})"
        if pin is None and normal(name) not in ours:
            note = " (not in constraints.txt)"
        print(f"  {size / 2**20:8.1f} MiB  {name}=={version}{note}")
    gpu = [name for name, _, _ in rows if GPU.match(normal(name))]
    unpinned = [n for n, _, _ in rows if normal(n) not in pins and normal(n) not in ours]
    help_ok = run([venv / "bin" / "gdelt-forecast", "--help"])
    embedded = run(
        [python, "-c", "from gdelt_forecast.ground.config import Config; "
         "from gdelt_forecast.ground.embeddings import embed; print(embed(Config(), ['x']).shape)"]
    )  # fmt: skip
    commit = run(
        [python, "-c", "from gdelt_forecast.ground.version import code_version; "
         "print(code_version()['git_commit'])"]
    ).stdout.strip()  # fmt: skip
    checks = {
        f"under {LIMIT / 2**30} GiB": total < LIMIT,
        "no GPU package" + (f" (found {', '.join(gpu)})" if gpu else ""): not gpu,
        "constraints.txt pins every distribution"
        + (f" (missing {', '.join(unpinned)})" if unpinned else ""): not unpinned,
        "gdelt-forecast --help runs": help_ok.returncode == 0,
        f"the installed package names its commit ({commit})": commit not in ("", "None"),
        f"local embeddings run {embedded.stdout.strip() or embedded.stderr[-300:]}": (
            embedded.stdout.strip() == "(1, 384)"
        ),
    }
    for name, ok in checks.items():
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
