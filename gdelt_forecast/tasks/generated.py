"""The ``llm`` way to write the generated parts: AQA's question, MCAC's question and wrong
answers, MCNC's negatives (prompts in ``prompts/<PROMPT_VERSION>/``, after the paper's
Table 12, asking for JSON). One batch for the month, through the timelines' client (cache,
resume, ``llm_calls.parquet``).

The model writes text; the rules still decide what is kept:
- an AQA or MCAC question and answer must be non-empty; MCAC's wrong answers must be no
  near-duplicate of the gold one, of each other or of a value of the argument in the story;
- an MCNC negative that is a near-duplicate of a true event of the story or of another
  negative is rejected (soundness rule 4); one whose subject, event type, object and
  location all equal a true event's is discarded (the paper's rule); both are counted;
- an AQA or MCAC question or gold answer that says what its target event does not, or a
  question that gives its answer away, is turned down (soundness rule 7,
  :func:`gdelt_forecast.contract.leakage.generated_unsaid`), and counted;
- a record the model's answer cannot complete (a failed call, fewer than three wrong
  answers or negatives left, rule 7) keeps its ``extractive`` version, and says so in
  ``method``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Annotated

from pydantic import Field

from gdelt_forecast.contract import grounding, leakage, sound
from gdelt_forecast.contract.names import LLM
from gdelt_forecast.contract.similarity import first_near_duplicate
from gdelt_forecast.ground.config import Config
from gdelt_forecast.llm import Answer, Request, Result, parse_numbered, run
from gdelt_forecast.llm.schema import chars
from gdelt_forecast.tasks import extractive, records
from gdelt_forecast.tasks.cut import after
from gdelt_forecast.timelines.written import listed

PROMPT_VERSION = "openforecast-tasks-v1"
PROMPTS = Path(__file__).parent / "prompts" / PROMPT_VERSION


# Bounds as the timelines' events have them (written.Event), so that an answer fits 512
# tokens (seen with SmolLM2: three negatives of 300 characters ran on to 512 tokens).
class QA(Answer):
    question: chars(200)
    answer: chars(60)


class MCAC(QA):
    wrong: Annotated[list[chars(60)], Field(min_length=3, max_length=3)]


class Negative(Answer):
    text: chars(200)
    subject: chars(60) | None
    event_type: chars(60) | None
    object: chars(60) | None
    location: chars(60) | None


class MCNC(Answer):
    negatives: Annotated[list[Negative], Field(min_length=3, max_length=3)]


@cache
def scaffolding(version: str = PROMPT_VERSION) -> frozenset[str]:
    """The words of the task prompts of ``version`` and of their answers' field names, which
    rule 7 never counts as support. ValueError for a version this code does not have."""
    return grounding.scaffolding(PROMPTS.parent / version, {*MCAC.model_fields, *MCNC.model_fields})


def render(name: str, **fields: str) -> str:
    """The prompt file ``name`` of this version, filled in."""
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8").format(**fields)


def _negatives_from_list(text: str) -> dict:
    """The paper's numbered-list answer: texts only."""
    return {
        "negatives": [
            {"text": t, "subject": None, "event_type": None, "object": None, "location": None}
            for t in parse_numbered(text)
        ]
    }


def _described(atom: dict) -> str:
    return "; ".join(f"{a}: {extractive.value(atom, a) or 'none'}" for a in extractive.ARGUMENTS)


def _target(row: dict, pools: extractive.Pools) -> tuple[dict, list[dict]]:
    """The row's target atomic event, and the story's other events after the cut."""
    story = pools.atoms[row["complex_event_id"]]
    text = row["target"][0]["text"]
    target = next(a for a in story if a["text"] == text)
    later = [a for a in story if after(a, row["cut_date"]) and a["text"] != text]
    return target, later


def request(row: dict, pools: extractive.Pools) -> Request:
    target, later = _target(row, pools)
    fields = {
        "background": listed(row["background"]),
        "evolution": listed(later) or "none",
        "target": f"{target['date']}: {target['text']}",
        "arguments": _described(target),
        "argument": (row["argument"] or "").replace("_", " "),
    }
    task = row["task"]
    prompt = render(task.lower(), **fields)
    answer, fallback = {
        "AQA": (QA, None),
        "MCAC": (MCAC, None),
        "MCNC": (MCNC, _negatives_from_list),
    }[task]
    messages = [{"role": "user", "content": prompt}]
    return Request(row["id"], task, messages, answer, task.lower(), fallback)


