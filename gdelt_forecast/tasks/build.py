"""``gdelt-forecast tasks --month YYYY-MM``: OpenForecast's six tasks from the timelines.

Reads ``timelines/<month>/`` (complex events and their atomic events), cuts each timeline
(:mod:`gdelt_forecast.tasks.cut`: soundness rule 1, provenance), builds the records of every cut
(:mod:`gdelt_forecast.tasks.records`), drops those that break rules 4 and 5
(:mod:`gdelt_forecast.contract.leakage`), spreads the multiple-choice answers evenly over A-D and
writes ``<data_root>/tasks/<month>/<TASK>/<split>.parquet`` (the release's layout), replaced
whole on every run; the summary counts what each rule removed. The generated parts follow
``timelines.method``: ``extractive`` rules, or the LLM.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from gdelt_forecast.contract import leakage
from gdelt_forecast.contract.names import SPLITS, TASKS, letters
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.dates import month_range
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.llm import summarize, write_calls
from gdelt_forecast.reference import tables
from gdelt_forecast.tasks import extractive, generated, records
from gdelt_forecast.tasks.cut import cuts, split_of
from gdelt_forecast.timelines.stored import read_timelines


@dataclass
class Summary(StageSummary):
    month: str
    method: str
    timelines: int = 0
    cuts: int = 0
    uncut: int = 0  # timelines without a usable cut
    left_out: int = 0  # atomic events undated or dated across their cut
    records: dict = field(default_factory=dict)  # task -> records written
    splits: dict = field(default_factory=dict)  # split -> records written, all tasks
    skipped: dict = field(default_factory=dict)  # task -> cuts without a record, and why
    # negatives the same-arguments rule discarded, by the method that wrote them
    negatives_discarded: Counter = field(default_factory=Counter)
    kept_extractive: dict = field(default_factory=dict)  # llm: task -> records the model missed
    model_dropped: dict = field(default_factory=dict)  # llm: rule -> the model's parts it dropped
    examples: dict = field(default_factory=dict)  # llm: rule -> a few turned-down parts, why
    # soundness rule -> what it removed: {"background_events", "cut_days"} for rule 1,
    # {"negatives", "records"} for rule 4, {"records"} for rule 5
    soundness: dict = field(default_factory=dict)
    letters: dict = field(default_factory=dict)  # MCNC, MCAC -> gold letter -> records
    llm: dict = field(default_factory=dict)
    seconds: float = 0.0

    def line(self) -> str:
        counts = ", ".join(f"{t} {n}" for t, n in self.records.items())
        rules = "; ".join(
            f"{rule} " + ", ".join(f"{n:,} {what.replace('_', ' ')}" for what, n in found.items())
            for rule, found in self.soundness.items()
        )
        return (
            f"tasks {self.month} ({self.method}): {self.cuts} cuts of {self.timelines} "
            f"timelines ({self.uncut} without one); {counts}; "
            f"{sum(self.negatives_discarded.values())} negatives discarded; removed by rule: "
            f"{rules} ({self.seconds:.1f} s)" + (f"; {self.llm['line']}" if self.llm else "")
        )


def build_tasks(cfg: Config, month: str, out: Path) -> Summary:
    """From ``<data_root>/timelines/<month>`` into ``out`` (``<data_root>/tasks/<month>``
    when :mod:`gdelt_forecast.pipeline.runner` runs it): ``<TASK>/<split>.parquet`` for every task
    and split, empty ones too."""
    timelines = DataRoot(cfg.data_root).month("timelines", month)
    summary = Summary(month=month, method=cfg.timelines.method)
    summary.negatives_discarded["extractive"] = 0
    provenance = Counter(background_events=0, cut_days=0)
    in_context = Counter(negatives=0, records=0)
    generated_parts = 0
    atoms, countries = read_timelines(timelines, month)
    pools = extractive.Pools(atoms, countries, *_reference_names())
    first, _ = month_range(month)
    rows: list[dict] = []
    skipped: Counter = Counter()
    seed = cfg.tasks.seed
    for ce in sorted(atoms):
        found, lost = cuts(ce, atoms[ce], cfg.tasks)
        provenance["cut_days"] += lost
        summary.uncut += not found
        summary.cuts += len(found)
        for cut in found:
            summary.left_out += cut.left_out
            provenance["background_events"] += cut.withheld
            split = split_of(cut.cut_date, first, cfg.tasks)
            mcnc, turned_down = records.mcnc(cut, split, seed, pools)
            summary.negatives_discarded["extractive"] += turned_down["discarded"]
            in_context["negatives"] += turned_down["near-duplicate"]
            made = [
                records.stf(cut, split, seed),
                records.ltf(cut, split),
                records.aqa(cut, split, seed),
                records.mcac(cut, split, seed, pools),
                mcnc,
            ]
            rows += [r for r in made if r is not None]
            skipped.update(_missing(made))
    if cfg.timelines.method == "llm":
        sent = time.monotonic()
        rows, calls, verdicts = generated.written(cfg, rows, pools)
        write_calls(out / "llm_calls.parquet", calls)
        calls_summary = summarize(calls, time.monotonic() - sent)
        summary.llm = {**calls_summary.to_dict(), "line": calls_summary.line()}
        summary.kept_extractive = dict(verdicts.kept)
        summary.examples = verdicts.examples
        summary.model_dropped = {
            rule: sum(n for v, n in verdicts.turned_down.items() if generated.DROPS[v] == rule)
            for rule in generated.DROPS.values()
        }
        summary.negatives_discarded["llm"] = verdicts.turned_down["discarded"]
        in_context["negatives"] += verdicts.turned_down["near-duplicate"]
        generated_parts = verdicts.turned_down[leakage.GENERATED]
    for row in rows:  # the cut puts every event on its side: a failure is a bug, not data
        if why := leakage.dated_wrong(row) or leakage.unsourced(row):
            raise StageError(f"tasks: {row['id']}: {why}")
    story = {ce: [a["text"] for a in story] for ce, story in atoms.items()}
    made = len(rows)
    rows = [r for r in rows if not leakage.answer_in_context(r, story[r["complex_event_id"]])]
    in_context["records"] = made - len(rows)
    leaks = leakage.leaked(rows)
    rows = records.balance([r for r in rows if r["id"] not in leaks], seed)
    rows += [records.vqa(r, seed) for r in rows if r["task"] == "MCNC"]
    for task in TASKS:
        mine = [r for r in rows if r["task"] == task]
        for split in SPLITS:
            part = [r for r in mine if r["split"] == split]
            write_parquet(
                pa.Table.from_pylist(part, records.SCHEMA), out / task / f"{split}.parquet"
            )
    summary.timelines = len(atoms)
    summary.records = {t: sum(r["task"] == t for r in rows) for t in TASKS}
    summary.splits = dict(Counter(r["split"] for r in rows))
    summary.skipped = dict(skipped)
    summary.soundness = {
        leakage.PROVENANCE: dict(provenance),
        leakage.ANSWER_IN_CONTEXT: dict(in_context),
        leakage.ACROSS_SPLITS: {"records": len(leaks)},
        # the records whose model-written parts it turned down (they keep the extractive ones)
        leakage.GENERATED: {"records": generated_parts},
    }
    summary.letters = letters(rows)
    return summary


def _missing(made: list[dict | None]) -> list[str]:
    """The tasks a cut gave no record, with the reason."""
    have = {r["task"] for r in made if r is not None}
    why = {
        "STF": "no day-precise target",
        "MCAC": "fewer than 3 wrong values",
        "MCNC": "fewer than 3 negatives (and so no VQA)",
    }
    return [f"{task}: {reason}" for task, reason in why.items() if task not in have]


def _reference_names() -> tuple[list[str], list[str]]:
    names = tables.countries().column("name").to_pylist()
    relations = tables.relations().to_pylist()
    return names, [r["name"] for r in relations if r["level"] == 2]
