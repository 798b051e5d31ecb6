"""``gdelt-forecast reasoning --month M``: EV2's four task families from the month's
timelines, into ``reasoning/<month>/<TASK>.parquet`` (``I-CEC``, ``I-CRR``, ``S-CEC``,
``S-CRR``; :mod:`gdelt_forecast.reasoning.records` says what a record holds).

A story's timeline is its event graph: its dated atomic events, related in time by their
dates (:mod:`gdelt_forecast.contract.relations`). Causal and hierarchical relations need
a model's judgement: with ``reasoning.method: llm`` the model labels pairs of a story's
events both ways and the consistent labels join the graph
(:mod:`gdelt_forecast.reasoning.judged`); with ``extractive`` they are left out and the
summary says so. No question asks whether a story has one of its own events (the story is
never a node), so no item is trivially true by construction.

- **I-CEC** (4-way): an answer event, the context of the story's events from documents
  first seen before the answer's (the cut is the latest of them), one of them queried, the
  relation the dates give (Before or After); three negatives from other stories of the
  month that share a country with it, none a near-duplicate of the answer, of the context
  or of each other.
- **I-CRR** (3-way: Before, After, Vague): a pair of the story's events (not near-
  duplicates), the context of its other events first seen by the pair's cut.
- **S-CEC**, **S-CRR**: the same over event types (an event's CAMEO second-level relation
  name; an event whose type is none, as a model may write, is no node: counted as
  ``untyped_events``), only where every pair of events of those two types in the month
  stands in the one relation (an ambiguous type pair is left out and counted); S-CEC's
  negatives are other CAMEO types, none among the story's.

Questions per story and level are drawn with the seed (``reasoning.*``); gold letters are
spread evenly over the options per task, and every record is checked by
:func:`gdelt_forecast.contract.reasoning.unsound` before it is written.
"""

from __future__ import annotations

import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from itertools import combinations, pairwise
from pathlib import Path

import pyarrow as pa

from gdelt_forecast.contract.names import REASONING as TASKS
from gdelt_forecast.contract.names import letters
from gdelt_forecast.contract.reasoning import cameo_types, unsound
from gdelt_forecast.contract.relations import CHOICES, INVERSE, NONE, temporal
from gdelt_forecast.contract.similarity import near_duplicate
from gdelt_forecast.contract.text import period
from gdelt_forecast.ground.config import Config, ReasoningConfig
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.llm import summarize, write_calls
from gdelt_forecast.reasoning import records
from gdelt_forecast.reasoning.judged import judge
from gdelt_forecast.reference import tables
from gdelt_forecast.tasks.records import balance
from gdelt_forecast.timelines.stored import read_timelines

NEGATIVES = 3  # beside the answer: EV2's CEC is 4-way
LEFT_OUT_NOTE = "causal and hierarchical relations need a model's judgement: not built"


@dataclass
class Summary(StageSummary):
    month: str
    stories: int = 0
    records: dict = field(default_factory=dict)  # task -> records
    left_out: dict = field(default_factory=dict)  # why -> questions not made
    soundness: dict = field(default_factory=dict)  # rule -> what it turned down
    letters: dict = field(default_factory=dict)  # task -> gold letter -> records
    relation_types: dict = field(default_factory=dict)  # task -> relation type -> records
    judged: dict = field(default_factory=dict)  # with llm: pairs asked, consistent, ...
    examples: dict = field(default_factory=dict)  # with llm: rule -> a few pairs left out
    llm: dict = field(default_factory=dict)
    note: str = LEFT_OUT_NOTE
    seconds: float = 0.0

    def line(self) -> str:
        made = ", ".join(f"{t} {n}" for t, n in self.records.items())
        left = ", ".join(f"{n} {why.replace('_', ' ')}" for why, n in self.left_out.items() if n)
        judged = ", ".join(f"{n} {what}" for what, n in self.judged.items())
        return (
            f"reasoning {self.month}: {self.stories} stories; {made}; left out: {left or 'none'}"
            f"; {self.note}"
            + (f" (pairs: {judged})" if judged else "")
            + f" ({self.seconds:.1f} s)"
            + (f"; {self.llm['line']}" if self.llm else "")
        )


