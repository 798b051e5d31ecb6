"""A scripted OpenAI-compatible server on 127.0.0.1, and the requests the tests send it.

``POST /v1/chat/completions`` answers by the last user message (the prompt): each prompt has
a list of actions, one used per request, the last one repeated; a prompt with no script gets
a valid answer; a ``player`` (a function of the request's body), when set, answers every
request instead, with an assistant message (content and tool calls) and its token counts,
or with a whole reply of its own (``{"body": ..., "status": ...}``, as ``raw`` makes one).
``GET /v1/models`` lists ``MODEL``. The server records every chat request and the most
requests it held at once.

Replies go out as a real server sends them, JSON with ``ensure_ascii``: a lone surrogate in
a content or a tool call travels as its escape (``"\\ud800"``). ``raw`` sends a body byte for
byte (a JSON text written by hand, bytes that are no UTF-8, no JSON at all).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from gdelt_forecast.ground.config import Config, load_config
from gdelt_forecast.llm import Answer, Request

MODEL = "scripted-model"
USAGE = {"prompt_tokens": 10, "completion_tokens": 5}  # per answered attempt


class Texts(Answer):  # the tests' answer: a list of event texts
    events: list[str]


def answer(content: str | dict, delay: float = 0.0, finish: str = "stop") -> dict[str, Any]:
    """A 200 whose message content is ``content`` (a dict is sent as its JSON), ended for
    ``finish`` ("length": cut at max_tokens)."""
    text = content if isinstance(content, str) else json.dumps(content)
    return {"status": 200, "content": text, "delay": delay, "finish": finish}


def error(status: int, delay: float = 0.0, **headers: str) -> dict[str, Any]:
    return {"status": status, "delay": delay, "headers": headers}


def raw(body: str | bytes, status: int = 200, delay: float = 0.0) -> dict[str, Any]:
    """A reply whose body is ``body`` as it stands (a str is sent as UTF-8, a lone surrogate
    in it as the escape JSON would give it, so a hand-written JSON text may hold any)."""
    if isinstance(body, str):
        body = body.encode("utf-8", "backslashreplace")
    return {"status": status, "body": body, "delay": delay}


def completion(
    content: str | None, tool_calls: list | None = None, finish: str = "stop", model: str = MODEL
) -> dict[str, Any]:
    """A chat completion's JSON, as the server sends it (for ``raw`` to send it altered)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {**USAGE, "total_tokens": sum(USAGE.values())},
    }


def valid(prompt: str) -> dict[str, Any]:
    return {"events": [f"answer to {prompt}"]}


def request(prompt: str, key: str = "ce1", step: str = "extract", fallback=None) -> Request:
    messages = [
        {"role": "system", "content": "You are an event timeline assistant."},
        {"role": "user", "content": prompt},
    ]
    return Request(key, step, messages, Texts, "timeline", fallback)


class ScriptedServer:
    def __init__(self) -> None:
        self.script: dict[str, list[dict[str, Any]]] = {}
        self.requests: list[dict[str, Any]] = []
        self.model_lists = 0
        self.player = None  # body -> {"content", "tool_calls", "usage"}, or a raw() reply
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        self.release = threading.Event()  # ends every pending delay (teardown)
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self.http.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}/v1"

    @property
    def port(self) -> int:
        return self.http.server_address[1]

    def prompts(self) -> list[str]:
        with self.lock:
            return [r["messages"][-1]["content"] for r in self.requests]

    def stop(self) -> None:
        self.release.set()
        self.http.shutdown()
        self.http.server_close()

    def _next(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = body["messages"][-1]["content"]
        with self.lock:
            self.requests.append(body)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            player = self.player
        if player is not None:  # outside the lock: a player may make its request wait
            played = player(body)
            if "body" in played:  # a whole reply of its own (raw)
                return {"status": 200, "delay": 0.0, **played}
            return {"status": 200, "delay": 0.0, "played": played}
        with self.lock:
            actions = self.script.get(prompt) or [answer(valid(prompt))]
            return actions.pop(0) if len(actions) > 1 else actions[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's naming)
                server.model_lists += 1
                models = [{"id": MODEL, "object": "model", "created": 0, "owned_by": "test"}]
                self._send(200, {"object": "list", "data": models})

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                body["authorization"] = self.headers.get("Authorization")
                action = server._next(body)
                server.release.wait(action["delay"])
                # Out of flight before the reply leaves, so the client's next request (sent
                # once this reply arrives) never overlaps it in the count.
                with server.lock:
                    server.in_flight -= 1
                if "body" in action:
                    self._send(action["status"], action["body"], action)
                    return
                if action["status"] != 200:
                    self._send(action["status"], {"error": {"message": "scripted"}}, action)
                    return
                message = {"role": "assistant", "content": action.get("content")}
                usage, finish = USAGE, action.get("finish", "stop")
                if played := action.get("played"):
                    message["content"] = played.get("content")
                    if played.get("tool_calls"):
                        message["tool_calls"], finish = played["tool_calls"], "tool_calls"
                    usage = played.get("usage", USAGE)
                self._send(
                    200,
                    {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": {**usage, "total_tokens": sum(usage.values())},
                    },
                )

            def _send(self, status: int, payload: dict | bytes, action: dict | None = None) -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for name, value in (action or {}).get("headers", {}).items():
                        self.send_header(name.replace("_", "-"), value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up on a slow reply

            def log_message(self, *args):
                pass

        return Handler


def llm_config(server: ScriptedServer, root, *overrides: str) -> Config:
    """No backoff, so retries cost milliseconds; a timeout that a loaded machine's slowest
    reply stays well within (the timeout tests set their own)."""
    base = [
        f"llm.base_url={server.url}",
        f"llm.model={MODEL}",
        "llm.timeout_s=5",
        "llm.backoff_s=0",
        "llm.max_retries=2",
        "llm.invalid_retries=1",
        "llm.max_concurrency=4",
    ]
    return load_config(None, [*base, *overrides], root)
