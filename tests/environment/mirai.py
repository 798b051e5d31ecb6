"""MIRAI's own ``APIs/api_implementation.py`` imported over a release, for the comparison test
and bench/agents/environment.py. MIRAI's code is not ours to ship: it comes from a checkout of
yecchen/MIRAI. Its module reads ``./../data/MIRAI`` and ``./../data/info`` from the working
directory, so it is imported from a folder laid out that way. Two shims, around its code and
not in it: its ``openai.Embedding.create`` (the pre-1.0 client) answers with the release's
embedding model, as the release's info embeddings were made; and pandas 3 lost the private
``Series._append`` it counts entities with, which ``pd.concat`` does the same."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest


def import_mirai(release: Path, repo: Path, end_date: str, folder: Path, patch: pytest.MonkeyPatch):
    """The module, with ``DEFAULT_END_DATE`` set; ``folder`` is an empty scratch folder and
    ``patch`` undoes the working directory, environment and shims when it is undone."""
    import pandas as pd

    from gdelt_forecast.ground.config import Config
    from gdelt_forecast.ground.embeddings import embed

    data = folder / "data"
    data.mkdir()
    (data / "MIRAI").symlink_to(release / "mirai" / "MIRAI")
    (data / "info").symlink_to(release / "mirai" / "info")
    (folder / "run").mkdir()
    patch.chdir(folder / "run")
    patch.setenv("OPENAI_API_KEY", "unused")

    def create(input, model):  # noqa: A002 (the old client's keyword)
        vector = embed(Config(), input)[0].tolist()
        return types.SimpleNamespace(data=[types.SimpleNamespace(embedding=vector)])

    fake = types.ModuleType("openai")
    fake.Embedding = types.SimpleNamespace(create=create)
    patch.setitem(sys.modules, "openai", fake)
    if not hasattr(pd.Series, "_append"):
        concat = lambda self, other: pd.concat([self, other])  # noqa: E731
        patch.setattr(pd.Series, "_append", concat, raising=False)
    spec = importlib.util.spec_from_file_location("mirai_api", repo / "APIs/api_implementation.py")
    api = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(api)
    api.set_default_end_date(end_date)
    return api
