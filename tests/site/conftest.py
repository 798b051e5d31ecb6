"""Data roots for the site's tests, each holding the demo month's release and two agent runs
(function calls and code in the sandbox) played by the scripted server on 127.0.0.1:

- ``demo_site``: as the demo builds them;
- ``planted_site``: with a ``<script>``, an ``<img onerror>`` and a ``javascript:`` link planted
  in a news title and URL, a timeline event (and the records that show it), a reasoning
  event, a leaderboard row's model, an agent's thoughts and an observation (printed by the
  agent's code).

Each site is built once per session by ``gdelt-forecast site``, ``PAGE_SIZE`` to a page.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gdelt_forecast.agents import leaderboard
from gdelt_forecast.agents.run import run_agents
from gdelt_forecast.cli import main
from tests.agents.test_agent import call, play
from tests.llm.scripted import ScriptedServer, llm_config
from tests.release.conftest import demo_cfg, offline_hub, release  # noqa: F401

MARK = "window.__planted = (window.__planted || 0) + 1"
SCRIPT = f"<script>{MARK}</script>"
IMG = f'<img src=x onerror="{MARK}">'
LINK = f"javascript:{MARK}"
PLANTED = f'{SCRIPT} {IMG} <a href="{LINK}">click</a>'


def _root(tmp_path_factory, folder: Path, name: str) -> Path:
    """A data root of its own holding a copy of the release in ``folder``."""
    root = tmp_path_factory.mktemp(name)
    shutil.copytree(folder, root / "releases" / folder.name)
    (root / "releases" / "LATEST").write_text(folder.name)
    return root


def _agents(root: Path, thought: str, printed: str) -> None:
    """A function-calling run and a code run on the subset, two steps each per query."""
    server = ScriptedServer()
    try:
        for action in ("function", "code"):

            def turns(subject, obj, messages, turn, action=action):
                if turn:
                    answer = json.dumps({"02": ["020"]})
                    return {"content": f"Thought: {thought}\nFinal Answer: {answer}"}
                if action == "code":
                    reply = call("run_code", {"code": f"print({printed!r})"})
                else:
                    reply = call("count_events", {"head_entities": [subject]})
                return {**reply, "content": f"Thought: {thought}"}

            server.player = play(turns)
            run_agents(llm_config(server, root), "2025.08.0", "subset", action)
    finally:
        server.stop()


PAGE_SIZE = 10  # the demo's 15 test queries fill two pages


def _site(root: Path) -> Path:
    args = ["site", "--config", "configs/demo.yaml", "--data-root", str(root)]
    args += ["--set", f"site.page_size={PAGE_SIZE}", "--out", str(root / "site")]
    assert main(args) == 0
    return root / "site"


@pytest.fixture(scope="session")
def demo_site(tmp_path_factory, release) -> Path:  # noqa: F811 (the imported fixture)
    root = _root(tmp_path_factory, release, "demo-site")
    _agents(root, "I will count the events.", "counted")
    return _site(root)


def _edit(path: Path, change) -> None:
    """``change(rows)`` applied to the Parquet file at ``path`` in place, its schema kept."""
    table = pq.read_table(path)
    rows = table.to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def _first_item(column: str, text: str):
    """A change that sets the text of the first item of ``column``'s list in every row."""
    return lambda rows: [r[column][0].update(text=text) for r in rows if r[column]]


@pytest.fixture(scope="session")
def planted_site(tmp_path_factory, release) -> Path:  # noqa: F811 (the imported fixture)
    root = _root(tmp_path_factory, release, "planted-site")
    folder = root / "releases" / release.name
    _edit(
        folder / "news/2025-07-part-0.parquet",
        lambda r: r[0].update(title=f"News {PLANTED}", url=LINK),
    )
    _edit(folder / "timelines/timelines.parquet", lambda r: r[0].update(text=f"Event {PLANTED}"))
    _edit(folder / "tasks/MCNC/dev.parquet", _first_item("background", f"Seen {PLANTED}"))
    _edit(folder / "reasoning/I-CEC/test.parquet", _first_item("events", f"EV2 {PLANTED}"))
    _agents(root, f"Thought {PLANTED} [go]({LINK})", f"Observed {PLANTED}")
    board = root / "agents" / release.name / leaderboard.FILE
    leaderboard.add_task(board, {"release": release.name, "run": "planted", "task": "MCNC",
                                 "model": f"Model {PLANTED}", "accuracy": 50.0, "f1": None,
                                 "prompt_version": "v1", "queries": 2, "prompt_tokens": 1,
                                 "completion_tokens": 1})  # fmt: skip
    return _site(root)
