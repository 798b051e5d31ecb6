"""The ``extractive`` way to write a task's generated parts: rules, no model.

- AQA and MCAC questions come from templates over the target event's arguments ("Who will
  threaten United States in Alaska on 2025-08-07?"); the CAMEO event type is the verb, its
  ", not specified" dropped; a missing argument reads "someone", "something" or is left out.
- MCAC's three wrong answers are values of the same argument that are no near-duplicate
  (:mod:`gdelt_forecast.contract.similarity`) of a value in the complex event's timeline, nor of
  each other: first from the other complex events of the month, then (for
  subject, object and location) the reference country names and (event type) CAMEO's
  second-level names; a wrong date is the target's date moved by 1 to 10 days (months or
  years for a coarser date).
- MCNC's three negatives are atomic events of other complex events: of the same country
  pair first, then sharing a country, then any; one whose text is a near-duplicate of a
  true event of the story or of another option is rejected (soundness rule 4), and one whose
  subject, event type, object and location all equal a true event's is discarded (the
  paper's rule for its generated negatives); both are counted. These events did happen, but
  not in this story.
Every draw is seeded, so a re-run writes the same records.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from gdelt_forecast.contract.similarity import first_near_duplicate
from gdelt_forecast.contract.text import period, text_key

PROMPT_VERSION = "tasks-extractive-v2"  # the rules above; bump it when they change
ARGUMENTS = ("subject", "object", "event_type", "location", "time")
WRONG = 3  # wrong candidates beside the gold one: four options, as in OpenForecast


def arguments(atom: dict) -> tuple:
    return tuple(text_key(atom[name]) for name in ("subject", "event_type", "object", "location"))


def value(atom: dict, argument: str) -> str | None:
    return atom["date"] if argument == "time" else atom[argument]


def _verb(event_type: str | None) -> str:
    if not event_type:
        return "act towards"
    verb = event_type.removesuffix(", not specified")
    return verb[0].lower() + verb[1:]


def question(atom: dict, argument: str) -> str:
    """The template question that asks for ``argument`` of ``atom``."""
    subject, obj = atom["subject"] or "someone", atom["object"] or "someone"
    where = f" in {atom['location']}" if atom["location"] else ""
    when = f" on {atom['date']}" if atom["date"] else ""
    verb = _verb(atom["event_type"])
    return {
        "subject": f"Who will {verb} {obj}{where}{when}?",
        "object": f"Whom will {subject} {verb}{where}{when}?",
        "event_type": f"What will {subject} do towards {obj}{where}{when}?",
        "location": f"Where will {subject} {verb} {obj}{when}?",
        "time": f"When will {subject} {verb} {obj}{where}?",
    }[argument]


@dataclass
class Pools:
    """What the rules draw wrong candidates from: the month's atomic events by complex
    event, its countries, and the reference names."""

    atoms: dict[str, list[dict]]  # complex_event_id -> its timeline
    countries: dict[str, tuple[str, ...]]  # complex_event_id -> its country pair
    country_names: list[str]
    event_types: list[str]

    def month_values(self, argument: str) -> list[str]:
        found = (value(a, argument) for atoms in self.atoms.values() for a in atoms)
        return list(dict.fromkeys(v for v in found if v))

    def reference(self, argument: str) -> list[str]:
        if argument == "event_type":
            return self.event_types
        return [] if argument == "time" else self.country_names


def wrong_values(
    pools: Pools, ce: str, atom: dict, argument: str, rng: random.Random
) -> list[str] | None:
    """Three values of ``argument`` that the complex event's timeline never has (nor a
    near-duplicate), each no near-duplicate of another, or None."""
    taken = [v for a in pools.atoms[ce] if (v := value(a, argument))]
    if argument == "time":
        tiers = [_other_dates(atom["date"])]
    else:
        tiers = [pools.month_values(argument), pools.reference(argument)]
    picked: list[str] = []
    for tier in tiers:
        options = list(tier)
        rng.shuffle(options)
        for option in options:
            if len(picked) < WRONG and not first_near_duplicate(option, taken + picked):
                picked.append(option)
    return picked if len(picked) == WRONG else None


def _other_dates(when: str) -> list[str]:
    """Dates of the same precision 1 to 10 days, months or years from ``when``."""
    first, _ = period(when)
    steps = [d for d in range(-10, 11) if d]
    if len(when) == 10:
        return [(first + timedelta(days=d)).isoformat() for d in steps]
    if len(when) == 7:
        months = [first.year * 12 + first.month - 1 + d for d in steps]
        return [f"{m // 12:04d}-{m % 12 + 1:02d}" for m in months]
    return [str(first.year + d) for d in steps]


def negatives(pools: Pools, ce: str, rng: random.Random) -> tuple[list[dict] | None, Counter]:
    """Three atomic events of other complex events for an MCNC question on ``ce`` (None when
    the month has too few that pass the rules), and the candidates turned down on the way,
    by :func:`screen`'s verdict."""
    pair = set(pools.countries[ce])
    others = sorted(c for c in pools.atoms if c != ce)
    tiers = [
        [c for c in others if set(pools.countries[c]) == pair],
        [c for c in others if set(pools.countries[c]) & pair and set(pools.countries[c]) != pair],
        [c for c in others if not set(pools.countries[c]) & pair],
    ]
    picked: list[dict] = []
    turned_down: Counter = Counter()
    for tier in tiers:
        candidates = [a for c in tier for a in pools.atoms[c]]
        rng.shuffle(candidates)
        for atom in candidates:
            if len(picked) == WRONG:
                break
            verdict = screen(pools.atoms[ce], picked, atom)
            if verdict == "kept":
                picked.append(atom)
            else:
                turned_down[verdict] += 1
    return (picked if len(picked) == WRONG else None), turned_down


def screen(story: list[dict], picked: list[dict], negative: dict) -> str:
    """ "kept"; "near-duplicate" when its text is a near-duplicate of a true event's or of
    an earlier pick's (rule 4); "discarded" when its subject, event type, object and
    location all equal a true event's."""
    if first_near_duplicate(negative["text"], [a["text"] for a in story + picked]):
        return "near-duplicate"
    if arguments(negative) in {arguments(a) for a in story}:
        return "discarded"
    return "kept"