# What turned a model's proposal down, as the release's "Model-built parts" names it: the
# screen's verdicts (extractive.screen) and rule 7.
DROPS = {
    "near-duplicate": leakage.ANSWER_IN_CONTEXT,
    "discarded": "same-arguments",  # the paper's rule for negatives, not a soundness rule
    leakage.GENERATED: leakage.GENERATED,
    # no rule, but counted: an answer the client could not get, or too little left of one
    "call-failed": "call-failed",
    "too-few-options": "too-few-options",
}


@dataclass
class Verdicts:
    """What came of the model's parts: records that kept their extractive version, by task;
    proposals turned down, by verdict (``DROPS``'s keys); the first ``sound.EXAMPLES`` of
    each verdict's rule, with why."""

    kept: Counter = field(default_factory=Counter)
    turned_down: Counter = field(default_factory=Counter)
    examples: dict[str, list[dict]] = field(default_factory=dict)

    def add(self, verdict: str, record: str, text: str, reason: str) -> None:
        self.turned_down[verdict] += 1
        sound.example(self.examples, DROPS[verdict], {"record": record, "text": text,
                                                      "reason": reason})  # fmt: skip


def written(
    cfg: Config, rows: list[dict], pools: extractive.Pools
) -> tuple[list[dict], list[Result], Verdicts]:
    """The rows with the model's parts where it gave them, every call's result, and what
    became of the model's parts."""
    asked = [r for r in rows if r["task"] in ("AQA", "MCAC", "MCNC")]
    results = run(cfg, [request(r, pools) for r in asked])
    replaced: dict[str, dict] = {}
    verdicts = Verdicts()
    stamp = {"method": LLM, "prompt_version": PROMPT_VERSION, "model": cfg.llm.model}
    for row, result in zip(asked, results, strict=True):
        new = None
        if result.answer is None:
            verdicts.add("call-failed", row["id"], "", result.reason or result.error)
        else:
            new, rejected = _apply(row, result.answer, pools)
            for verdict, text in rejected:
                verdicts.add(verdict, row["id"], text, _WHY[verdict])
            if new is None:
                verdicts.add("too-few-options", row["id"], str(result.answer)[:200],
                             _WHY["too-few-options"])  # fmt: skip
        if new is not None and row["task"] in ("AQA", "MCAC"):
            target, _ = _target(row, pools)
            if why := leakage.generated_unsaid({**row, **new}, target, scaffolding()):
                verdicts.add(leakage.GENERATED, row["id"], new["question"], why)
                new = None
        if new is None:
            verdicts.kept[row["task"]] += 1
        else:
            replaced[row["id"]] = {**row, **new, **stamp}
    return [replaced.get(r["id"], r) for r in rows], results, verdicts


_WHY = {
    "near-duplicate": "a near-duplicate of a true event of the story or of another negative",
    "discarded": "its subject, event type, object and location are a true event's",
    "too-few-options": "an empty question or answer, or fewer than 3 usable wrong options left",
}


def _apply(
    row: dict, answer: dict, pools: extractive.Pools
) -> tuple[dict | None, list[tuple[str, str]]]:
    """The record's new parts from the model's answer (None where it cannot complete it), and
    the negatives the screen turned down: (verdict, text)."""
    target, _ = _target(row, pools)
    story = pools.atoms[row["complex_event_id"]]
    if row["task"] in ("AQA", "MCAC") and not (
        answer["question"].strip() and answer["answer"].strip()
    ):
        return None, []
    if row["task"] == "AQA":
        qa = {"question": answer["question"].strip(), "answer": answer["answer"].strip()}
        return qa, []
    if row["task"] == "MCAC":
        gold = answer["answer"].strip()
        taken = [v for a in story if (v := extractive.value(a, row["argument"]))]
        wrong: list[str] = []
        for value in (v.strip() for v in answer["wrong"]):
            if value and not first_near_duplicate(value, [*taken, gold, *wrong]):
                wrong.append(value)
        if len(wrong) < extractive.WRONG:
            return None, []
        candidates, letter = records.options(gold, wrong)
        return {
            "question": answer["question"].strip(),
            "candidates": candidates,
            "answer": letter,
        }, []
    picked: list[dict] = []
    turned_down: list[tuple[str, str]] = []
    for negative in answer["negatives"]:
        negative = {**negative, "text": negative["text"].strip()}
        if not negative["text"]:
            continue
        verdict = extractive.screen(story, picked, negative)
        if verdict == "kept":
            picked.append(negative)
        else:
            turned_down.append((verdict, negative["text"]))
    if len(picked) < extractive.WRONG:
        return None, turned_down
    candidates, letter = records.options(target["text"], [n["text"] for n in picked])
    return {"candidates": candidates, "answer": letter}, turned_down
