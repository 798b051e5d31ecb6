"""One request's path: JSON checked against its schema, re-asked, parsed from the paper's
numbered list, or failed; retries on 429, 5xx and timeouts; a 400 fails at once."""

import time

import pyarrow.parquet as pq
import pytest

from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.llm import parse_numbered, run, summarize, write_calls
from tests.llm.scripted import (
    MODEL,
    ScriptedServer,
    answer,
    error,
    llm_config,
    request,
    valid,
)


def numbered(text: str) -> dict:
    return {"events": parse_numbered(text)}


def ask(server, tmp_path, prompt, *overrides, fallback=None):
    [result] = run(llm_config(server, tmp_path, *overrides), [request(prompt, fallback=fallback)])
    return result


def test_valid_answer_with_the_request_as_asked(server, tmp_path, monkeypatch):
    monkeypatch.setenv("GDELT_FORECAST_LLM_API_KEY", "secret")
    result = ask(server, tmp_path, "p")
    assert (result.status, result.answer, result.error) == ("ok", valid("p"), "")
    assert (result.attempts, result.prompt_tokens, result.completion_tokens) == (1, 10, 5)
    assert not result.cached and result.model == MODEL and len(result.hash) == 64
    [sent] = server.requests
    assert sent["authorization"] == "Bearer secret"
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "timeline",
            "strict": True,
            "schema": {
                "type": "object",
                "title": "Texts",
                "additionalProperties": False,
                "properties": {
                    "events": {"type": "array", "items": {"type": "string"}, "title": "Events"}
                },
                "required": ["events"],
            },
        },
    }
    assert (sent["model"], sent["temperature"], sent["max_tokens"]) == (MODEL, 0.0, 1024)
    assert "seed" not in sent


def test_seed_is_sent_when_set(server, tmp_path):
    ask(server, tmp_path, "p", "llm.seed=7", "llm.temperature=1.0")
    [sent] = server.requests
    assert (sent["seed"], sent["temperature"]) == (7, 1.0)


def test_raw_control_character_is_survived(server, tmp_path):
    # Parsed (a raw newline inside a string is vLLM's), and mended as every reply is: the
    # control character that no file should hold raw becomes U+FFFD, the newline stays.
    server.script["p"] = [answer('{"events": ["a\x01b\nc"]}')]
    result = ask(server, tmp_path, "p")
    assert (result.status, result.answer, result.attempts) == ("ok", {"events": ["a\ufffdb\nc"]}, 1)


@pytest.mark.parametrize("bad", ["not json", '{"events": "one"}', '{"events": []'])
def test_invalid_answer_is_asked_again(server, tmp_path, bad):
    server.script["p"] = [answer(bad), answer(valid("p"))]
    result = ask(server, tmp_path, "p")
    assert (result.status, result.answer) == ("ok", valid("p"))
    # both answers cost tokens
    assert (result.attempts, result.prompt_tokens, result.completion_tokens) == (2, 20, 10)


def test_numbered_list_falls_back_after_the_retries(server, tmp_path):
    server.script["p"] = [answer("1. Troops enter Donbas; 2. Sanctions follow")]
    result = ask(server, tmp_path, "p", "llm.invalid_retries=2", fallback=numbered)
    assert result.status == "fallback"
    assert result.answer == {"events": ["Troops enter Donbas", "Sanctions follow"]}
    assert result.error.startswith("invalid answer: ")  # why the JSON was refused
    assert (result.attempts, result.prompt_tokens, result.completion_tokens) == (3, 30, 15)
    assert result.raw == "1. Troops enter Donbas; 2. Sanctions follow"


def test_unparseable_answer_fails_with_the_reasons(server, tmp_path):
    server.script["p"] = [answer("I cannot help with that.")]
    result = ask(server, tmp_path, "p", fallback=numbered)
    assert (result.status, result.answer, result.attempts) == ("failed", None, 2)
    assert "invalid answer" in result.error and "fallback: no numbered list" in result.error
    assert result.raw == "I cannot help with that."


@pytest.mark.parametrize(
    ("answers", "reason"),
    [
        ([answer('{"events": ["a", "b', finish="length")], "cut at max_tokens"),
        ([answer("{events: a}")], "invalid JSON"),
        ([answer({"events": "a"})], "schema"),
        ([error(503)], "transport"),
        ([error(400)], "refused"),
    ],
)
def test_a_failure_says_its_reason_in_the_result_the_calls_and_the_summary(
    server, tmp_path, answers, reason
):
    """An answer cut at max_tokens is asked once more (llm.invalid_retries), as any answer
    whose JSON is refused, then fails for that reason."""
    server.script["p"] = answers
    result = ask(server, tmp_path, "p", "llm.max_retries=1")
    assert (result.status, result.reason) == ("failed", reason)
    assert result.attempts == 2 or reason == "refused"
    write_calls(tmp_path / "calls.parquet", [result])
    assert pq.read_table(tmp_path / "calls.parquet").column("reason").to_pylist() == [reason]
    summary = summarize([result], 1.0)
    assert summary.failed_by_reason == {reason: 1} and f"1 {reason}" in summary.line()


