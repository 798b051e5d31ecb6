"""MIRAI's agent environment on a release: :func:`open_environment` gives an object with
MIRAI's API functions as methods (``env.py``), its value types (``types.py``), and the
OpenAI function-calling schemas of the methods (``tools.py``)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from gdelt_forecast.environment.env import Environment, EnvironmentSetupError
from gdelt_forecast.environment.tools import TOOLS, call_tool, tool_schemas
from gdelt_forecast.environment.types import (
    CAMEOCode,
    Country,
    Date,
    DateRange,
    Event,
    ISOCode,
    NewsArticle,
    Relation,
)
from gdelt_forecast.ground.config import Config, load_config
from gdelt_forecast.ground.data_root import RELEASES, DataRoot

__all__ = [
    "TOOLS", "CAMEOCode", "Country", "Date", "DateRange", "Environment", "EnvironmentSetupError",
    "Event", "ISOCode", "NewsArticle", "Relation", "call_tool", "open_environment",
    "release_folder", "tool_schemas",
]  # fmt: skip


def release_folder(release: str | Path, cfg: Config | None = None) -> Path:
    """A release folder, or a version name under the data root's ``releases/``."""
    folder = Path(release)
    if not folder.is_dir():
        cfg = cfg or load_config()
        if cfg.remote:
            raise EnvironmentSetupError(
                f"release {release!r}: the environment reads a local release folder; copy "
                f"it from {cfg.data_root}/{RELEASES}/ first"
            )
        folder = DataRoot(cfg.data_root).release(str(release))
    if not (folder / "manifest.json").is_file():
        raise EnvironmentSetupError(f"no release at {folder} (no manifest.json)")
    return folder


def open_environment(
    release: str | Path, cutoff: date | str, cfg: Config | None = None
) -> Environment:
    """MIRAI's API over ``release`` that sees only rows dated before ``cutoff`` (the query
    date; MIRAI's ``DEFAULT_END_DATE`` is the day before). Fuzzy look-ups embed with the
    model the release's ``mirai/info`` was embedded with: the local all-MiniLM-L6-v2, or
    ``cfg``'s endpoint when it serves the release's model."""
    folder = release_folder(release, cfg)
    if isinstance(cutoff, str):
        try:
            cutoff = date.fromisoformat(cutoff)
        except ValueError:
            raise EnvironmentSetupError(f"cutoff {cutoff!r} is not YYYY-MM-DD") from None
    model = json.loads((folder / "manifest.json").read_text())["embeddings"]["embedding_model"]
    return Environment(folder, cutoff, _embedder(model, cfg))


def _embedder(model: str, cfg: Config | None):
    from gdelt_forecast.ground import embeddings

    if model == embeddings.LOCAL_MODEL:  # the defaults embed locally
        return lambda texts: embeddings.embed(Config(), texts)
    if cfg is not None and cfg.release.embedding_url and cfg.release.embedding_model == model:
        return lambda texts: embeddings.embed(cfg, texts)

    def unavailable(texts):
        raise EnvironmentSetupError(
            f"the release's info embeddings are {model}'s: pass a config whose "
            "release.embedding_url serves it for fuzzy look-ups"
        )

    return unavailable