def build_reasoning(cfg: Config, month: str, out: Path) -> Summary:
    atoms, countries = read_timelines(DataRoot(cfg.data_root).month("timelines", month), month)
    left: Counter = Counter()
    stories = {}
    for ce, story in atoms.items():
        dated = [a for a in story if period(a["date"]) is not None]
        left["undated_events"] += len(story) - len(dated)
        stories[ce] = dated
    judged_kinds: dict[str, tuple[Kind, ...]] = {ce: () for ce in stories}
    summary = Summary(month=month, stories=len(stories))
    if cfg.reasoning.method == "llm":
        sent = time.monotonic()
        labels, calls, counts, summary.examples = judge(cfg, stories)
        write_calls(out / "llm_calls.parquet", calls)
        judged_kinds = {
            ce: tuple(Kind(k, labels[ce], cfg.llm.model) for k in ("causal", "hierarchical"))
            for ce in stories
        }
        calls_summary = summarize(calls, time.monotonic() - sent)
        summary.judged = dict(counts)
        summary.llm = {**calls_summary.to_dict(), "line": calls_summary.line()}
        summary.note = (
            f"causal and hierarchical relations judged by {cfg.llm.model}, kept "
            "when consistent both ways"
        )
    kinds = {ce: (TEMPORAL, *judged_kinds[ce]) for ce in stories}
    cameo = cameo_types(tables.relations())
    other_types = sorted(cameo)
    # The schema level is over CAMEO types: a model's own event type (or none) is no node.
    typed = {ce: [a for a in story if a["event_type"] in cameo] for ce, story in stories.items()}
    left["untyped_events"] = sum(len(stories[ce]) - len(typed[ce]) for ce in stories)
    observed = {  # relation type -> what the month's event pairs give each type pair
        name: _type_relations(typed, {ce: k for ce in stories for k in kinds[ce] if k.name == name})
        for name in dict.fromkeys(k.name for ks in kinds.values() for k in ks)
    }
    left["ambiguous_types"] = sum(
        len(v) > 1 for seen in observed.values() for (a, b), v in seen.items() if a < b
    )
    rows: list[dict] = []
    for ce in sorted(stories):
        rng = random.Random(f"{cfg.reasoning.seed}:{ce}")
        pool = _pool(ce, stories, countries)
        build = _Story(ce, stories[ce], cfg.reasoning, rng, left, judged_kinds[ce])
        schema = replace(build, events=typed[ce])  # the same draws and counts
        for kind in kinds[ce]:
            rows += build.instance_cec(pool, kind)
            rows += build.instance_crr(kind)
            rows += schema.schema_cec(observed[kind.name], other_types, kind)
            rows += schema.schema_crr(observed[kind.name], kind)
    if len({r["id"] for r in rows}) != len(rows):
        raise StageError("reasoning: two records share an id")  # a bug, not data
    rows = balance(rows, cfg.reasoning.seed, TASKS)
    rows = [{**r, "prompt": records.render(r)} for r in rows]
    for row in rows:  # the build puts every event on its side: a failure is a bug
        if why := unsound(row, cameo):
            raise StageError(f"reasoning: {row['id']}: {why}")
    for task in TASKS:
        mine = sorted((r for r in rows if r["task"] == task), key=lambda r: r["id"])
        write_parquet(pa.Table.from_pylist(mine, records.SCHEMA), out / f"{task}.parquet")
    summary.records = {t: sum(r["task"] == t for r in rows) for t in TASKS}
    summary.left_out = dict(sorted(left.items()))
    summary.soundness = {
        "1-provenance": {"no_earlier_context": left["no_earlier_context"]},
        "4-no-answer-in-context": {
            "answers": left["answer_in_context"], "negatives": left["negative_near_duplicate"]},
        "schema-unambiguous": {"type_pairs": left["ambiguous_types"]},
    }  # fmt: skip
    summary.relation_types = {
        t: dict(Counter(r["relation_type"] for r in rows if r["task"] == t)) for t in TASKS
    }
    summary.letters = {
        **letters(rows, ("I-CEC", "S-CEC"), 4),
        **letters(rows, ("I-CRR", "S-CRR"), 3),
    }
    return summary


def _type_relations(
    stories: dict[str, list[dict]], kinds: dict[str, Kind]
) -> dict[tuple[str, str], set[str]]:
    """Every relation the month's event pairs give each ordered pair of distinct types, by
    each story's ``kinds`` (a story without one gives none)."""
    seen: dict[tuple[str, str], set[str]] = defaultdict(set)
    for ce, story in stories.items():
        if ce not in kinds:
            continue
        for a, b in combinations(story, 2):
            relation = kinds[ce].of(a, b)
            if relation is None:
                continue
            if a["event_type"] and b["event_type"] and a["event_type"] != b["event_type"]:
                seen[a["event_type"], b["event_type"]].add(relation)
                seen[b["event_type"], a["event_type"]].add(INVERSE[relation])
    return seen


