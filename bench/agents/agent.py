"""Benchmark: the agent harness (``gdelt-forecast agent``) in front of an instant scripted
OpenAI-compatible server, so what is timed is ours: the environment's calls, the sandbox's
round trips, the LLM client, the journal.

The release is the release bench's synthetic month (as bench/agents/environment.py builds it). Each
agent plays ``--steps`` actions, then answers: with ``function`` the actions cycle through
count_events, get_relation_distribution, get_events and get_news_articles on the query's
pair; with ``code`` each action is a snippet that calls two of them and prints a summary.
Both run at concurrency 1 and 16 (``llm.max_concurrency``) over ``--queries`` queries.

Reported: agent steps per second (wall), and per step the action's time (``action_s`` of
steps.parquet: the environment's call, or the sandbox's round trip with its calls), p50 and
p95 over every action but each query's first, whose p50 is given apart: a code run starts
its query's sandbox there. The target: the harness is never the bottleneck in front of a GPU server.
A 7-8B model on one H100 serves a few thousand output tokens per second; at ~150 output
tokens a step (a thought and a call) that is about 20 steps per second, so the harness
must sustain more than ``--need`` (20) steps per second at concurrency 16.

Run: ``python -m bench.agents.agent [--workdir bench-data] [--queries 32] [--steps 6]``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import time
from pathlib import Path

from bench.agents.environment import release_path
from bench.harness import verdict
from gdelt_forecast.agents.run import run_agents
from tests.llm.scripted import ScriptedServer, llm_config

QUERY = re.compile(
    r"head_entity=ISOCode\((\w+)\), relation=CAMEOCode\(\?\), tail_entity=ISOCode\((\w+)\)"
)
CALLS = (
    ("count_events", lambda s, o: {"head_entities": [s], "tail_entities": [o]}),
    ("get_relation_distribution", lambda s, o: {"head_entities": [s], "tail_entities": [o]}),
    ("get_events", lambda s, o: {"head_entities": [s], "tail_entities": [o]}),
    ("get_news_articles", lambda s, o: {"head_entities": [s], "keywords": ["trade"]}),
)
CODE = (
    "pair = dict(head_entities=[ISOCode('{s}')], tail_entities=[ISOCode('{o}')])\n"
    "d = get_relation_distribution(**pair)\n"
    "n = count_events(head_entities=[ISOCode('{s}')], relations=[CAMEOCode('04')])\n"
    "print({t}, n, sorted(d.items(), key=lambda kv: -kv[1])[:5])"
)


def player(action: str, steps: int):
    def play(body: dict) -> dict:
        messages = body["messages"]
        usage = {"prompt_tokens": 1000, "completion_tokens": 150}
        if "tools" not in body:
            return {"content": '<answer>{"04": ["042"]}</answer>', "usage": usage}
        s, o = QUERY.search(messages[1]["content"]).groups()
        turn = sum(m["role"] == "assistant" for m in messages)
        if turn >= steps:
            return {"content": 'Final Answer: {"04": ["042"]}', "usage": usage}
        if action == "function":
            name, args = CALLS[turn % len(CALLS)]
            call = {"name": name, "arguments": json.dumps(args(s, o))}
        else:
            call = {
                "name": "run_code",
                "arguments": json.dumps({"code": CODE.format(s=s, o=o, t=turn)}),
            }
        tool = {"id": f"c{turn}", "type": "function", "function": call}
        return {"content": "Thought: more data.", "tool_calls": [tool], "usage": usage}

    return play


def measure(
    release: Path, workdir: Path, action: str, concurrency: int, queries: int, steps: int
) -> dict:
    server = ScriptedServer()
    server.player = player(action, steps)
    root = workdir / "agents-bench" / f"{action}-{concurrency}"
    shutil.rmtree(root, ignore_errors=True)  # no journal or cache of an earlier run to resume
    try:
        cfg = llm_config(server, root, f"llm.max_concurrency={concurrency}")
        subset = _subset(release, queries)
        t0 = time.monotonic()
        summary = run_agents(cfg, str(subset), "test", action, "all")
        wall = time.monotonic() - t0
    finally:
        server.stop()
    import pyarrow.parquet as pq

    steps_table = pq.read_table(Path(summary.path) / "steps.parquet").to_pylist()
    # A query's first action also starts its sandbox: timed apart.
    acted = [s["action_s"] for s in steps_table if s["tool"] and s["step"] > 1]
    first = [s["action_s"] for s in steps_table if s["tool"] and s["step"] == 1]
    q = statistics.quantiles(acted, n=20)
    return {
        "action": action,
        "concurrency": concurrency,
        "queries": summary.queries,
        "steps": len(steps_table),
        "wall_s": round(wall, 2),
        "steps_per_s": round(len(steps_table) / wall, 1),
        "action_p50_ms": round(statistics.median(acted) * 1000, 2),
        "action_p95_ms": round(q[18] * 1000, 2),
        "first_action_p50_ms": round(statistics.median(first) * 1000, 2),
        "end_states": {k: v for k, v in summary.end_states.items() if v},
    }


def _subset(release: Path, n: int) -> Path:
    """The release with its test split cut to its first ``n`` queries (a link farm beside
    it, so the release itself stays as built)."""
    import pyarrow.parquet as pq

    out = release.parent.parent / f"bench-agent-{release.name}-{n}"
    if not out.exists():
        out.mkdir()
        for item in release.iterdir():
            (out / item.name).symlink_to(item)
        (out / "testset").unlink()
        (out / "testset").mkdir()
        for item in (release / "testset").iterdir():
            (out / "testset" / item.name).symlink_to(item)
        (out / "testset" / "queries.parquet").unlink()
        table = pq.read_table(release / "testset" / "queries.parquet")
        pq.write_table(table.slice(0, n), out / "testset" / "queries.parquet")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("bench-data"))
    parser.add_argument("--queries", type=int, default=32)
    parser.add_argument("--steps", type=int, default=6, help="actions before the answer")
    parser.add_argument("--need", type=float, default=20.0, help="steps/s a GPU server needs")
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    release = release_path(args.workdir.resolve(), args.rebuild)
    rows = [
        measure(release, args.workdir.resolve(), action, c, args.queries, args.steps)
        for action in ("function", "code")
        for c in (1, 16)
    ]
    print(
        f"{'action':<10}{'conc':>5}{'steps':>7}{'wall s':>8}{'steps/s':>9}"
        f"{'act p50 ms':>12}{'act p95 ms':>12}{'1st act p50 ms':>16}"
    )
    for r in rows:
        print(
            f"{r['action']:<10}{r['concurrency']:>5}{r['steps']:>7}{r['wall_s']:>8}"
            f"{r['steps_per_s']:>9}{r['action_p50_ms']:>12}{r['action_p95_ms']:>12}"
            f"{r['first_action_p50_ms']:>16}"
        )
    for r in (r for r in rows if r["concurrency"] == 16):
        ok = r["steps_per_s"] > args.need
        print(
            f"{verdict(ok)} {r['action']}: {r['steps_per_s']} steps/s at concurrency 16 "
            f"against {args.need:g} a GPU server needs"
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
