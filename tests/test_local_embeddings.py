"""The local model: all-MiniLM-L6-v2 with int8 weights on ONNX Runtime, against the float32
vectors sentence-transformers gave the same 1,000 texts (tests/fixtures/embeddings/)."""

import json
from pathlib import Path

import numpy as np

from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.embeddings import LOCAL_MODEL, embed, model_name

FIXTURES = Path(__file__).parent / "fixtures" / "embeddings"


def test_vectors_follow_sentence_transformers_float32_model():
    texts = json.loads((FIXTURES / "texts.json").read_text())
    reference = np.load(FIXTURES / "minilm_fp32.npy").astype(np.float32)
    vectors = embed(Config(), texts)
    assert vectors.shape == (1000, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    cosine = (vectors * reference).sum(1) / np.linalg.norm(reference, axis=1)
    # int8 weights cost a little: the same model, but not the same vectors (a model of its own)
    assert cosine.min() >= 0.996 and cosine.mean() >= 0.999
    assert cosine.mean() < 0.9999

    # what fuzzy look-ups use: each text's nearest other text is, nearly always, the same
    def nearest(v):
        similarity = v @ v.T
        np.fill_diagonal(similarity, -1)
        return similarity.argmax(1)

    assert (nearest(vectors) == nearest(reference)).mean() >= 0.97


def test_order_and_batching_leave_each_vector_alone():
    texts = json.loads((FIXTURES / "texts.json").read_text())[:130]
    whole = embed(Config(), texts)
    alone = embed(Config(), texts[::-1])[::-1]
    assert np.allclose(whole, alone, atol=1e-5)
    assert np.allclose(
        embed(Config(), ["line one\nline two"]), embed(Config(), ["line one line two"])
    )
    assert model_name(Config()) == LOCAL_MODEL
