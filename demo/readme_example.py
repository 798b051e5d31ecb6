"""The README's "Loading a release" example, run as written on the demo's release: the end of
`make demo`, so that a new user's first command proves the example in the environment that
command built (the core dependencies and the `[load]` extra, nothing of `[dev]`).

The blocks run are the ```python blocks of that section that the line ``MARK`` precedes, one
after the other in one namespace. The one change made to them: the example names the demo's
default data root (``"demo-data/releases"``), which becomes ``--data-root``'s. The example reads
only local files, so the Hugging Face libraries are kept offline, and `datasets`' cache goes to
the data root's scratch folder (``tmp/``) unless the environment names others.

    python demo/readme_example.py --data-root demo-data
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SECTION = "## Loading a release"
MARK = "<!-- make demo runs this block: demo/readme_example.py -->"
RELEASES = '"demo-data/releases"'  # the README's path, as the example spells it


def blocks(readme: str) -> list[str]:
    """The marked ```python blocks of the README's "Loading a release" section."""
    start = readme.find(f"\n{SECTION}\n")
    if start < 0:
        raise SystemExit(f"README.md has no section {SECTION!r}")
    end = readme.find("\n## ", start + 1)
    section = readme[start : end if end > 0 else len(readme)]
    found = re.findall(re.escape(MARK) + r"\n```python\n(.*?)^```$", section, re.S | re.M)
    if not found:
        raise SystemExit(f"README.md's {SECTION!r} has no ```python block marked {MARK}")
    return found


def example(readme: str, data_root: Path) -> str:
    """The marked blocks as one program, reading the releases of ``data_root``."""
    code = "\n".join(blocks(readme))
    if code.count(RELEASES) != 1:
        raise SystemExit(f"the example must name its releases once, as {RELEASES}")
    return code.replace(RELEASES, repr(str(data_root / "releases")))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", type=Path, default=Path("demo-data"))
    parser.add_argument("--readme", type=Path, default=REPO / "README.md")
    args = parser.parse_args(argv)
    code = example(args.readme.read_text(encoding="utf-8"), args.data_root.resolve())
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_CACHE", str(args.data_root.resolve() / "tmp" / "datasets"))
    print(f"README.md, {SECTION[3:]!r}, on {args.data_root}:", flush=True)
    exec(compile(code, f"{args.readme} ({SECTION[3:]})", "exec"), {"__name__": "__main__"})


if __name__ == "__main__":
    main()
