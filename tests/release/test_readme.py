"""The README runs as written, and the pages under docs/ that hold each stage's usage: every
`sh` and `python` block, in order (the README's, then each page's of ``PAGES``), in one
bash, from a copy of this checkout after `make demo` (the session's demo data root, with the
mirror and the web archive `make demo` leaves in it) whose `.venv` is this environment, on a
free port for Airflow. A block marked `<!-- readme: REASON -->` runs elsewhere, for one of
the REASONS below; any other block that fails, fails this test."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from gdelt_forecast.release.build import PLACES as RELEASED
from tests.conftest import copy_worktree, free_port
from tests.release.conftest import REPO

REASONS = {
    "set-up, run by .ci/run",  # make demo, make test
    "needs a GPU",
    "needs an LLM server",  # tests/vllm/test_readme.py runs these against vLLM
}
BLOCK = re.compile(
    r"(?:<!-- readme: (?P<reason>[^>]*?) -->\n)?```(?P<lang>sh|python)\n(?P<code>.*?)```", re.S
)
# The usage pages, in the order their blocks run (each may use what one before it made).
PAGES = ("README.md", *(f"docs/{name}.md" for name in (
    "ingest", "articles", "testset", "timelines", "soundness", "release", "agents", "rounds",
    "site", "configuration", "airflow",
)))  # fmt: skip
OLD = (
    1_577_836_800  # 2020-01-01: the copies are older than .venv's stamps, so make installs nothing
)


def pages() -> str:
    """The README and the usage pages, one after the other."""
    return "\n".join((REPO / page).read_text() for page in PAGES)


def blocks(text: str) -> list[tuple[str | None, str, str]]:
    return [(m["reason"], m["lang"], m["code"]) for m in BLOCK.finditer(text)]


def script(text: str) -> str:
    parts = ["set -euo pipefail"]
    for reason, lang, code in blocks(text):
        if reason is not None:
            continue
        if lang == "python":
            code = f".venv/bin/python - <<'README_PYTHON'\n{code}README_PYTHON\n"
        parts.append(code)
    return "\n".join(parts)


def loading_example():
    """demo/readme_example.py, which `make demo` ends with (demo/ is no package)."""
    spec = importlib.util.spec_from_file_location("readme_example", REPO / "demo/readme_example.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_demo_extras() -> set[str]:
    """The extras that `make demo` installs, read off its commands (`make -n -B`: printed, not
    run), as `pip install -e '.[EXTRAS]'`; the core (`-e .`) must be among them."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    dry = subprocess.run(
        ["make", "-n", "-B", "demo"], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert dry.returncode == 0, dry.stderr
    installs = re.findall(r"pip install .*-e '?\.(?:\[([\w,-]+)\])?'?(?:\s|$)", dry.stdout, re.M)
    assert "" in installs, f"make demo installs no core: {dry.stdout[:2000]}"
    assert "demo/readme_example.py" in dry.stdout, "make demo does not run the README's example"
    return {extra for found in installs for extra in found.split(",") if extra}


def undeclared(code: str, extras: set[str], pyproject: dict) -> list[str]:
    """Each module ``code`` imports, beyond the standard library, that no distribution of the
    core dependencies or of ``extras`` provides (a dependency's own dependencies do not count:
    what an example imports is declared), or that is not installed here to tell."""

    def name(requirement: str) -> str:
        return re.sub(r"[-_.]+", "-", re.match(r"[\w.-]+", requirement)[0]).lower()

    project = pyproject["project"]
    declared = {name(r) for r in project["dependencies"]}
    declared |= {name(r) for e in extras for r in project["optional-dependencies"][e]}
    imported = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            imported.add(node.module.split(".")[0])
    provided = packages_distributions()
    return [
        f"{module} ({', '.join(provided.get(module, ['not installed']))})"
        for module in sorted(imported - set(sys.stdlib_module_names))
        if not {name(d) for d in provided.get(module, [])} & declared
    ]


def checkout(folder: Path) -> None:
    """This checkout's files as they stand, dated 2020."""
    copy_worktree(folder)
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, (OLD, OLD), follow_symlinks=False)


