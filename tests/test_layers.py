"""The package's layers. The root holds the console script (``cli.py``) and folders: the ground
(``ground/``: config, data root, dates, files, errors) that everything stands on, storage
(``storage/``: the bucket, the working copy, leases, locks) on the ground, the pipeline
(``pipeline/``: the stages' declarations, the runner, records) on both, and at the top,
beside the command line, Airflow's side (``orchestration/``), which nothing imports; no two
modules import each other, however far round (issue 49).

What the stages and the release share lies below both
(``gdelt_forecast/contract``), so ``release/`` imports no stage package (it reads the stage
declarations and records), no stage imports ``release/``, ``contract/`` imports neither, and
the warehouse nothing of the articles. Scoring lies below the stages too (``scoring/``), so
no stage imports another stage's ``evaluate``. Every import counts, a function's own as well."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gdelt_forecast.pipeline.stages import STAGES

PACKAGE = Path(__file__).resolve().parents[1] / "gdelt_forecast"
RELEASE = "release"
# The packages the stages run in, by their declarations: gdelt, events, articles, ...
STAGE_PACKAGES = sorted({s.target.split(":")[0].split(".")[1] for s in STAGES.values()} - {RELEASE})


def imported_modules(package: str) -> dict[str, set[str]]:
    """Each module of ``package`` -> the gdelt_forecast modules it imports (``from a import b``
    counts as both ``a`` and ``a.b``, since ``b`` may be a module)."""
    found = {}
    for path in sorted((PACKAGE / package).rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            else:
                continue
            names |= {m for m in modules if m.startswith("gdelt_forecast.")}
        found[str(path.relative_to(PACKAGE))] = names
    return found


def imports(package: str) -> dict[str, set[str]]:
    """Each module of ``package`` -> the gdelt_forecast packages it imports."""
    return {
        m: {name.split(".")[1] for name in names} for m, names in imported_modules(package).items()
    }


def test_the_stage_packages_are_read_from_the_declarations():
    assert {"gdelt", "articles", "warehouse", "timelines", "tasks", "reasoning"} <= set(
        STAGE_PACKAGES
    )


def test_the_release_imports_no_stage_package():
    reach = {m: sorted(n & set(STAGE_PACKAGES)) for m, n in imports(RELEASE).items()}
    assert {m: n for m, n in reach.items() if n} == {}


@pytest.mark.parametrize("package", STAGE_PACKAGES)
def test_no_stage_imports_the_release(package):
    assert {m: n for m, n in imports(package).items() if RELEASE in n} == {}


def test_the_contract_imports_no_stage_and_no_release():
    above = {*STAGE_PACKAGES, RELEASE}
    assert {m: sorted(n & above) for m, n in imports("contract").items() if n & above} == {}


def test_the_warehouse_imports_nothing_of_the_articles():
    assert {m: n for m, n in imports("warehouse").items() if "articles" in n} == {}


def test_scoring_imports_no_stage_and_no_release():
    # site/ and environment/ are no stages, but lie above scoring as well: they score runs
    # and serve the agents.
    above = {*STAGE_PACKAGES, RELEASE, "site", "environment"}
    assert {m: sorted(n & above) for m, n in imports("scoring").items() if n & above} == {}


@pytest.mark.parametrize("package", STAGE_PACKAGES)
def test_no_stage_imports_another_stages_evaluate(package):
    others = {f"gdelt_forecast.{p}.evaluate" for p in STAGE_PACKAGES if p != package}
    reach = {m: sorted(n & others) for m, n in imported_modules(package).items()}
    assert {m: n for m, n in reach.items() if n} == {}


GROUND, STORAGE, PIPELINE, TOP = "ground", "storage", "pipeline", {"orchestration", "cli"}


def test_the_root_holds_the_console_script_and_the_layers_folders():
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert modules == ["__init__.py", "cli.py"]
    assert {GROUND, STORAGE, PIPELINE, "orchestration"} <= {p.name for p in PACKAGE.iterdir()}


@pytest.mark.parametrize(
    "layer, below",
    [
        (GROUND, {GROUND}),
        (STORAGE, {GROUND, STORAGE}),
        # the parameters' choices are the contract's names (the tasks, the baselines)
        (PIPELINE, {GROUND, STORAGE, PIPELINE, "contract"}),
    ],
)
def test_a_layer_imports_only_what_lies_below_it(layer, below):
    assert {m: sorted(n - below) for m, n in imports(layer).items() if n - below} == {}


def test_nothing_but_the_top_imports_the_top():
    packages = sorted({p.parent.name for p in PACKAGE.glob("*/*.py")} - TOP)
    reach = {m: sorted(n & TOP) for p in packages for m, n in imports(p).items() if n & TOP}
    assert reach == {}


def _graph() -> dict[str, set[str]]:
    """Each module of the package -> the modules it imports (``from a import b``: ``a.b``
    where that is a module, else ``a``)."""
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in names.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                found |= {
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in names else node.module
                    for a in node.names
                }
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        graph[name] = {m for m in found if m in names and m != name}
    return graph


def test_no_import_circle():
    graph = _graph()

    def reaches(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        return seen

    circles = sorted(m for m in graph if m in reaches(m))
    assert circles == []
