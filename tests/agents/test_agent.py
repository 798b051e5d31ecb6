"""MIRAI's ReAct agents against a scripted server that plays them through tool calls, on the
demo month's release: a function-calling run scored as computed by hand, a code run in the
sandbox, MIRAI's end states, answer extraction, truncation and resuming a killed run."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gdelt_forecast.agents.run import AgentError, run_agents
from gdelt_forecast.cli import main
from gdelt_forecast.environment import ISOCode, open_environment
from gdelt_forecast.scoring.evaluate import evaluate
from tests.llm.scripted import ScriptedServer, llm_config

QUERY = re.compile(
    r"head_entity=ISOCode\((\w+)\), relation=CAMEOCode\(\?\), tail_entity=ISOCode\((\w+)\)"
)
# The demo subset's queries, in query_id order; their answers are {"11": ["110"]} and
# {"02": ["020"]} (testset/subset.parquet).
USA_RUS, CHN_USA = "2025-08-02_USA_RUS_h1", "2025-08-12_CHN_USA_h1"


def call(name: str, arguments: dict, n: int = 0) -> dict:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {
        "content": f"Thought: I will call {name}.",
        "tool_calls": [{"id": f"call_{n}", "type": "function", "function": function}],
    }


def final(answer: dict) -> dict:
    return {"content": f"Thought: enough.\nFinal Answer: {json.dumps(answer)}"}


def usage(body: dict, reply: dict) -> dict:
    """Token counts the scripted server reports: known, and different per request."""
    return {
        "prompt_tokens": len(json.dumps(body["messages"])) // 4,
        "completion_tokens": len(json.dumps(reply)) // 4,
    }


def play(turns):
    """A player from ``turns(subject, object, messages, turn) -> reply``; extraction
    requests (no tools) get a fixed ``<answer>``."""

    def player(body: dict) -> dict:
        messages = body["messages"]
        if "tools" not in body:
            reply = {"content": 'Reformatted: <answer>{"02": ["020"]}</answer>'}
        else:
            subject, obj = QUERY.search(messages[1]["content"]).groups()
            turn = sum(m["role"] == "assistant" for m in messages)
            reply = turns(subject, obj, messages, turn)
        return {**reply, "usage": usage(body, reply)}

    return player


def test_a_function_calling_run_scores_as_computed_by_hand(server, release, tmp_path):
    # USA_RUS: predicting 11/110 and 04/042 for {"11": ["110"]} gives precision 1/2, recall
    # 1, F1 2/3 at both levels; CHN_USA's {"02": ["020"]} is predicted exactly.
    answers = {("USA", "RUS"): {"11": ["110"], "04": ["042"]}, ("CHN", "USA"): {"02": ["020"]}}

    def turns(subject, obj, messages, turn):
        if turn == 0:
            pair = {"head_entities": [subject], "tail_entities": [obj]}
            return call("get_relation_distribution", pair)
        return final(answers[subject, obj])

    server.player = play(turns)
    summary = run_agents(llm_config(server, tmp_path), str(release), "subset", "function")

    assert summary.end_states["Final Answer"] == 2 and summary.queries == 2
    for level in ("first_level", "second_level"):
        assert summary.scores[level]["precision"] == pytest.approx((50 + 100) / 2)
        assert summary.scores[level]["recall"] == pytest.approx(100)
        assert summary.scores[level]["f1"] == pytest.approx((200 / 3 + 100) / 2)

    out = Path(summary.path)
    steps = pq.read_table(out / "steps.parquet").to_pylist()
    valid, done = "Valid Action", "Final Answer"
    assert [(s["query_id"], s["step"], s["state"]) for s in steps] == [
        (USA_RUS, 1, valid), (USA_RUS, 2, done), (CHN_USA, 1, valid), (CHN_USA, 2, done),
    ]  # fmt: skip
    # The observation is what the environment at the query's cutoff returns.
    subset = pq.read_table(release / "testset/subset.parquet").to_pylist()
    rows = {r["query_id"]: r for r in subset}
    for s in (s for s in steps if s["step"] == 1):
        row = rows[s["query_id"]]
        with open_environment(release, row["cutoff"] + timedelta(days=1)) as env:
            pair = [ISOCode(row["subject"])], [ISOCode(row["object"])]
            seen = {c.code: n for c, n in env.get_relation_distribution(None, *pair).items()}
        want = json.dumps(seen) if seen else "Empty output from the function call."
        assert s["observation"] == want and s["tool"] == "get_relation_distribution"
    # Tokens are the server's counts, summed.
    counted = sum(len(json.dumps(r["messages"])) // 4 for r in server.requests)
    assert summary.prompt_tokens == counted == sum(s["prompt_tokens"] for s in steps)
    queries = pq.read_table(out / "queries.parquet").to_pylist()
    by_id = {q["query_id"]: json.loads(q["answer"]) for q in queries}
    assert by_id == {USA_RUS: answers["USA", "RUS"], CHN_USA: answers["CHN", "USA"]}
    assert {q["prompt_version"] for q in queries + steps} == {"mirai-react-v1"}
    lines = (out / "predictions.jsonl").read_text().splitlines()
    assert {json.loads(line)["query_id"] for line in lines} == {USA_RUS, CHN_USA}
    # The scorer reads the predictions file to the same table.
    scored = evaluate(release / "testset/subset.parquet", out / "predictions.jsonl")
    assert scored == summary.scores
    # The functions offered are MIRAI's All API; the system prompt names the history start.
    first = server.requests[0]
    assert len(first["tools"]) == 14 and "January 01, 2025" in first["messages"][0]["content"]
    assert main(["leaderboard", "--release", str(release), "--data-root", str(tmp_path)]) == 0


def test_a_code_run_in_the_sandbox_sees_nothing_after_its_cutoff(server, release, tmp_path):
    codes = [
        "print(count_events(head_entities=[ISOCode('{s}')], tail_entities=[ISOCode('{o}')]))",
        "print(get_events(DateRange(Date('2025-08-02'), None), [ISOCode('{s}')]))",
        "print(open('{release}/testset/queries.parquet', 'rb').read())",
        "x = 1\nx + 1",
    ]

    def turns(subject, obj, messages, turn):
        if turn < len(codes):
            code = codes[turn].format(s=subject, o=obj, release=release)
            return call("run_code", {"code": code}, turn)
        return final({"02": ["020"]})

    server.player = play(turns)
    cfg = llm_config(server, tmp_path)
    summary = run_agents(cfg, str(release), "subset", "code", "events")
    steps = pq.read_table(Path(summary.path) / "steps.parquet").to_pylist()
    usa = [s for s in steps if s["query_id"] == USA_RUS]
    valid, invalid = "Valid Action", "Invalid Action"
    assert [s["state"] for s in usa] == [valid, valid, invalid, valid, "Final Answer"]
    assert usa[0]["observation"].strip().isdigit()
    assert usa[1]["observation"] == "[]\n"  # the query's own day and after: nothing
    assert usa[2]["error"].startswith("FileNotFoundError")  # not there: a root of its own
    assert "Invalid action" in usa[2]["observation"]
    assert usa[3]["observation"] == "2\n"
    assert summary.end_states["Final Answer"] == 2
    meta = json.loads((Path(summary.path) / "run.json").read_text())
    assert set(meta["sandbox_layers"]) >= {"private-root", "landlock", "seccomp-allow-list"}
    assert len(server.requests[0]["tools"]) == 1


def unknown(s, o, m, t):  # an unknown function, each time with other arguments
    return call("get_future", {"days": t}, t)


def same(s, o, m, t):  # one call again and again: run once, refused twice, then the end
    return call("count_events", {"head_entities": [s]}, t)


def varied(s, o, m, t):  # different valid calls, past the step limit
    pair = {"head_entities": [s], "tail_entities": [o]}
    return call("count_events", pair if t % 2 else {"head_entities": [s]}, t)


def unsure(s, o, m, t):  # a reply with neither a call nor an answer
    return {"content": f"I am not sure ({t})."}


def test_a_function_call_of_the_wrong_types_is_an_invalid_action_not_a_crash(
    server, release, tmp_path
):
    bad = [("count_events", {"date_range": "2025-08-01"}), ("get_events", {"relations": 4}),
           ("browse_news_article", {"date": "2025-08-01"}),
           ("get_news_articles", {"text_description": "x " * 450_000})]  # fmt: skip

    def turns(subject, obj, messages, turn):
        return call(*bad[turn], turn) if turn < len(bad) else final({"02": ["020"]})

    server.player = play(turns)
    cfg = llm_config(server, tmp_path, "agents.max_invalid=10")
    summary = run_agents(cfg, str(release), "subset", "function", "all")
    assert summary.end_states["Final Answer"] == 2
    steps = pq.read_table(Path(summary.path) / "steps.parquet").to_pylist()
    errors = [s["error"] for s in steps if s["query_id"] == USA_RUS][: len(bad)]
    assert errors == [
        "ValueError: Input 'date_range' must be a DateRange object, but received type "
        "<class 'str'>",
        "ValueError: Input 'relations' must be a list, but received type <class 'int'>",
        "ValueError: browse_news_article() missing required argument: title",
        "ValueError: Input 'text_description' is 900,000 characters long, more than the 1,000 "
        "a call takes",
    ]


@pytest.mark.parametrize(
    ("turns", "overrides", "state", "steps"),
    [
        (unknown, [], "Invalid Action", 3),
        (same, [], "Repeated Actions", 4),
        (varied, ["agents.max_steps=2"], "Max Steps Exceeded", 2),
        (unsure, [], "Invalid Action", 3),
    ],
)
def test_mirai_end_states_then_answer_extraction(
    server, release, tmp_path, turns, overrides, state, steps
):
    server.player = play(turns)
    summary = run_agents(llm_config(server, tmp_path, *overrides), str(release), "subset")
    assert summary.end_states[state] == 2
    queries = pq.read_table(Path(summary.path) / "queries.parquet").to_pylist()
    ends = {(q["end_state"], q["steps"], q["extracted"]) for q in queries}
    assert ends == {(state, steps + 1, True)}  # the extraction is a step of its own
    assert {q["answer"] for q in queries} == {'{"02": ["020"]}'}  # from the extraction
    extraction = [r for r in server.requests if "tools" not in r]
    assert len(extraction) == 2
    assert "Please help me extract final answer" in extraction[0]["messages"][0]["content"]


def test_a_long_observation_is_truncated_and_says_so(server, release, tmp_path):
    def turns(subject, obj, messages, turn):
        return call("run_code", {"code": "print('z' * 500)"}) if turn == 0 else final({})

    server.player = play(turns)
    cfg = llm_config(server, tmp_path, "agents.observation_chars=100")
    summary = run_agents(cfg, str(release), "subset", "code")
    step = pq.read_table(Path(summary.path) / "steps.parquet").to_pylist()[0]
    note = "\n[observation truncated: the first 100 of 501 characters]"
    assert step["observation"] == "z" * 100 + note and step["observation_chars"] == 501
    sent = [r["messages"][-1] for r in server.requests if r["messages"][-1]["role"] == "tool"]
    assert [m["content"] for m in sent] == [step["observation"]] * 2


def test_a_killed_run_resumes_where_it_stopped(server, release, tmp_path):
    asked: list[str] = []

    def turns(subject, obj, messages, turn):
        asked.append(subject)
        if subject == "USA":  # this query hangs until the run is killed
            server.release.wait(60)
        return final({"02": ["020"]})

    server.player = play(turns)
    sets = [a for o in _llm_sets(server) for a in ("--set", o)]
    args = ["agent", "--release", str(release), "--data-root", str(tmp_path), *sets]
    cli = [sys.executable, "-m", "gdelt_forecast.cli", *args]
    proc = subprocess.Popen(cli, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal, deadline = None, time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        journal = next(iter(tmp_path.glob("agents/*/*/journal/queries.jsonl")), None)
        if journal and journal.read_text().strip():
            break
        time.sleep(0.2)
    proc.kill()
    proc.wait()
    assert [json.loads(x)["query_id"] for x in journal.read_text().splitlines()] == [CHN_USA]

    asked.clear()
    server.player = play(lambda s, o, m, t: asked.append(s) or final({"11": ["110"]}))
    summary = run_agents(llm_config(server, tmp_path), str(release), "subset")
    assert summary.resumed == 1 and asked == ["USA"]  # only the unfinished query ran
    queries = pq.read_table(Path(summary.path) / "queries.parquet").to_pylist()
    assert [(q["query_id"], q["end_state"]) for q in queries] == [
        (USA_RUS, "Final Answer"),
        (CHN_USA, "Final Answer"),
    ]
    assert summary.scores["second_level"]["f1"] == pytest.approx(100)  # both right


def _llm_sets(server: ScriptedServer) -> list[str]:
    return [f"llm.base_url={server.url}", "llm.model=scripted-model", "llm.backoff_s=0",
            "llm.timeout_s=120", "llm.max_retries=0"]  # fmt: skip


def test_k_samples_give_self_consistency_and_max_at_k(server, release, tmp_path):
    # Sample 0 (seed 10) answers 02/020, sample 1 (seed 11) 11/110: each query has one right
    # sample (Max@K 100), no code has a majority of two votes (self-consistency 0), and the
    # predictions are sample 0's (one query right: 50).
    def player(body):
        if "tools" not in body:
            return {"content": "<answer>{}</answer>", "usage": usage(body, {})}
        reply = final({"02": ["020"]} if body["seed"] == 10 else {"11": ["110"]})
        return {**reply, "usage": usage(body, reply)}

    server.player = player
    cfg = llm_config(server, tmp_path, "llm.seed=10", "llm.temperature=0.4")
    summary = run_agents(cfg, str(release), "subset", samples=2)
    assert summary.samples == 2 and summary.end_states["Final Answer"] == 4
    assert summary.scores["second_level"]["f1"] == pytest.approx(50)
    assert summary.consistency["max_at_k"]["second_level"]["f1"] == pytest.approx(100)
    assert summary.consistency["self_consistency"]["second_level"]["f1"] == pytest.approx(0)
    assert sorted(r["seed"] for r in server.requests) == [10, 10, 11, 11]

    with pytest.raises(AgentError, match="temperature 0"):
        run_agents(llm_config(server, tmp_path), str(release), "subset", samples=2)
