"""Causal and hierarchical relations between a story's events, as a model judges them
(``reasoning.method: llm``).

A story's pairs of events (no near-duplicates; at most ``reasoning.judged_pairs`` per story,
drawn with the seed) are each asked in both directions, with EV2's relation definitions
(``prompts/ev2-v1/relation.txt``; JSON answers through the LLM client, cached and
accounted in ``llm_calls.parquet``). Only a pair labelled consistently both ways becomes a
question: A Causes B with B IsResult A, A IsSubevent B with B HasSubevent A, or None both
ways; the others are counted as inconsistent and left out, a few kept as examples.
"""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations
from typing import Literal

from gdelt_forecast.contract.reasoning import CONSISTENT
from gdelt_forecast.contract.relations import INVERSE
from gdelt_forecast.contract.similarity import near_duplicate
from gdelt_forecast.contract.sound import example
from gdelt_forecast.ground.config import Config
from gdelt_forecast.llm import Answer, Request, Result, run
from gdelt_forecast.reasoning.records import PROMPTS


class PairRelation(Answer):
    relation: Literal["Causes", "IsResult", "IsSubevent", "HasSubevent", "None"]


def _request(ce: str, a: dict, b: dict) -> Request:
    prompt = (
        (PROMPTS / "relation.txt")
        .read_text(encoding="utf-8")
        .strip()
        .format(date0=a["date"], text0=a["text"], date1=b["date"], text1=b["text"])
    )
    messages = [{"role": "user", "content": prompt}]
    return Request(ce, f"relation:{a['seq']}:{b['seq']}", messages, PairRelation, "relation")


def judge(
    cfg: Config, stories: dict[str, list[dict]]
) -> tuple[dict[str, dict[tuple[int, int], str]], list[Result], Counter, dict]:
    """Per story, the consistent labels: ``(seq a, seq b) -> relation of a to b`` (and the
    inverse for ``(b, a)``); every call's result; what was asked and kept, counted; a few
    inconsistent pairs, with why."""
    pairs = []
    for ce in sorted(stories):
        found = [(a, b) for a, b in combinations(stories[ce], 2)
                 if not near_duplicate(a["text"], b["text"])]  # fmt: skip
        rng = random.Random(f"{cfg.reasoning.seed}:{ce}:judged")
        drawn = rng.sample(found, min(len(found), cfg.reasoning.judged_pairs))
        pairs += [(ce, a, b) for a, b in drawn]
    requests = [r for ce, a, b in pairs for r in (_request(ce, a, b), _request(ce, b, a))]
    results = run(cfg, requests) if requests else []
    labels: dict[str, dict[tuple[int, int], str]] = {ce: {} for ce in stories}
    counts = Counter(pairs=len(pairs))
    examples: dict[str, list[dict]] = {}
    for i, (ce, a, b) in enumerate(pairs):
        forth, back = results[2 * i], results[2 * i + 1]
        if forth.answer is None or back.answer is None:
            counts["failed"] += 1
            continue
        there, here = forth.answer["relation"], back.answer["relation"]
        if INVERSE[there] != here:
            counts["inconsistent"] += 1
            why = f"{there} one way, {here} the other (the inverse of {there} is {INVERSE[there]})"
            example(examples, CONSISTENT, {"record": ce, "text": f"{a['text']} | {b['text']}",
                                           "reason": why})  # fmt: skip
            continue
        counts["consistent"] += 1
        labels[ce][a["seq"], b["seq"]] = there
        labels[ce][b["seq"], a["seq"]] = here
    return labels, results, counts, examples
