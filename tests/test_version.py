"""Every build of the package names its commit: a wheel from a checkout, a wheel from an sdist
(no .git), a build that is told the commit (the Docker image), and an editable checkout. The
builds run without build isolation, on this environment's setuptools, so nothing is fetched."""

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import copy_worktree

REPO = Path(__file__).resolve().parents[1]


def run(*args, cwd=None, env=None):
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A clone of this checkout with its working tree committed on top, so that what is
    tested is the code as it stands."""
    folder = tmp_path_factory.mktemp("clone") / "gdelt-forecast"
    run("git", "clone", "-q", str(REPO), str(folder))
    copy_worktree(folder)
    git = ["git", "-C", str(folder), "-c", "user.name=test", "-c", "user.email=test@localhost"]
    run(*git, "add", "-A")
    run(*git, "commit", "-q", "--allow-empty", "-m", "the working tree")
    return folder, run("git", "-C", str(folder), "rev-parse", "HEAD")


def wheel(source: Path, out: Path, **env) -> Path:
    import os

    run(
        sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
        "-w", str(out), str(source), env={**os.environ, **env},
    )  # fmt: skip
    return next(out.glob("gdelt_forecast-*.whl"))


def stamp(whl: Path) -> str:
    with zipfile.ZipFile(whl) as z:
        return z.read("gdelt_forecast/_commit.txt").decode().strip()


def test_a_wheel_from_a_checkout_names_its_commit_and_reports_it_installed(clone, tmp_path):
    folder, head = clone
    whl = wheel(folder, tmp_path / "dist")
    assert stamp(whl) == head
    run(sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
        str(tmp_path / "site"), str(whl))  # fmt: skip
    installed = run(
        sys.executable, "-c",
        "from gdelt_forecast.ground.version import code_version; "
        "print(code_version()['git_commit'])",
        env={"PYTHONPATH": str(tmp_path / "site")}, cwd=tmp_path,
    )  # fmt: skip
    assert installed == head


def test_a_checkout_with_changed_files_is_dirty(clone, tmp_path):
    folder, head = clone
    readme = folder / "README.md"
    readme.write_text(readme.read_text() + "\nchanged\n")
    try:
        assert stamp(wheel(folder, tmp_path / "dist")) == head + "-dirty"
    finally:
        run("git", "-C", str(folder), "checkout", "README.md")


def test_an_sdist_carries_the_commit_to_its_wheel(clone, tmp_path):
    folder, head = clone
    run(sys.executable, "setup.py", "-q", "sdist", "-d", str(tmp_path / "sdist"), cwd=folder)
    (archive,) = (tmp_path / "sdist").glob("gdelt_forecast-*.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    (source,) = (tmp_path / "unpacked").iterdir()
    assert not (source / ".git").exists()
    assert stamp(wheel(source, tmp_path / "dist")) == head


def test_a_build_without_git_must_be_told_the_commit(clone, tmp_path):
    folder, _ = clone
    bare = tmp_path / "tree"
    run("git", "-C", str(folder), "archive", "-o", str(tmp_path / "tree.tar"), "HEAD")
    bare.mkdir()
    with tarfile.open(tmp_path / "tree.tar") as tar:
        tar.extractall(bare, filter="data")
    with pytest.raises(subprocess.CalledProcessError) as refused:
        wheel(bare, tmp_path / "dist")
    assert "cannot tell which commit" in refused.value.stderr
    assert stamp(wheel(bare, tmp_path / "dist", GDELT_FORECAST_GIT_COMMIT="abc123")) == "abc123"


def test_this_checkout_names_its_head():
    from gdelt_forecast.ground.version import code_version

    commit = code_version()["git_commit"]
    assert commit.removesuffix("-dirty") == run("git", "-C", str(REPO), "rev-parse", "HEAD")