def _pool(ce: str, stories: dict[str, list[dict]], countries: dict[str, tuple]) -> list[dict]:
    """Negatives' pool: the events of the month's other stories sharing a country with it."""
    mine = set(countries.get(ce, ()))
    return [
        a
        for other in sorted(stories)
        if other != ce and mine & set(countries.get(other, ()))
        for a in stories[other]
    ]


@dataclass(frozen=True)
class Kind:
    """One relation type and where its relations come from: the dates (temporal), or a
    model's consistent labels (causal, hierarchical: :mod:`gdelt_forecast.reasoning.judged`)."""

    name: str
    labels: dict[tuple[int, int], str] | None = None  # (seq a, seq b) -> a's relation to b
    model: str | None = None

    def of(self, a: dict, b: dict) -> str | None:
        if self.labels is None:
            return temporal(a["date"], b["date"])
        label = self.labels.get((a["seq"], b["seq"]))
        return label if label in CHOICES[self.name] else None

    @property
    def asked(self) -> tuple[str, str]:
        """The relations a CEC question asks about (CRR's choices but the third)."""
        return CHOICES[self.name][:2]

    def fits(self, negative: dict, queried: dict, relation: str) -> bool:
        """Whether ``negative`` may be an option: by its date it must not stand in the
        relation asked (the instances show dates); nothing says a model's label of events
        of another story, so every one may."""
        return self.labels is not None or temporal(negative["date"], queried["date"]) != relation

    def evidence(self, a: dict, b: dict, name) -> str:
        if self.labels is None:
            return _evidence(a, b, name)
        return (
            f"{self.model} labelled {name(a)} {self.of(a, b)} {name(b)}, and {name(b)} "
            f"{self.of(b, a)} {name(a)}; " + _evidence(a, b, name)
        )


TEMPORAL = Kind("temporal")


def _by_time(events: list[dict]) -> list[dict]:
    return sorted(events, key=lambda a: (*period(a["date"]), a["seq"]))


def _chain(events: list[dict], name, kinds: tuple[Kind, ...] = ()) -> list[dict]:
    """The graph's edges: each event to the next in time, as the dates relate them, and the
    pairs ``kinds`` relate otherwise (each pair once, Causes or IsSubevent way round)."""
    ordered = _by_time(events)
    edges = [
        {"head": name(a), "relation": temporal(a["date"], b["date"]), "tail": name(b)}
        for a, b in pairwise(ordered)
    ]
    for kind in kinds:
        edges += [
            {"head": name(a), "relation": kind.of(a, b), "tail": name(b)}
            for a in ordered for b in ordered
            if kind.of(a, b) == kind.asked[0]
        ]  # fmt: skip
    return edges