def test_the_readme_is_a_front_door_and_links_every_usage_page():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) < 300
    assert "```mermaid" in readme
    assert all(f"]({page}" in readme for page in PAGES[1:])
    docs = {p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md")}
    assert set(PAGES[1:]) <= docs


def test_every_block_is_run_or_says_where_it_runs():
    found = blocks(pages())
    assert {reason for reason, _, _ in found} - {None} <= REASONS
    assert sum(reason is None for reason, _, _ in found) >= 10
    # nothing between fences is left unparsed: every sh or python fence opens a block
    fences = re.findall(r"^```(sh|python)$", pages(), re.M)
    assert len(fences) == len(found)


@pytest.mark.long(seconds=140)
def test_the_readme_runs_as_written(demo_cfg, release, tmp_path):
    work = tmp_path / "gdelt-forecast"
    checkout(work)
    (work / ".venv").symlink_to(Path(sys.prefix))
    shutil.copytree(demo_cfg.data_root, work / "demo-data", symlinks=True)
    shutil.copytree(demo_cfg.data_root.parent / "mirror", work / "demo-data" / "mirror")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GDELT_FORECAST_", "AIRFLOW"))}  # fmt: skip
    env["AIRFLOW_PORT"] = str(free_port())
    # `make airflow` must find .venv up to date: it would otherwise install into this
    # environment from the copy.
    stale = subprocess.run(["make", "-q", ".venv/.airflow"], cwd=work, env=env)
    assert stale.returncode == 0, "build .venv with `make test` first (make's stamps missing)"
    try:
        done = subprocess.run(
            ["bash", "-c", script(pages())],
            cwd=work, env=env, capture_output=True, text=True, timeout=1200,
        )  # fmt: skip
    finally:
        subprocess.run(["make", "airflow-down"], cwd=work, env=env, capture_output=True)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-6000:]
    assert re.search(r"build_testset manual__\S+: success", out)
    refresh = re.search(r"monthly_refresh (manual__\S+): success", out)
    assert refresh
    _ran_every_month_stage_and_released_it(work / "demo-data", refresh[1])
    assert re.search(r"mirai/MIRAI/data_kg.csv: [\d,]+ bytes, sha256 as listed", out)
    assert re.search(r"release verify demo-data/releases/\S+: sound", out)
    assert "accuracy" in out and "MIRAI scores over" in out


def _ran_every_month_stage_and_released_it(root: Path, run_id: str) -> None:
    """docs/airflow.md's `monthly_refresh` of the demo month, under the scheduler and its
    LocalExecutor: each month stage ran in that run, and its release (the newest) holds each
    stage's files byte for byte, with the stage's inputs in its manifest (the same month on a
    bucket, under Celery: tests/bench/test_celery_month.py)."""
    release = root / "releases" / (root / "releases/LATEST").read_text().strip()
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["month"] == "2025-08"
    # As `make demo`: 3 cuts (tasks.cuts_per_timeline) of each of the two stories.
    assert manifest["tasks"]["records"] == dict.fromkeys(
        ("STF", "LTF", "AQA", "MCNC", "MCAC", "VQA"), 6
    )
    for stage, places in RELEASED.items():
        folder = root / stage / "2025-08"
        record = json.loads((folder / "_record.json").read_text())
        assert record["run"]["id"] == run_id, stage
        assert manifest["stages"][stage]["inputs"] == record["inputs"]
        assert record["files"], stage
        for item in record["files"]:
            prefix, place = next((p, to) for p, to in places if item["path"].startswith(p))
            released = release / (place + item["path"].removeprefix(prefix))
            assert released.read_bytes() == (folder / item["path"]).read_bytes(), item["path"]


def test_the_loading_example_imports_only_what_make_demo_installs():
    """`make demo` builds its environment from the core and its extras, not `[dev]`: every
    module the README's loading example imports must come from one of them (without the
    `[load]` extra, `datasets` fails this), as the example runs at the end of `make demo`."""
    extras = make_demo_extras()
    assert "load" in extras
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    code = "\n".join(loading_example().blocks((REPO / "README.md").read_text()))
    assert "import datasets" in code
    assert undeclared(code, extras, pyproject) == []
    # what the check catches: the same example where `make demo` installed no extra
    assert undeclared(code, set(), pyproject) == ["datasets (datasets)"]


def test_make_demos_last_step_runs_the_loading_example(demo_cfg, release, tmp_path):
    env = {**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "datasets")}
    done = subprocess.run(
        [sys.executable, "demo/readme_example.py", "--data-root", str(demo_cfg.data_root)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^\d+ test queries, e\.g\. \S+", done.stdout, re.M), done.stdout
    assert re.search(r"^\d+ quads in the history$", done.stdout, re.M), done.stdout
