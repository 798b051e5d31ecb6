"""The LLM client against a server that answers anything: any Unicode in a reply (lone
surrogates, NUL, controls, byte-order marks, escapes), any JSON against the answer model,
tool calls of any name and arguments, 10 MB replies, error replies that quote anything.

Every call is kept (ok or fallback) or counted as failed with one of ``client.REASONS``,
never an exception; what is kept is well-formed text, goes into the answer cache and the
call log (``llm_calls.parquet``) and reads back from both. The server sends JSON as a real
one does (``ensure_ascii``), so a lone surrogate travels as its escape (``"\\ud800"``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.wellformed import mended, wellformed, wellformed_value
from gdelt_forecast.llm import Request, Result, parse_numbered, request_hash, run, write_calls
from gdelt_forecast.llm.batch import Session
from gdelt_forecast.llm.cache import AnswerCache
from gdelt_forecast.llm.client import REASONS
from tests.fuzz.strategies import HOSTILE, JSON, LONG_TEXT, TEXT, assert_wellformed, nested
from tests.llm.scripted import completion, llm_config, raw, request

pytestmark = pytest.mark.fuzz

# A call is a fresh client and a round trip, a quarter of a second: the fuzz profile's 2,000
# examples would keep one test busy for minutes, so a test that calls runs at most 200 (the
# ci profile's 25 as they are); `make fuzz` repeats its passes with new seeds instead.
CALLS = settings(max_examples=min(settings.default.max_examples, 200))
STATUSES = ["ok", "fallback", "failed"]
TOOLS = [{"type": "function", "function": {"name": "look", "parameters": {"type": "object"}}}]


def reply(content, tool_calls=None, finish="stop") -> dict:
    """A chat completion as a real server sends it: JSON, every surrogate as its escape."""
    return raw(json.dumps(completion(content, tool_calls, finish)))


def numbered(text: str) -> dict:
    return {"events": parse_numbered(text)}


def settled(root: Path, cfg, requests: list[Request], results) -> None:
    """Each result kept or failed by reason; what is kept is well-formed and reads back from
    the answer cache; the call log of all of them reads back."""
    cache = AnswerCache(DataRoot(cfg.data_root).llm_cache)
    for asked_for, result in zip(requests, results, strict=True):
        assert result.status in ("ok", "fallback", "failed")
        assert result.hash == request_hash(asked_for, cfg.llm)
        assert_wellformed(result.raw)
        assert_wellformed(result.answer)
        hit = cache.get(result.hash, asked_for)
        if result.status == "failed":
            assert result.reason in REASONS and result.answer is None and hit is None
            continue
        assert result.answer is not None and hit is not None
        assert (hit.status, hit.answer, hit.raw) == (result.status, result.answer, result.raw)
        text = cache.path(result.hash).read_text(encoding="utf-8")  # strict UTF-8
        assert json.loads(text)["answer"] == result.answer
    write_calls(root / "llm_calls.parquet", results)
    rows = pq.read_table(root / "llm_calls.parquet").to_pylist()
    assert [(r["hash"], r["status"]) for r in rows] == [(r.hash, r.status) for r in results]
    assert [r["reason"] for r in rows] == [r.reason or None for r in results]
    assert_wellformed([r["error"] for r in rows])


def asked(server, played, requests: list[Request], *overrides: str) -> None:
    """``requests`` as one batch against ``server`` answering ``played(body)``, in a fresh
    data root; then ``settled``."""
    server.player = played
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            cfg = llm_config(server, root, "llm.max_retries=0", *overrides)
            settled(root, cfg, requests, run(cfg, requests))
    finally:
        server.player = None


@CALLS
@given(content=LONG_TEXT, finish=st.sampled_from(["stop", "length"]), fallback=st.booleans())
@example(content="\ud800", finish="stop", fallback=True)
@example(content="1. \ud800\x00; 2. \ufeffb", finish="stop", fallback=True)
@example(content=nested(100_000), finish="stop", fallback=True)
def test_any_content_is_kept_or_failed_by_reason(server, content, finish, fallback):
    requests = [request("p", fallback=numbered if fallback else None)]
    asked(server, lambda body: reply(content, finish=finish), requests)


@CALLS
@given(value=JSON | st.fixed_dictionaries({"events": st.lists(LONG_TEXT, max_size=4)}),
       ensure_ascii=st.booleans())  # fmt: skip
@example(value={"events": ["\ud800"]}, ensure_ascii=True)  # the escape inside the answer
@example(value={"events": ["\x00", "\udfff\ud800", "\ufeff"]}, ensure_ascii=False)
def test_any_json_answer_is_kept_or_failed_by_reason(server, value, ensure_ascii):
    """JSON that fits the answer model or not, with its strings given raw or as escapes: an
    escape decodes only in the answer's parse, past the client's mending of the reply."""
    content = json.dumps(value, ensure_ascii=ensure_ascii)
    asked(server, lambda body: reply(content), [request("p")])


# A tool call's arguments: any text, or JSON with its strings escaped or raw.
ARGUMENTS = TEXT | JSON.map(json.dumps) | JSON.map(lambda v: json.dumps(v, ensure_ascii=False))


@st.composite
def tool_calls(draw) -> list[dict]:
    calls = []
    for _ in range(draw(st.integers(0, 3))):
        arguments = draw(ARGUMENTS)
        calls.append({"id": draw(TEXT), "type": "function",
                      "function": {"name": draw(TEXT), "arguments": arguments}})  # fmt: skip
    return calls


HOSTILE_CALL = {"id": "\x00", "type": "function",
                "function": {"name": "\ud800", "arguments": '{"q": "\\ud800"}'}}  # fmt: skip


@CALLS
@given(content=st.none() | LONG_TEXT, calls=tool_calls())
@example(content="\ud800", calls=[HOSTILE_CALL])
def test_any_tool_call_is_kept_through_a_session(server, content, calls):
    """An agent's step (a message request, tools offered), one at a time through a Session:
    the message is taken as it comes, mended."""
    messages = [{"role": "user", "content": "look"}]
    step = Request("agent", "step:1", messages, None, tools=TOOLS)
    server.player = lambda body: reply(content, calls, "tool_calls" if calls else "stop")

    async def one(cfg):
        async with Session(cfg) as session:
            return await session.ask(step)

    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            cfg = llm_config(server, root, "llm.max_retries=0")
            result = asyncio.run(one(cfg))
            settled(root, cfg, [step], [result])
    finally:
        server.player = None
    assert result.status == "ok"
    assert len(result.answer["tool_calls"]) == len(calls)
    assert_wellformed(result.answer["tool_calls"])


@settings(max_examples=3)
@given(piece=TEXT.filter(len), answer=st.sampled_from(["schema", "message", "valid"]))
@example(piece="\n", answer="schema")  # the numbered-list fallback on 10 MB of blank lines
def test_a_10_mb_reply_is_kept_or_failed_by_reason(server, piece, answer):
    """10 MB of one text: as a message (kept, cached whole), as an answer to the schema (not
    JSON: failed, or a numbered list's fallback), inside a valid answer (kept)."""
    big = piece * (10_000_000 // (len(json.dumps(piece)) - 2) + 1)  # 10 MB as JSON sends it
    if answer == "valid":
        content, requests = json.dumps({"events": [big]}), [request("p")]
    elif answer == "schema":
        content, requests = big, [request("p", fallback=numbered)]
    else:
        content = big
        requests = [Request("k", "s", [{"role": "user", "content": "p"}], None)]
    asked(server, lambda body: reply(content), requests, "llm.timeout_s=60")


@pytest.mark.parametrize("blank", ["\n" * 30_000, "1. a" + " " * 12_000 + "b"])
def test_a_long_blank_reply_is_parsed_in_linear_time(blank):
    """The numbered-list fallback reads every answer that is not JSON (timelines, tasks). Its
    item marker and its "etc." suffix once rescanned a run of blanks from each of its
    characters: tens of thousands of blanks took a second or more, a 10 MB reply days."""
    started = time.monotonic()
    with contextlib.suppress(ValueError):
        parse_numbered(blank)
    assert time.monotonic() - started < 0.2  # seconds as it is; milliseconds when linear


@settings(max_examples=10)
@given(message=LONG_TEXT, status=st.sampled_from([400, 404, 422, 429, 500, 503]))
@example(message="\ud800\x00", status=400)
def test_an_error_reply_quoting_anything_is_counted_and_logged(server, message, status):
    """The error's message goes into ``error`` and so into the call log."""
    body = json.dumps({"error": {"message": message, "type": message, "code": message}})
    asked(server, lambda _: raw(body, status=status), [request("p")])


@given(answer=JSON, raw_text=LONG_TEXT, error=LONG_TEXT, status=st.sampled_from(STATUSES))
@example(answer={"\ud800": ["\x00"]}, raw_text="\udfff", error="\ud800", status="ok")
def test_what_the_client_keeps_is_written_and_read_back(answer, raw_text, error, status):
    """The writers on their own, with what the client hands them (text mended as it does,
    the server's error too): the cache gives back what it was given, the call log reads."""
    result = Result(
        hash="ab" * 32, key="k", step="s", model="m", status=status,
        answer=wellformed_value({"value": answer}, "test") if status != "failed" else None,
        raw=wellformed(raw_text, "test"), error=wellformed(error, "test"),
        reason="" if status == "ok" else "schema",
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        cache = AnswerCache(root / "llm_cache")
        cache.put(result)
        hit = cache.get(result.hash, request("p"))
        if status == "failed":
            assert hit is None
        else:  # as JSON, keys sorted as the cache writes them: a NaN is no NaN's equal
            same = json.dumps(hit.answer, sort_keys=True) == json.dumps(
                result.answer, sort_keys=True
            )
            assert same and hit.raw == result.raw
        write_calls(root / "llm_calls.parquet", [result])
        [row] = pq.read_table(root / "llm_calls.parquet").to_pylist()
        mended_error = row["error"] or ""  # a leading BOM removed, each other character kept
        assert_wellformed(mended_error)
        assert len(mended_error) == len(error.removeprefix("\ufeff"))


def test_a_lone_surrogate_reply_is_cached_mended(server, tmp_path):
    """A reply ``"\\ud800"`` (the JSON escape, as a server sends it): the answer cache's file
    is UTF-8 that reads back, the text holds U+FFFD, and the boundary counted it; so too an
    answer whose JSON holds the escape."""
    message = Request("k", "s", [{"role": "user", "content": "p"}], None)
    body = (
        '{"id": "c", "object": "chat.completion", "created": 0, "model": "scripted-model", '
        '"choices": [{"index": 0, "finish_reason": "stop", "message": '
        '{"role": "assistant", "content": "\\ud800"}}]}'
    )
    assert "\\ud800" in body and "\ud800" not in body  # the escape, not the character
    server.player = lambda _: raw(body)
    before = mended().get("llm reply", 0)
    try:
        cfg = llm_config(server, tmp_path)
        [result] = run(cfg, [message])
    finally:
        server.player = None
    assert (result.status, result.answer["content"], result.raw) == ("ok", "\ufffd", "\ufffd")
    assert mended()["llm reply"] > before
    cache = AnswerCache(DataRoot(cfg.data_root).llm_cache)
    stored = json.loads(cache.path(result.hash).read_text(encoding="utf-8"))
    assert stored["answer"]["content"] == stored["raw"] == "\ufffd"
    assert cache.get(result.hash, message).answer == result.answer
    settled(tmp_path, cfg, [message], [result])

    # The escape inside the answer's JSON: the content '{"events": ["\ud800"]}' is well-formed
    # text, the surrogate appears only when the answer is parsed.
    before = mended()["llm reply"]
    server.player = lambda _: reply('{"events": ["\\ud800", "a\\u0000b"]}')
    try:
        [result] = run(cfg, [request("escaped")])
    finally:
        server.player = None
    assert (result.status, result.answer) == ("ok", {"events": ["\ufffd", "a\ufffdb"]})
    assert mended()["llm reply"] == before + 2
    stored = json.loads(cache.path(result.hash).read_text(encoding="utf-8"))
    assert stored["answer"] == {"events": ["\ufffd", "a\ufffdb"]}
    settled(tmp_path, cfg, [request("escaped")], [result])


def test_hostile_strings_in_a_valid_answer_are_kept_mended(server, tmp_path):
    """Each of the hostile strings, raw and as escapes, in one valid answer."""
    events = [*HOSTILE, *(json.dumps(h) for h in HOSTILE)]
    server.player = lambda _: reply(json.dumps({"events": events}))
    try:
        cfg = llm_config(server, tmp_path)
        [result] = run(cfg, [request("p")])
    finally:
        server.player = None
    assert result.status == "ok" and len(result.answer["events"]) == len(events)
    settled(tmp_path, cfg, [request("p")], [result])


# Replies that are no chat completion: the client must refuse them (REFUSED), not raise.
# The openai library hands the completion's fields over unchecked and lets its own JSON
# decoding error through: each @example below raised (AttributeError, TypeError,
# JSONDecodeError, UnicodeDecodeError, RecursionError) before the client read them guarded.
NOT_A_COMPLETION = st.one_of(
    st.binary(max_size=200),
    JSON.map(json.dumps),
    st.builds(
        lambda key, value: json.dumps({**completion("{}"), key: value}),
        st.sampled_from(["choices", "usage", "id"]),
        JSON,
    ),
)


@settings(max_examples=10)
@given(body=NOT_A_COMPLETION)
@example(body=b"not json")
@example(body=b"\xff\xfe not json")
@example(body=b"null")
@example(body=json.dumps({"choices": "x"}))
@example(body=json.dumps({"choices": [{"message": None}]}))
@example(body=json.dumps({**completion("{}"), "usage": {"prompt_tokens": None}}))
@example(body=b"[" * 100_000 + b"]" * 100_000)
def test_a_reply_that_is_no_chat_completion_is_refused(server, body):
    asked(server, lambda _: raw(body), [request("p")])
