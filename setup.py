"""Stamps the git commit into every build of the package (``gdelt_forecast/_commit.txt``), so
that a release built from a wheel, a plain ``pip install .`` or the Docker image names the code
that built it (gdelt_forecast/ground/version.py reads it). The metadata lives in pyproject.toml.

The commit comes from ``GDELT_FORECAST_GIT_COMMIT`` (the Docker build passes it: its context
has no .git), else from git in this checkout (with ``-dirty`` when tracked files differ from
it), else from the ``COMMIT`` file an sdist carries. A build with none of them fails: a
package that cannot say which code it is must not build releases.
"""

import importlib.util
import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent


def _version_module():
    # By path: importing the package would need its dependencies inside the build.
    path = HERE / "gdelt_forecast/ground/version.py"
    spec = importlib.util.spec_from_file_location("version", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def commit() -> str:
    if os.environ.get("GDELT_FORECAST_GIT_COMMIT"):
        return os.environ["GDELT_FORECAST_GIT_COMMIT"].strip()
    checkout = _version_module().checkout_commit(HERE)
    if checkout:
        return checkout
    if (HERE / "COMMIT").exists():
        return (HERE / "COMMIT").read_text().strip()
    raise SystemExit(
        "gdelt-forecast: cannot tell which commit this is; build from a git checkout (with git "
        "installed) or set GDELT_FORECAST_GIT_COMMIT"
    )


class BuildWithCommit(build_py):
    def run(self):
        super().run()
        if not self.editable_mode:  # an editable install asks git at run time
            target = Path(self.build_lib) / "gdelt_forecast" / _version_module().STAMP
            target.write_text(commit() + "\n")


class SdistWithCommit(sdist):
    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        (Path(base_dir) / "COMMIT").write_text(commit() + "\n")


setup(cmdclass={"build_py": BuildWithCommit, "sdist": SdistWithCommit})
