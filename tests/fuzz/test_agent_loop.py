"""The agent loop against a scripted server that answers any text: any content, any tool
calls with any names and arguments, in either action. The run ends, every query has one of
MIRAI's end states, and everything it wrote reads back."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gdelt_forecast.agents.prompts import APIS
from gdelt_forecast.agents.react import END_STATES
from gdelt_forecast.agents.run import run_agents
from gdelt_forecast.environment import TOOLS
from tests.fuzz.strategies import JSON, LONG_TEXT, TEXT, nested
from tests.llm.scripted import llm_config
from tests.release.conftest import demo_cfg, offline_hub, release  # noqa: F401

pytestmark = pytest.mark.fuzz

NEWS = set(APIS["all"]) - set(APIS["events"])
NAMES = st.one_of(st.sampled_from([*TOOLS, "run_code"]), TEXT)
ARGUMENTS = st.one_of(st.builds(json.dumps, JSON), TEXT)
CALL = st.fixed_dictionaries({"name": NAMES, "arguments": ARGUMENTS})
REPLY = st.fixed_dictionaries({"content": LONG_TEXT, "calls": st.lists(CALL, max_size=2)})
# A whole run costs a few seconds: a fraction of the profile's examples.
FEW = settings(max_examples=max(3, settings.default.max_examples // 5))


def player(replies: list[dict]):
    def play(body: dict) -> dict:
        turn = sum(m["role"] == "assistant" for m in body["messages"])
        reply = replies[turn % len(replies)]
        calls = [
            {"id": f"c{turn}-{i}", "type": "function", "function": c}
            for i, c in enumerate(reply["calls"])
        ]
        return {"content": reply["content"], "tool_calls": calls}

    return play


@pytest.mark.parametrize("action", ["function", "code"])
def test_any_reply_ends_the_run_and_everything_written_reads_back(server, release, action):  # noqa: F811
    @FEW
    @given(replies=st.lists(REPLY, min_size=1, max_size=4))
    @example(
        replies=[
            {
                "content": "\ud800\x1b]0;x\x07",
                "calls": [
                    {
                        "name": "count_events",
                        "arguments": '{"date_range": {"start_date": "2025-W31-1"}}',
                    }
                ],
            }
        ]
    )
    @example(replies=[{"content": "Final Answer: \udc00", "calls": []}])
    # A refused call repeated (not run again) once counted as called (make fuzz found it).
    @example(
        replies=[
            {"content": "\ud800", "calls": [{"name": "get_news_articles", "arguments": "\ud800"}]}
        ]
    )
    @example(replies=[{"content": 'Final Answer: {"01": ' + nested(5_000) + "}", "calls": []}])
    @example(replies=[{"content": "", "calls": [{"name": "\ud800", "arguments": "\ud800"}]}])
    @example(replies=[{"content": "", "calls": [{"name": "run_code", "arguments": nested(10**5)}]}])
    def check(replies):
        server.player = player(replies)
        with tempfile.TemporaryDirectory() as root:  # a fresh cache and run each time
            cfg = llm_config(server, root, "agents.max_steps=3", "agents.time_limit_s=60")
            summary = run_agents(cfg, str(release), "subset", action, "events")
            out = Path(summary.path)
            queries = pq.read_table(out / "queries.parquet").to_pylist()
            assert len(queries) == summary.queries == 2
            assert {q["end_state"] for q in queries} <= set(END_STATES)
            steps = pq.read_table(out / "steps.parquet").to_pylist()
            assert 2 <= len(steps) <= 2 * (3 + 1)  # the steps, and perhaps an extraction
            for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
                json.loads(line)
            meta = json.loads((out / "run.json").read_text(encoding="utf-8"))
            assert not set(meta["tools_called"]) & NEWS  # an event-only run read no news
            assert not {s["tool"] for s in steps if s["state"] == "Valid Action"} & NEWS

    check()