def test_a_clean_answer_has_no_reason_and_a_fallback_keeps_why(server, tmp_path):
    server.script["p"] = [answer("1. a", finish="length"), answer(valid("p"))]
    result = ask(server, tmp_path, "p")
    assert (result.status, result.reason, result.attempts) == ("ok", "", 2)
    assert summarize([result], 1.0).retried == 1
    server.script["q"] = [answer("1. a")]
    result = ask(server, tmp_path, "q", fallback=numbered)
    assert (result.status, result.reason) == ("fallback", "invalid JSON")


def test_without_a_fallback_an_invalid_answer_fails(server, tmp_path):
    server.script["p"] = [answer("nope")]
    result = ask(server, tmp_path, "p", "llm.invalid_retries=0")
    assert (result.status, result.attempts) == ("failed", 1)
    assert result.error.endswith("fallback: no fallback parser")


def test_fallback_answer_is_held_to_the_schema(server, tmp_path):
    server.script["p"] = [answer("1. a")]
    result = ask(server, tmp_path, "p", fallback=lambda text: {"items": parse_numbered(text)})
    assert result.status == "failed" and result.error.endswith(
        "fallback: $.events: Field required; $.items: Extra inputs are not permitted"
    )


def test_500_then_ok_counts_only_answered_tokens(server, tmp_path):
    server.script["p"] = [error(500), error(503), answer(valid("p"))]
    result = ask(server, tmp_path, "p")
    assert (result.status, result.attempts) == ("ok", 3)
    assert (result.prompt_tokens, result.completion_tokens) == (10, 5)


def test_429_honours_retry_after(server, tmp_path):
    server.script["p"] = [error(429, retry_after="0"), answer(valid("p"))]
    started = time.monotonic()
    result = ask(server, tmp_path, "p", "llm.backoff_s=30")  # the backoff would take 30 s
    assert (result.status, result.attempts) == ("ok", 2)
    assert time.monotonic() - started < 5


def test_backoff_doubles(server, tmp_path):
    server.script["p"] = [error(502), error(502), answer(valid("p"))]
    result = ask(server, tmp_path, "p", "llm.backoff_s=0.1")
    assert (result.status, result.attempts) == ("ok", 3)
    assert result.latency_s >= 0.1 + 0.2


def test_slow_reply_times_out_and_is_retried(server, tmp_path):
    server.script["p"] = [answer(valid("p"), delay=3), answer(valid("p"))]
    result = ask(server, tmp_path, "p", "llm.timeout_s=1")
    assert (result.status, result.attempts) == ("ok", 2)
    assert (result.prompt_tokens, result.completion_tokens) == (10, 5)  # the timeout: none
    assert result.latency_s >= 1


def test_slow_reply_within_the_timeout_is_waited_for(server, tmp_path):
    server.script["p"] = [answer(valid("p"), delay=0.3)]
    assert ask(server, tmp_path, "p", "llm.timeout_s=1").attempts == 1


def test_retries_run_out(server, tmp_path):
    server.script["p"] = [error(500)]
    result = ask(server, tmp_path, "p")
    assert (result.status, result.attempts, result.answer) == ("failed", 3, None)
    assert result.error.startswith("InternalServerError: Error code: 500")


def test_400_fails_at_once(server, tmp_path):
    server.script["p"] = [error(400), answer(valid("p"))]
    result = ask(server, tmp_path, "p")
    assert (result.status, result.attempts) == ("failed", 1)
    assert result.error.startswith("BadRequestError: Error code: 400")
    assert server.prompts() == ["p"]


def test_server_down_fails_the_stage_once(tmp_path):
    gone = ScriptedServer()
    gone.stop()
    cfg = llm_config(gone, tmp_path)
    with pytest.raises(StageError, match="does not answer"):
        run(cfg, [request("p")])


def test_another_model_fails_the_stage(server, tmp_path):
    cfg = llm_config(server, tmp_path, "llm.model=meta-llama/other")
    with pytest.raises(StageError, match=f"serves {MODEL}, not meta-llama/other"):
        run(cfg, [request("p")])
    assert server.requests == []
