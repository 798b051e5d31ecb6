"""The llm way to write the tasks' generated parts, against a scripted OpenAI-compatible
server on 127.0.0.1: the model's parts where they pass the rules, the extractive version
where they do not, every call logged and cached."""

import re

import pyarrow.parquet as pq
import pytest

from gdelt_forecast.ground.config import load_config
from gdelt_forecast.pipeline.runner import run
from tests.llm.scripted import MODEL, ScriptedServer, answer, error
from tests.release.conftest import MONTH, demo_month

# The RUS-USA story's true events are coded (United States, Disapprove, Russia, Moscow).
TRUE_ARGUMENTS = {"subject": "United States", "event_type": "Disapprove, not specified",
                  "object": "Russia", "location": "Moscow, Moskva, Russia"}  # fmt: skip


def negative(text, **arguments):
    return {
        "text": text,
        "subject": None,
        "event_type": None,
        "object": None,
        "location": None,
        **arguments,
    }


def from_target(prompt: str) -> dict:
    """A question and answer that say only what the prompt's target event says: the asked
    argument's value as the answer, the event's text less the answer's words as the
    question."""
    argument = re.search(r"on the (.+?) argument", prompt)[1].replace(" ", "_")
    when, text = re.search(r"^Target evolution event: (\S+): (.*)$", prompt, re.M).groups()
    listed = re.search(r"^Its arguments: (.*)$", prompt, re.M)[1]
    values = dict(part.split(": ", 1) for part in listed.split("; "))
    gold = when if argument == "time" else values[argument]
    said = set(re.findall(r"\w+", gold.lower()))
    question = " ".join(w for w in text.split() if not set(re.findall(r"\w+", w.lower())) & said)
    return {"question": question, "answer": gold}


class TaskServer(ScriptedServer):
    """Answers by the task the response_format names, AQA and MCAC from the target event
    (rule 7). For the RUS-USA story (its prompts name Volker) the AQA call fails, the MCAC
    answer is a place the target never names (rule 7 turns it down) and one MCNC negative
    repeats a true event's arguments."""

    def _next(self, body):
        with self.lock:
            self.requests.append(body)
        task = body["response_format"]["json_schema"]["name"]
        russia = "Volker" in body["messages"][-1]["content"]
        prompt = body["messages"][-1]["content"]
        if task == "aqa":
            return error(500) if russia else answer(from_target(prompt))
        if task == "mcac":
            invented = {"question": "Where will it happen?", "answer": "Alaska"}
            qa = invented if russia else from_target(prompt)
            return answer({**qa, "wrong": ["Paris", "Berlin", "Rome"]})
        third = (
            negative("Russia expels diplomats.", **TRUE_ARGUMENTS)
            if russia
            else negative("Talks collapse in Geneva.")
        )
        return answer(
            {"negatives": [negative("Ships collide."), negative("A summit is held."), third]}
        )


@pytest.fixture
def tasks_server():
    server = TaskServer()
    yield server
    server.stop()


def test_llm_tasks_on_the_demo_month(tasks_server, demo_built, tmp_path):
    cfg = demo_month(demo_built, tmp_path / "data", tmp_path / "mirror")
    run("timelines", cfg, MONTH)  # extractive timelines; the tasks' parts then by the model
    overrides = [
        f"llm.base_url={tasks_server.url}",
        f"llm.model={MODEL}",
        "timelines.method=llm",
        "llm.max_retries=0",
    ]
    cfg = load_config(None, overrides, cfg.data_root)
    summary = run("tasks", cfg, MONTH)
    out = cfg.data_root / "tasks" / MONTH
    rows = {t: pq.read_table(out / t).to_pylist() for t in summary.records}
    calls = pq.read_table(out / "llm_calls.parquet").to_pylist()
    assert sorted(c["step"] for c in calls) == ["AQA", "AQA", "MCAC", "MCAC", "MCNC", "MCNC"]
    assert sorted(c["status"] for c in calls) == ["failed"] + ["ok"] * 5
    assert summary.records == dict.fromkeys(("STF", "LTF", "AQA", "MCNC", "MCAC", "VQA"), 2)
    assert summary.kept_extractive == {"AQA": 1, "MCAC": 1, "MCNC": 1}
    assert summary.soundness["7-generated-grounded"] == {"records": 1}  # RUS's MCAC
    assert summary.negatives_discarded == {"extractive": 0, "llm": 1}

    def by_story(task):
        return {
            ("RUS" if "Volker" in str(r["background"] + r["target"]) else "CHN"): r
            for r in rows[task]
        }

    aqa = by_story("AQA")
    assert aqa["CHN"]["method"] == "llm" and aqa["CHN"]["answer"]
    assert aqa["CHN"]["answer"] not in aqa["CHN"]["question"]
    assert (aqa["CHN"]["model"], aqa["CHN"]["prompt_version"]) == (MODEL, "openforecast-tasks-v1")
    assert aqa["RUS"]["method"] == "extractive" and aqa["RUS"]["model"] is None
    mcac = by_story("MCAC")
    gold = mcac["CHN"]["candidates"]["ABCD".index(mcac["CHN"]["answer"])]
    assert mcac["CHN"]["method"] == "llm"
    assert sorted(mcac["CHN"]["candidates"]) == sorted(["Berlin", "Paris", "Rome", gold])
    assert mcac["RUS"]["method"] == "extractive" and "Alaska" not in mcac["RUS"]["candidates"]
    mcnc = by_story("MCNC")
    assert mcnc["CHN"]["method"] == "llm" and sorted(mcnc["CHN"]["candidates"]) == sorted(
        [
            "Ships collide.",
            "A summit is held.",
            "Talks collapse in Geneva.",
            mcnc["CHN"]["target"][0]["text"],
        ]
    )
    assert mcnc["RUS"]["method"] == "extractive"  # two negatives left: not enough
    vqa = by_story("VQA")
    assert (
        vqa["CHN"]["method"] == "llm" and vqa["CHN"]["candidates"][0] in mcnc["CHN"]["candidates"]
    )
    assert {r["method"] for r in rows["STF"] + rows["LTF"]} == {"extractive"}

    run("tasks", cfg, MONTH)  # a re-run asks again only what failed
    assert len(tasks_server.requests) == 7
