"""The six OpenForecast task records of one cut, with the ``extractive`` generated parts.

Every record: ``id``, ``task``, ``complex_event_id``, ``cut_date``, ``split``, ``background``
(the atomic events dated on or before the cut: date, text, source document), ``question``,
``candidates`` (empty for STF, LTF and AQA), ``answer``, ``argument`` (AQA and MCAC: which
argument is asked), ``target`` (the timeline events the answer comes from), ``method``,
``prompt_version`` and ``model``. Answers: STF and LTF the target events as the paper's
numbered list; AQA the argument's value; MCNC and MCAC an option letter; VQA yes or no.

- STF: the events of one day after the cut (a seeded day among the day-precise targets);
- LTF: every target event;
- AQA: a seeded target event and argument (subject, object, event type, location, time);
- MCAC: AQA's question with three wrong values and the gold one;
- MCNC: a seeded target event and three negatives;
- VQA: MCNC's gold event (answer yes) or one of its negatives (no), a seeded coin.
Each task draws from its own seeded generator, so a change to one leaves the others be; the
options of MCNC and MCAC are put in order last (:func:`balance`), once the month's records
are final, so that the gold letters are spread evenly.
"""

from __future__ import annotations

import hashlib
import random
import string
from collections import Counter
from datetime import date

import pyarrow as pa

from gdelt_forecast.contract.names import EXTRACTIVE
from gdelt_forecast.contract.text import period
from gdelt_forecast.tasks import extractive
from gdelt_forecast.tasks.cut import Cut

_EVENT = pa.struct([("date", pa.string()), ("text", pa.string()), ("source_doc_id", pa.string()),
                    ("source_date", pa.date32())])  # fmt: skip
SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("task", pa.string()),
        ("complex_event_id", pa.string()),
        ("cut_date", pa.date32()),
        ("split", pa.string()),
        ("background", pa.list_(_EVENT)),
        ("question", pa.string()),
        ("candidates", pa.list_(pa.string())),
        ("answer", pa.string()),
        ("argument", pa.string()),
        ("target", pa.list_(_EVENT)),
        ("method", pa.string()),
        ("prompt_version", pa.string()),
        ("model", pa.string()),
    ]
)


def rng(seed: int, task: str, complex_event_id: str, cut_date: date) -> random.Random:
    return random.Random(f"{seed}:{task}:{complex_event_id}:{cut_date}")


def event(atom: dict) -> dict:
    return {k: atom[k] for k in ("date", "text", "source_doc_id", "source_date")}


def numbered(atoms: list[dict]) -> str:
    return "\n".join(f"{i}. {a['text']}" for i, a in enumerate(atoms, 1))


def record_id(task: str, complex_event_id: str, cut_date: date) -> str:
    digest = hashlib.sha256(f"{task}|{complex_event_id}|{cut_date}".encode())
    return f"{task}-{digest.hexdigest()[:16]}"


def record(task: str, cut: Cut, split: str, **fields) -> dict:
    row = {
        "id": record_id(task, cut.complex_event_id, cut.cut_date),
        "task": task,
        "complex_event_id": cut.complex_event_id,
        "cut_date": cut.cut_date,
        "split": split,
        "background": [event(a) for a in cut.background],
        "candidates": [],
        "argument": None,
        "method": EXTRACTIVE,
        "prompt_version": extractive.PROMPT_VERSION,
        "model": None,
    }
    return {**row, **fields}


def options(gold: str, wrong: list[str]) -> tuple[list[str], str]:
    """The four candidates, the gold one first, and its letter: :func:`balance` places it."""
    return [gold, *wrong], "A"


def balance(rows: list[dict], seed: int, tasks: tuple[str, ...] = ("MCNC", "MCAC")) -> list[dict]:
    """The rows with every multiple-choice record's options (of ``tasks``) in a seeded order
    whose gold letters are spread evenly over the month: per task, the records in id order
    take the letters in turn (A-D for four options), shuffled as a whole by the seed (so
    each letter is the answer of as many records, give or take one), and the wrong options
    a seeded order of their own."""
    out = {r["id"]: r for r in rows}
    for task in tasks:
        mine = sorted((r for r in rows if r["task"] == task), key=lambda r: r["id"])
        places = [i % len(r["candidates"]) for i, r in enumerate(mine)]
        random.Random(f"{seed}:{task}:letters").shuffle(places)
        for row, place in zip(mine, places, strict=True):
            gold = string.ascii_uppercase.index(row["answer"])
            wrong = [c for i, c in enumerate(row["candidates"]) if i != gold]
            rng(seed, f"{task}:order", row["complex_event_id"], row["cut_date"]).shuffle(wrong)
            candidates = [*wrong[:place], row["candidates"][gold], *wrong[place:]]
            out[row["id"]] = {
                **row,
                "candidates": candidates,
                "answer": string.ascii_uppercase[place],
            }
    return [out[r["id"]] for r in rows]