@dataclass
class _Story:
    ce: str
    events: list[dict]
    cfg: ReasoningConfig
    rng: random.Random
    left: Counter
    judged: tuple[Kind, ...] = ()  # the model's relations, shown in every context graph

    def _earlier(self, answer: dict) -> list[dict] | None:
        """The story's events first seen before ``answer``'s document, if enough."""
        context = [a for a in self.events if a["source_date"] < answer["source_date"]]
        if len(context) < self.cfg.min_context:
            self.left["no_earlier_context"] += 1
            return None
        if any(near_duplicate(answer["text"], a["text"]) for a in context):
            self.left["answer_in_context"] += 1
            return None
        return context

    def instance_cec(self, pool: list[dict], kind: Kind = TEMPORAL) -> list[dict]:
        found = []
        for answer in self.events:
            context = self._earlier(answer)
            if context is None:
                continue
            related = [x for x in context if kind.of(answer, x) in kind.asked]
            if not related:
                self.left[f"no_{kind.name}_pair"] += 1
                continue
            found.append((answer, context, related))
        rows = []
        for answer, context, related in self._draw(found, self.cfg.cec_per_story):
            # Try the queried events until one has three negatives that may stand beside it.
            cut = max(a["source_date"] for a in context)
            for queried in self.rng.sample(related, len(related)):
                relation = kind.of(answer, queried)
                # A negative is shown too: from a document seen by the cut, as the context.
                fits = lambda n: n["source_date"] <= cut and kind.fits(n, queried, relation)  # noqa: B023, E731
                negatives = self._negatives(pool, answer, context, fits)
                if negatives is not None:
                    break
            else:
                self.left["too_few_negatives"] += 1
                continue
            candidates = [answer, *negatives]
            self.rng.shuffle(candidates)  # ids in a seeded order: no id tells the answer
            shown = _by_time(context) + candidates
            name = _namer(shown)
            rows.append(
                self._row(
                    "I-CEC", "instance", relation, kind, cut=cut,
                    events=[{**records.event(a), "event_id": name(a)} for a in shown],
                    context=[name(a) for a in _by_time(context)],
                    context_relations=_chain(context, name, self.judged),
                    queried=[name(queried)],
                    candidates=[name(a) for a in candidates],
                    answer_label=name(answer),
                    evidence=kind.evidence(answer, queried, name),
                )
            )  # fmt: skip
        return rows

    def _negatives(self, pool: list[dict], answer: dict, context: list[dict], fits) -> list | None:
        """Three of ``pool`` that ``fits`` keeps, none a near-duplicate of the answer, the
        context or each other; None if there are not three."""
        taken = [answer["text"], *(a["text"] for a in context)]
        picked = []
        for negative in self.rng.sample(pool, len(pool)):
            if len(picked) == NEGATIVES:
                break
            if not fits(negative):
                continue
            if any(near_duplicate(negative["text"], t) for t in taken):
                self.left["negative_near_duplicate"] += 1
                continue
            picked.append(negative)
            taken.append(negative["text"])
        return picked if len(picked) == NEGATIVES else None

    def instance_crr(self, kind: Kind = TEMPORAL) -> list[dict]:
        found = []
        for a, b in combinations(self.events, 2):
            if near_duplicate(a["text"], b["text"]):
                self.left["near_duplicate_pair"] += 1
                continue
            if kind.of(a, b) is None:
                continue  # a pair the model judged otherwise, or not consistently
            if self.rng.random() < 0.5:  # either order: Before and After alike
                a, b = b, a
            cut = max(a["source_date"], b["source_date"])
            context = [c for c in self.events if c not in (a, b) and c["source_date"] <= cut]
            if len(context) < self.cfg.min_context:
                self.left["no_earlier_context"] += 1
                continue
            found.append((a, b, cut, context))
        rows = []
        for a, b, cut, context in self._spread(found, self.cfg.crr_per_story, kind):
            shown = _by_time([*context, a, b])
            name = _namer(shown)
            rows.append(
                self._row(
                    "I-CRR", "instance", kind.of(a, b), kind, cut=cut,
                    events=[{**records.event(e), "event_id": name(e)} for e in shown],
                    context=[name(c) for c in _by_time(context)],
                    context_relations=_chain(context, name, self.judged),
                    queried=[name(a), name(b)],
                    candidates=list(CHOICES[kind.name]),
                    answer_label=kind.of(a, b),
                    evidence=kind.evidence(a, b, name),
                )
            )  # fmt: skip
        return rows

    def schema_cec(self, observed: dict, other_types: list[str], kind: Kind) -> list[dict]:
        types = {a["event_type"] for a in self.events}
        found = []
        asked = set()  # two events of one type from one document make one question
        for answer in self.events:
            context = self._earlier(answer)
            if context is None or answer["event_type"] in {c["event_type"] for c in context}:
                continue
            if (question := (answer["event_type"], answer["source_doc_id"])) in asked:
                continue
            asked.add(question)
            ordered = [
                x for x in context
                if _unambiguous(observed, answer["event_type"], x["event_type"]) in kind.asked
            ]  # fmt: skip
            if ordered:
                found.append((answer, context, ordered))
        rows = []
        for answer, context, ordered in self._draw(found, self.cfg.cec_per_story):
            queried = self.rng.choice(ordered)
            relation = observed[answer["event_type"], queried["event_type"]]
            wrong = [t for t in other_types if t not in types
                     and not near_duplicate(t, answer["event_type"])]  # fmt: skip
            negatives = self.rng.sample(wrong, NEGATIVES)
            rows.append(
                self._row(
                    "S-CEC", "schema", next(iter(relation)), kind,
                    cut=max(a["source_date"] for a in context),
                    events=[records.event(a) for a in [*_by_time(context), answer]],
                    context=sorted({c["event_type"] for c in context}),
                    context_relations=_type_chain(context, kind),
                    queried=[queried["event_type"]],
                    candidates=[answer["event_type"], *negatives],
                    answer_label=answer["event_type"],
                    evidence=_schema_evidence(answer, queried, next(iter(relation)), kind),
                )
            )  # fmt: skip
        return rows

    def schema_crr(self, observed: dict, kind: Kind) -> list[dict]:
        found = []
        pairs = {(a["event_type"], b["event_type"]): (a, b)
                 for a, b in combinations(self.events, 2)
                 if a["event_type"] != b["event_type"]}  # fmt: skip
        for (ta, tb), (a, b) in sorted(pairs.items()):
            relation = _unambiguous(observed, ta, tb)
            if relation is None:
                continue
            cut = max(a["source_date"], b["source_date"])
            context = [c for c in self.events if c["event_type"] not in (ta, tb)
                       and c["source_date"] <= cut]  # fmt: skip
            found.append((a, b, cut, context, relation))
        rows = []
        for a, b, cut, context, relation in self._draw(found, self.cfg.crr_per_story):
            rows.append(
                self._row(
                    "S-CRR", "schema", relation, kind, cut=cut,
                    events=[records.event(e) for e in _by_time([*context, a, b])],
                    context=sorted({c["event_type"] for c in context}),
                    context_relations=_type_chain(context, kind),
                    queried=[a["event_type"], b["event_type"]],
                    candidates=list(CHOICES[kind.name]),
                    answer_label=relation,
                    evidence=_schema_evidence(a, b, relation, kind),
                )
            )  # fmt: skip
        return rows

    def _draw(self, found: list, n: int) -> list:
        return self.rng.sample(found, min(n, len(found)))

    def _spread(self, found: list, n: int, kind: Kind) -> list:
        """Up to ``n`` pairs, the labels taken in turn so that each is drawn alike."""
        by_label: dict[str, list] = defaultdict(list)
        for item in found:
            by_label[kind.of(item[0], item[1])].append(item)
        for items in by_label.values():
            self.rng.shuffle(items)
        picked = []
        while len(picked) < n and any(by_label.values()):
            for label in CHOICES[kind.name]:
                if by_label[label] and len(picked) < n:
                    picked.append(by_label[label].pop())
        return picked

    def _row(
        self, task: str, level: str, relation: str, kind: Kind = TEMPORAL, *, cut, **fields
    ) -> dict:
        candidates = fields["candidates"]
        row = {
            # The relation type too: one pair may be asked about in time and in causation.
            "id": records.record_id(task, kind.name, self.ce, fields["queried"],
                                    fields["answer_label"], cut,
                                    [e["source_doc_id"] for e in fields["events"]]),
            "task": task,
            "level": level,
            "relation_type": kind.name,
            "relation": relation,
            "complex_event_id": self.ce,
            "cut_date": cut,
            **fields,
            "answer": "ABCD"[candidates.index(fields["answer_label"])],
            "method": records.METHOD if kind.labels is None else "llm",
            "prompt_version": records.PROMPT_VERSION,
            "model": kind.model,
        }  # fmt: skip
        return row


