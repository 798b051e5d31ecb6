"""Embeddings from an OpenAI-compatible endpoint: a scripted server on 127.0.0.1 answers
like the OpenAI API (rows may come in any order, each with its index)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from gdelt_forecast.ground.config import load_config
from gdelt_forecast.ground.embeddings import EmbeddingError, embed, model_name


@pytest.fixture
def endpoint():
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's naming)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
            if body["model"] == "refused":
                self.send_response(400)
                self.end_headers()
                self.wfile.write(b'{"error": "unknown model"}')
                return
            rows = [
                {"index": i, "embedding": [len(t), i, 1.0]} for i, t in enumerate(body["input"])
            ]
            answer = json.dumps({"data": rows[::-1], "model": body["model"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    server.shutdown()
    server.server_close()


def test_rows_follow_the_inputs_in_chunks_with_the_key(endpoint, monkeypatch, tmp_path):
    url, seen = endpoint
    monkeypatch.setenv("EMBED_KEY", "secret")
    cfg = load_config(
        None,
        [
            f"release.embedding_url={url}",
            "release.embedding_api_key_env=EMBED_KEY",
            "release.embedding_model=m1",
        ],
        tmp_path,
    )
    texts = [f"text {'x' * i}\nline" for i in range(300)]
    vectors = embed(cfg, texts)
    assert vectors.dtype == np.float32 and vectors.shape == (300, 3)
    assert vectors[:, 0].tolist() == [len(t) for t in texts]  # in input order, not answer order
    assert [len(r["input"]) for r in seen] == [256, 44]
    assert seen[0]["path"] == "/v1/embeddings" and seen[0]["auth"] == "Bearer secret"
    assert "\n" not in seen[0]["input"][0]  # newlines become spaces, as MIRAI does
    assert model_name(cfg) == "m1"


def test_a_refusal_is_a_one_line_error(endpoint, tmp_path):
    url, _ = endpoint
    cfg = load_config(
        None, [f"release.embedding_url={url}", "release.embedding_model=refused"], tmp_path
    )
    with pytest.raises(EmbeddingError, match=r"answered HTTP 400: .*unknown model") as err:
        embed(cfg, ["China"])
    assert "\n" not in str(err.value)
