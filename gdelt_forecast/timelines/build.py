"""``gdelt-forecast timelines --month YYYY-MM``: complex events and their timelines.

Reads the warehouse's kept documents of the month and of the ``timelines.history_days``
before it, groups them into complex events (:mod:`gdelt_forecast.timelines.complex_events`) and
writes each one's timeline of atomic events with ``timelines.method``, less what the
soundness rules 2, 3 and, for what a model wrote, 6 drop (:mod:`gdelt_forecast.contract.sound`,
counted in the summary with examples).
Output, replaced whole on every run: ``<data_root>/timelines/<month>/complex_events.parquet``
(one row per complex event) and ``timelines.parquet`` (one row per atomic event, with its
source document's availability date and the method, model and prompt version that wrote
it); with the ``llm`` method also ``llm_calls.parquet``.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import pyarrow as pa

from gdelt_forecast.contract import grounding, sound
from gdelt_forecast.contract.names import EXTRACTIVE, LLM
from gdelt_forecast.contract.text import period
from gdelt_forecast.ground import duck
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.dates import month_range
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.ground.progress import progress
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.llm import summarize, write_calls
from gdelt_forecast.timelines import extractive, written
from gdelt_forecast.timelines.complex_events import group

COMPLEX_EVENTS = pa.schema(
    [
        ("complex_event_id", pa.string()),
        ("month", pa.string()),
        ("title", pa.string()),
        ("countries", pa.list_(pa.string())),  # the unordered pair, ISO alpha-3, sorted
        ("first_date", pa.date32()),
        ("last_date", pa.date32()),
        ("n_documents", pa.int32()),
        ("doc_ids", pa.list_(pa.string())),  # in date order
        ("doc_dates", pa.list_(pa.date32())),
    ]
)
TIMELINES = pa.schema(
    [
        ("complex_event_id", pa.string()),
        ("seq", pa.int32()),
        ("date", pa.string()),  # yyyy, yyyy-MM or yyyy-MM-dd; null when unknown
        ("text", pa.string()),
        ("subject", pa.string()),
        ("event_type", pa.string()),
        ("object", pa.string()),
        ("location", pa.string()),
        ("source_doc_id", pa.string()),
        ("source_date", pa.date32()),  # the day GDELT first saw the source document
        ("method", pa.string()),
        ("model", pa.string()),
        ("prompt_version", pa.string()),
    ]
)


EXTRACTED = {
    "method": EXTRACTIVE,
    "model": None,
    "prompt_version": extractive.PROMPT_VERSION,
}


class TimelinesError(StageError):
    """The month has nothing to build timelines from."""


@dataclass
class Summary(StageSummary):
    month: str
    method: str
    documents: int = 0
    complex_events: int = 0
    documents_in_events: int = 0
    atomic_events: int = 0
    dropped: Counter = field(default_factory=Counter)  # soundness rule -> atomic events
    ungrounded: Counter = field(default_factory=Counter)  # rule 6's reason -> atomic events
    arguments_nulled: int = 0  # rule 6: arguments of kept events their source does not say
    examples: dict = field(default_factory=dict)  # rule -> a few dropped events, with why
    # llm: what the rules dropped of the model's events; the documents none of the model's
    # events cites, which give their extractive events (timelines.fill_extractive)
    written_dropped: Counter = field(default_factory=Counter)
    kept_extractive: dict = field(default_factory=dict)
    llm: dict = field(default_factory=dict)  # the LLM calls' summary (method llm)
    seconds: float = 0.0

    def line(self) -> str:
        return (
            f"timelines {self.month} ({self.method}): {self.documents:,} documents, "
            f"{self.complex_events:,} complex events of {self.documents_in_events:,} documents, "
            f"{self.atomic_events:,} atomic events; dropped by rule: "
            + ", ".join(f"{rule} {self.dropped[rule]:,}" for rule in sound.RULES)
            + (f" ({self.arguments_nulled:,} arguments nulled)" if self.arguments_nulled else "")
            + (
                f"; {self.kept_extractive['documents']:,} documents gave their extractive events"
                if self.kept_extractive
                else ""
            )
            + f" ({self.seconds:.1f} s)"
            + (f"; {self.llm['line']}" if self.llm else "")
        )


def build_timelines(cfg: Config, month: str, out: Path, history_start: date) -> Summary:
    """Into ``out`` (``<data_root>/timelines/<month>`` when :mod:`gdelt_forecast.pipeline.runner`
    runs it), from documents dated on or after ``history_start`` too (the release's: its complex
    events cite only its news)."""
    first, last = month_range(month)
    since = max(first - timedelta(days=cfg.timelines.history_days), history_start)
    with duck.open_warehouse(cfg) as con:
        docs = duck.records(
            con,
            "timelines/documents.sql",
            first_date=since,
            last_date=last,
            lead_chars=cfg.timelines.lead_chars,
            article_chars=cfg.timelines.article_chars,
        )
    if not any(d["date"] >= first for d in docs):
        raise TimelinesError(
            f"no kept documents dated in {month} in the warehouse at "
            f"{DataRoot(cfg.data_root).warehouse}: run `articles` and `database` first"
        )
    events = group(docs, first, cfg.timelines)
    llm: dict = {}
    if cfg.timelines.method == "llm":
        sent = time.monotonic()
        by_event, calls = written.timelines(cfg, events)
        write_calls(out / "llm_calls.parquet", calls)
        calls_summary = summarize(calls, time.monotonic() - sent)
        llm = {**calls_summary.to_dict(), "line": calls_summary.line()}
        stamp = {"method": LLM, "model": cfg.llm.model,
                 "prompt_version": written.PROMPT_VERSION}  # fmt: skip
    else:
        shown = progress(events, len(events), f"timelines {month}")
        by_event = {e.complex_event_id: extractive.timeline(e) for e in shown}
        stamp = EXTRACTED
    dropped, fallback = sound.Dropped(), sound.Dropped()
    ungrounded, nulled = None, 0
    if cfg.timelines.method == "llm":
        ungrounded, nulled = _grounding(cfg, by_event)
    kept_extractive = Counter()
    atoms = []
    for event in events:
        ce = event.complex_event_id
        available = {d["doc_id"]: d["date"] for d in event.documents}
        story = sound.sound([{**a, "complex_event_id": ce, **stamp} for a in by_event[ce]],
                            available, dropped, ungrounded)  # fmt: skip
        if cfg.timelines.method == "llm" and cfg.timelines.fill_extractive:
            story = _filled(event, story, available, fallback, kept_extractive)
        atoms += [{**atom, "seq": seq} for seq, atom in enumerate(story, 1)]
    written_dropped = Counter()
    if cfg.timelines.method == "llm":  # a model event the filling repeats is dropped by rule 3
        repeated = Counter({sound.REPEATED: kept_extractive["written_events_repeated"]})
        written_dropped = _sum(dropped.rules, repeated)
    write_parquet(
        pa.Table.from_pylist([_row(e, month) for e in events], COMPLEX_EVENTS),
        out / "complex_events.parquet",
    )
    write_parquet(pa.Table.from_pylist(atoms, TIMELINES), out / "timelines.parquet")
    return Summary(
        month=month,
        method=cfg.timelines.method,
        documents=len(docs),
        complex_events=len(events),
        documents_in_events=sum(len(e.documents) for e in events),
        atomic_events=len(atoms),
        dropped=_sum(dropped.rules, fallback.rules),
        written_dropped=written_dropped,
        kept_extractive=dict(kept_extractive),
        ungrounded=dropped.reasons if ungrounded else Counter(),
        arguments_nulled=nulled,
        examples=dropped.examples,
        llm=llm,
    )


def _filled(event, story: list[dict], available: dict, dropped: sound.Dropped,
            kept_extractive: Counter) -> list[dict]:  # fmt: skip
    """``story`` (the model's sound events) with the extractive events of each document none
    of them cites, in date order, rules 2 and 3 applied again over the whole (a model event
    that repeats an earlier document's extractive one goes, counted in ``kept_extractive``)."""
    cited = {a["source_doc_id"] for a in story}
    filling = [
        {**a, "complex_event_id": event.complex_event_id, **EXTRACTED}
        for a in extractive.timeline(event)
        if a["source_doc_id"] not in cited
    ]
    if not filling:
        return story
    merged = sorted([*story, *filling], key=lambda a: (_start(a), available[a["source_doc_id"]]))
    filled = sound.sound(merged, available, dropped)
    kept_extractive["documents"] += len({a["source_doc_id"] for a in filling})
    kept_extractive["atomic_events"] += sum(a["method"] == EXTRACTIVE for a in filled)
    kept_extractive["written_events_repeated"] += len(story) - sum(
        a["method"] == LLM for a in filled
    )
    return filled


def _start(atom: dict) -> date:
    """Where an event sorts in its timeline: the start of its date's period, else the day its
    source was first seen."""
    span = period(atom["date"]) if atom["date"] else None
    return span[0] if span else atom["source_date"]


def _sum(*counts: Counter) -> Counter:
    total = Counter()
    for count in counts:
        total.update(count)  # unlike +, keeps a rule that dropped nothing
    return total


def _grounding(cfg: Config, by_event: dict[str, list[dict]]):
    """Rule 6 for the model's events, against their source documents (read whole from the
    warehouse, not as the prompt cut them): sets to null, in ``by_event``, each argument its
    source does not say, and gives how many it nulled and the check of an event (why it
    does not stand in its source, or None)."""
    doc_ids = sorted({a["source_doc_id"] for atoms in by_event.values() for a in atoms})
    with duck.open_warehouse(cfg) as con:
        rows = duck.records(con, "timelines/sources.sql", doc_ids=doc_ids)
    documents = {r["doc_id"]: grounding.Document(r["title"], r["text"], r["date"]) for r in rows}
    scaffold = written.scaffolding()
    nulled = 0
    for atoms in by_event.values():
        for atom in atoms:
            unsaid = grounding.unsaid_arguments(atom, documents[atom["source_doc_id"]], scaffold)
            atom.update(dict.fromkeys(unsaid))
            nulled += len(unsaid)

    def check(atom: dict) -> str | None:
        return grounding.ungrounded(atom, documents[atom["source_doc_id"]], scaffold)

    return check, nulled


def _row(event, month: str) -> dict:
    return {
        "complex_event_id": event.complex_event_id,
        "month": month,
        "title": event.title,
        "countries": [event.country_a, event.country_b],
        "first_date": event.first_date,
        "last_date": event.last_date,
        "n_documents": len(event.documents),
        "doc_ids": [d["doc_id"] for d in event.documents],
        "doc_dates": [d["date"] for d in event.documents],
    }