def stf(cut: Cut, split: str, seed: int) -> dict | None:
    days = sorted({span[0] for a in cut.targets if (span := period(a["date"]))[0] == span[1]})
    if not days:
        return None
    day: date = rng(seed, "STF", cut.complex_event_id, cut.cut_date).choice(days)
    target = [a for a in cut.targets if period(a["date"]) == (day, day)]
    return record(
        "STF",
        cut,
        split,
        question=f"What events will occur on {day}?",
        answer=numbered(target),
        target=[event(a) for a in target],
    )


def ltf(cut: Cut, split: str) -> dict:
    return record(
        "LTF",
        cut,
        split,
        question=f"How will the events develop after {cut.cut_date}?",
        answer=numbered(cut.targets),
        target=[event(a) for a in cut.targets],
    )


def argument_draw(cut: Cut, seed: int) -> tuple[dict, str]:
    """AQA's (and MCAC's) target event and the argument asked about."""
    draw = rng(seed, "AQA", cut.complex_event_id, cut.cut_date)
    atom = draw.choice(cut.targets)
    argument = draw.choice([a for a in extractive.ARGUMENTS if extractive.value(atom, a)])
    return atom, argument


def aqa(cut: Cut, split: str, seed: int) -> dict:
    atom, argument = argument_draw(cut, seed)
    return record(
        "AQA",
        cut,
        split,
        question=extractive.question(atom, argument),
        answer=extractive.value(atom, argument),
        argument=argument,
        target=[event(atom)],
    )


def mcac(cut: Cut, split: str, seed: int, pools: extractive.Pools) -> dict | None:
    atom, argument = argument_draw(cut, seed)
    draw = rng(seed, "MCAC", cut.complex_event_id, cut.cut_date)
    wrong = extractive.wrong_values(pools, cut.complex_event_id, atom, argument, draw)
    if wrong is None:
        return None
    candidates, letter = options(extractive.value(atom, argument), wrong)
    return record(
        "MCAC",
        cut,
        split,
        question=extractive.question(atom, argument),
        candidates=candidates,
        answer=letter,
        argument=argument,
        target=[event(atom)],
    )


def mcnc(cut: Cut, split: str, seed: int, pools: extractive.Pools) -> tuple[dict | None, Counter]:
    """The record (None without three negatives) and the negatives turned down for it, by
    verdict (:func:`gdelt_forecast.tasks.extractive.screen`)."""
    draw = rng(seed, "MCNC", cut.complex_event_id, cut.cut_date)
    gold = draw.choice(cut.targets)
    negatives, turned_down = extractive.negatives(pools, cut.complex_event_id, draw)
    if negatives is None:
        return None, turned_down
    candidates, letter = options(gold["text"], [a["text"] for a in negatives])
    row = record(
        "MCNC",
        cut,
        split,
        question=f"Which event will occur after {cut.cut_date}?",
        candidates=candidates,
        answer=letter,
        target=[event(gold)],
    )
    return row, turned_down


def vqa(mcnc_row: dict, seed: int) -> dict:
    """From an MCNC record: its gold event (yes) or one of its negatives (no)."""
    ce, cut_date = mcnc_row["complex_event_id"], mcnc_row["cut_date"]
    coin = rng(seed, "VQA", ce, cut_date)
    gold = string.ascii_uppercase.index(mcnc_row["answer"])
    yes = coin.random() < 0.5
    wrong = [c for i, c in enumerate(mcnc_row["candidates"]) if i != gold]
    shown = mcnc_row["candidates"][gold] if yes else coin.choice(wrong)
    return {
        **mcnc_row,
        "id": record_id("VQA", ce, cut_date),
        "task": "VQA",
        "question": f"Will this event occur after {mcnc_row['cut_date']}?",
        "candidates": [shown],
        "answer": "yes" if yes else "no",
    }
