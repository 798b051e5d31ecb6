"""``stats/quality.json``: how the release keeps its questions sound, in numbers.

The rules (the card's "Soundness" section says them in prose), what each removed in the
build (from the timelines' and tasks' summaries), the near-duplicate measure and threshold,
the gold-letter distribution of each multiple-choice task and how many records show an
empty or a one-event background (both read from the release's own task files).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from gdelt_forecast.contract import grounding, leakage, similarity, sound
from gdelt_forecast.contract.names import TASKS, letters

RULES = {
    leakage.PROVENANCE: "Provenance: every background event of a record comes from a document "
    "GDELT first saw on or before the record's cut, every target event from one first seen "
    "after it (each event records its source's `source_date`).",
    sound.AFTER_SOURCE: "No atomic event after its source: an event dated (by the period it "
    "names) after its source document was first seen is a plan, not an event, and is not in "
    "the timeline.",
    sound.REPEATED: "One event once: near-duplicate atomic events of a timeline are one "
    "event, kept from the earliest available document.",
    sound.GROUNDED: "Grounded in its source: an atomic event a model wrote is kept only "
    "where its source document's title and text hold its content words (token containment "
    f"of at least {grounding.THRESHOLD}, the prompt's own words never counting as support) "
    "and state its date (or it is the day the document was first seen); an event made of "
    "the prompt's scaffolding is dropped, and an argument (subject, event type, object, "
    "location) its document does not say is set to null.",
    leakage.ANSWER_IN_CONTEXT: "No answer in its own context: no target is a near-duplicate "
    "of its record's background, no multiple-choice option of another, no negative of a "
    "true event of the story.",
    leakage.GENERATED: "Generated parts say nothing their target does not: an AQA or MCAC "
    "question and gold answer a model wrote each stand in the record's target event (its "
    "text, date and arguments, by rule 6's checks, the task prompts' words never counting), "
    "and the answer is no near-duplicate of its question; otherwise the record keeps its "
    "extractive version.",
    leakage.ACROSS_SPLITS: "Across splits: no answer is a near-duplicate of a background "
    "in an earlier split (train, then dev, then test).",
}
MIRAI = (
    "MIRAI's queries see only rows and articles dated before their cutoff: the agent "
    "environment opens at a query's cutoff and no call reaches past it, and an article's "
    "date in `news` and `mirai/MIRAI/data_news.csv` is the day GDELT first saw it."
)


def quality(tasks_folder: Path, timelines: dict, tasks: dict) -> dict:
    """The figures, from the release's ``tasks/<TASK>/<split>.parquet`` and the timelines'
    and tasks' summaries as the manifest keeps them."""
    removed = {
        **{rule: {"atomic_events": n} for rule, n in timelines["dropped"].items()},
        **tasks["soundness"],
    }
    if sound.GROUNDED in removed:
        removed[sound.GROUNDED]["arguments"] = timelines["arguments_nulled"]
        removed[sound.GROUNDED]["by_reason"] = timelines["ungrounded"]
    rows = [
        row
        for path in sorted(tasks_folder.glob("*/*.parquet"))
        for row in pq.read_table(path, columns=["task", "background", "answer"]).to_pylist()
    ]
    backgrounds = {
        task: Counter(min(len(r["background"]), 2) for r in rows if r["task"] == task)
        for task in TASKS
    }
    return {
        "description": "The soundness rules of the release's questions, what each removed "
        "in the build, and the shape of the answers.",
        "near_duplicate": {"measure": similarity.RULE, "threshold": similarity.THRESHOLD},
        "grounding": {"rule": grounding.VERSION, "threshold": grounding.THRESHOLD},
        "rules": [
            {"rule": rule, "text": text, "removed": removed.get(rule, {})}
            for rule, text in sorted(RULES.items())
        ],
        "gold_letters": letters(rows),
        "backgrounds": {
            task: {
                "records": sum(n.values()),
                "empty": n[0],
                "single_event": n[1],
                "share_empty": _share(n[0], n),
                "share_single_event": _share(n[1], n),
            }
            for task, n in backgrounds.items()
        },
        "mirai": MIRAI,
    }


def _share(part: int, sizes: Counter) -> float:
    total = sum(sizes.values())
    return round(part / total, 4) if total else 0.0
