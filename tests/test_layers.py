"""The package's layers (issue 36): what the stages and the release share lies below both
(``gdelt_forecast/contract``), so ``release/`` imports no stage package (it reads the stage
declarations and records), no stage imports ``release/``, ``contract/`` imports neither, and
the warehouse nothing of the articles. Every import counts, a function's own as well."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gdelt_forecast.stages import STAGES

PACKAGE = Path(__file__).resolve().parents[1] / "gdelt_forecast"
RELEASE = "release"
# The packages the stages run in, by their declarations: gdelt, events, articles, ...
STAGE_PACKAGES = sorted({s.target.split(":")[0].split(".")[1] for s in STAGES.values()} - {RELEASE})


def imports(package: str) -> dict[str, set[str]]:
    """Each module of ``package`` -> the gdelt_forecast packages it imports."""
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
            names |= {m.split(".")[1] for m in modules if m.startswith("gdelt_forecast.")}
        found[str(path.relative_to(PACKAGE))] = names
    return found


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
