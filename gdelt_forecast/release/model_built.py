"""``quality.json``'s ``model_built`` and the card's "Model-built parts": every part of the
release a model wrote (the timelines' atomic events, the tasks' generated parts, EV2's
judged relations), with the model, the prompt versions, the calls and tokens, what the
model proposed and what the rules kept of it, and examples of what they dropped.

Calls and tokens come from the part's ``llm_calls.parquet`` in the release, each distinct
request once with the tokens it took when it was sent (a cached answer keeps them), so a
rebuild from the cache reports what building it cost. The model is the one the calls name;
its weights' sha256 and its server are what the release's config states
(``llm.weights_sha256``, ``llm.server``): an OpenAI-compatible server says neither.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from gdelt_forecast.contract import sound
from gdelt_forecast.contract.reasoning import CONSISTENT

PARTS = ("timelines", "tasks", "reasoning")
UNITS = {
    "timelines": "atomic events",
    "tasks": "generated parts (AQA's and MCAC's questions and answers, MCNC's negatives)",
    "reasoning": "event pairs judged both ways (causal and hierarchical relations)",
}


def model_built(out: Path, meta: dict) -> dict:
    """The section, from the release folder ``out`` and the manifest's stage summaries."""
    llm = meta["config"]["llm"]
    parts = {}
    for part in PARTS:
        path = out / part / "llm_calls.parquet"
        if path.exists():
            calls = pq.read_table(path).to_pylist()
            parts[part] = {
                "models": sorted({c["model"] for c in calls}),
                "prompt_versions": _versions(out, part),
                "calls": _calls(calls),
                "unit": UNITS[part],
                **ITEMS[part](meta[part], len(calls)),
            }
    return {
        "description": "The parts of the release a model wrote, what it proposed and what "
        "the soundness rules kept of it.",
        "model": {k: llm.get(k) for k in ("model", "weights_sha256", "server")},
        "parts": parts,
    }


def _calls(calls: list[dict]) -> dict:
    once = list({c["hash"]: c for c in calls}.values())
    return {
        "calls": len(calls),
        "distinct": len(once),
        "ok": sum(c["status"] == "ok" for c in calls),
        "fallback": sum(c["status"] == "fallback" for c in calls),
        "failed": sum(c["status"] == "failed" for c in calls),
        "retried": sum(c["attempts"] > 1 for c in calls),
        "failed_by_reason": dict(Counter(c["reason"] for c in calls if c["status"] == "failed")),
        "prompt_tokens": sum(c["prompt_tokens"] for c in once),
        "completion_tokens": sum(c["completion_tokens"] for c in once),
    }


def _versions(out: Path, part: str) -> list[str]:
    """The prompt versions of the part's model-written records."""
    folder = {"timelines": out / "timelines" / "timelines.parquet"}.get(part, out / part)
    files = [folder] if folder.is_file() else sorted(folder.glob("*/*.parquet"))
    found = {
        r["prompt_version"]
        for f in files
        for r in pq.read_table(f, columns=["method", "prompt_version"]).to_pylist()
        if r["method"] == "llm"
    }
    return sorted(found)


def _timelines(summary: dict, calls: int) -> dict:
    """The extractive events of the documents no model event cites are not the model's."""
    dropped, fallback = summary["written_dropped"], summary["kept_extractive"]
    kept = summary["atomic_events"] - fallback.get("atomic_events", 0)
    proposed = kept + sum(dropped.values())
    checked = proposed - dropped.get(sound.AFTER_SOURCE, 0)  # rule 6 runs after rule 2
    grounded = checked - dropped.get(sound.GROUNDED, 0)
    return {
        "proposed": proposed,
        "kept": kept,
        "filled_by_extractive": {
            "documents": fallback.get("documents", 0),
            "atomic_events": fallback.get("atomic_events", 0),
        },
        "dropped": dropped,
        "grounding_rate": round(grounded / checked, 4) if checked else None,
        "ungrounded_by_reason": summary["ungrounded"],
        "arguments_nulled": summary["arguments_nulled"],
        "examples": summary["examples"],
    }


def _tasks(summary: dict, calls: int) -> dict:
    """One call a record whose parts the model was asked for; the others keep their
    extractive version (a failed call, too few parts left, rule 7)."""
    kept_extractive = summary["kept_extractive"]
    return {
        "proposed": calls,
        "kept": calls - sum(kept_extractive.values()),
        "kept_extractive": kept_extractive,
        "dropped": summary["model_dropped"],
        "examples": summary["examples"],
    }


def _reasoning(summary: dict, calls: int) -> dict:
    judged = summary["judged"]
    return {
        "proposed": judged.get("pairs", 0),
        "kept": judged.get("consistent", 0),
        "dropped": {CONSISTENT: judged.get("inconsistent", 0), "failed": judged.get("failed", 0)},
        "examples": summary["examples"],
    }


ITEMS = {"timelines": _timelines, "tasks": _tasks, "reasoning": _reasoning}