def _unambiguous(observed: dict, a: str, b: str) -> str | None:
    """The one relation the month gives types ``a`` and ``b``; None if none or several."""
    found = observed.get((a, b), set())
    return next(iter(found)) if len(found) == 1 else None


def _type_chain(events: list[dict], kind: Kind) -> list[dict]:
    """The schema graph's edges: each type to the next (by its first event), as those two
    shown events relate (never the month's later pairs: the context rests on the cut)."""
    first: dict[str, dict] = {}
    for a in _by_time(events):
        first.setdefault(a["event_type"], a)
    ordered = list(first)
    return [
        {"head": a, "relation": relation, "tail": b}
        for a, b in pairwise(ordered)
        if (relation := kind.of(first[a], first[b])) not in (None, NONE)
    ]


def _schema_evidence(a: dict, b: dict, relation: str, kind: Kind) -> str:
    by = "their dates" if kind.labels is None else f"{kind.model}'s consistent labels"
    return (
        f"every pair of {a['event_type']!r} and {b['event_type']!r} events of the month "
        f"relates {relation} by {by}"
    )


def _namer(shown: list[dict]):
    """A record's ids for the events it shows: ``event1``, ``event2``, ... in that order."""
    ids = {id(a): f"event{i}" for i, a in enumerate(shown, 1)}
    return lambda a: ids[id(a)]


def _evidence(a: dict, b: dict, name) -> str:
    return (
        f"{name(a)} is dated {a['date']} (document {a['source_doc_id']}, first seen "
        f"{a['source_date']}); {name(b)} is dated {b['date']} (document {b['source_doc_id']}, "
        f"first seen {b['source_date']})"
    )
