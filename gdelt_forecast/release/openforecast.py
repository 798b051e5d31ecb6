"""A release's tasks in OpenForecast's own layout, ``openforecast/<split>.json``, so that its
evaluation scripts (miaomiao1215/Openforecast, ``evaluate/eval_*.py --dataset <split>.json``)
read them unchanged, as ``mirai/`` serves MIRAI's code.

Written against the fields those scripts and its construction code read (the repository has
no licence, so nothing of it is copied): JSON Lines, ASCII-escaped (some of its scripts open
the file in the locale's encoding), one line per complex event that has records in the split:

- ``title``, ``type`` (OpenForecast's category; GDELT has none: null), ``event_list`` (the
  complex event's timeline) and ``time`` (each event's date, as long as ``event_list``);
- ``MCNC``: ``known_timeline`` (the background: events dated on or before the cut),
  ``choices`` (four), ``label`` (the gold option's index, 0-3), ``true_event`` and ``VQA``,
  ``{"event", "label": true|false}``: the VQA record of the same cut, nested as its
  ``eval_VQA.py`` reads it;
- ``MCAC``: the same with ``question`` and ``question_type`` (the argument asked);
- ``STF``: ``known_timeline``, ``time`` (the day asked about), ``label`` (that day's events);
  ``LTF``: the same with ``time`` the cut; ``AQA``: ``known_timeline``, ``question``,
  ``label`` (the answer's text).

Every item also carries the record's ``id`` (and ``cut_date``), so predictions made from
these files score with ``gdelt-forecast evaluate-tasks``. An MCNC record whose cut has no VQA
record, or a VQA record whose cut has no MCNC (the leakage rules can drop one of the pair),
cannot take OpenForecast's shape: each is left out of these files and counted in the
manifest. Nothing is left out of ``tasks/``.
"""

from __future__ import annotations

import json
import string
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from gdelt_forecast.contract.names import SPLITS, TASKS
from gdelt_forecast.ground.files import replacing

FOLDER = "openforecast"
NO_VQA, NO_MCNC = "MCNC without a VQA of its cut", "VQA without an MCNC of its cut"


def lines(release: Path) -> tuple[dict[str, list[str]], dict]:
    """Each split's lines (splits without records have none) and what the manifest says of
    them: per split, complex events and items per task; what was left out, and why."""
    events = {r["complex_event_id"]: r for r in _rows(release / "timelines/complex_events.parquet")}
    timelines: dict[str, list[dict]] = defaultdict(list)
    for atom in sorted(_rows(release / "timelines/timelines.parquet"), key=lambda a: a["seq"]):
        timelines[atom["complex_event_id"]].append(atom)
    by_split: dict[str, dict[str, dict[str, list[dict]]]] = {s: {} for s in SPLITS}
    for task in TASKS:
        for split in SPLITS:
            path = release / "tasks" / task / f"{split}.parquet"
            for record in _rows(path) if path.exists() else []:
                story = by_split[split].setdefault(record["complex_event_id"], {})
                story.setdefault(task, []).append(record)
    left_out = Counter(dict.fromkeys((NO_VQA, NO_MCNC), 0))
    out: dict[str, list[str]] = {}
    summary: dict = {"splits": {}, "left_out": {}}
    for split, stories in by_split.items():
        rows = []
        counts: Counter = Counter()
        for ce in sorted(stories):
            line = _event_line(events[ce], timelines[ce], stories[ce], left_out)
            if any(line[task] for task in ("MCNC", "MCAC", "STF", "LTF", "AQA")):
                rows.append(json.dumps(line, ensure_ascii=True, sort_keys=False))
                counts["complex_events"] += 1
                counts.update({t: len(line[t]) for t in ("MCNC", "MCAC", "STF", "LTF", "AQA")})
                counts["VQA"] += len(line["MCNC"])
        if rows:
            out[split] = rows
            summary["splits"][split] = {"file": f"{FOLDER}/{split}.json", **counts}
    summary["left_out"] = dict(sorted(left_out.items()))
    return out, summary


def write(release: Path) -> dict:
    """``openforecast/<split>.json`` in ``release``; the manifest's summary of them."""
    out, summary = lines(release)
    for split, rows in out.items():
        with replacing(release / FOLDER / f"{split}.json") as tmp:
            tmp.write_text("".join(row + "\n" for row in rows), encoding="ascii")
    return summary


def _rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def _event_line(event: dict, timeline: list[dict], tasks: dict, left_out: Counter) -> dict:
    vqa = {r["cut_date"]: r for r in tasks.get("VQA", [])}
    mcnc = []
    for record in tasks.get("MCNC", []):
        paired = vqa.pop(record["cut_date"], None)
        if paired is None:
            left_out[NO_VQA] += 1
            continue
        mcnc.append(
            _choice(record) | {"VQA": {"event": paired["candidates"][0],
                                       "label": paired["answer"] == "yes", "id": paired["id"]}}
        )  # fmt: skip
    left_out[NO_MCNC] += len(vqa)
    return {
        "title": event["title"],
        "type": None,
        "complex_event_id": event["complex_event_id"],
        "event_list": [a["text"] for a in timeline],
        "time": [a["date"] for a in timeline],
        "MCNC": mcnc,
        "MCAC": [
            _choice(r) | {"question": r["question"], "question_type": r["argument"]}
            for r in tasks.get("MCAC", [])
        ],
        "STF": [_open(r, r["target"][0]["date"]) for r in tasks.get("STF", [])],
        "LTF": [_open(r, r["cut_date"].isoformat()) for r in tasks.get("LTF", [])],
        "AQA": [
            _item(r)
            | {"question": r["question"], "question_type": r["argument"], "label": r["answer"]}
            for r in tasks.get("AQA", [])
        ],  # fmt: skip
    }


def _item(record: dict) -> dict:
    return {
        "id": record["id"],
        "cut_date": record["cut_date"].isoformat(),
        "known_timeline": [a["text"] for a in record["background"]],
    }


def _choice(record: dict) -> dict:
    label = string.ascii_uppercase.index(record["answer"])
    return _item(record) | {
        "choices": list(record["candidates"]),
        "label": label,
        "true_event": record["candidates"][label],
    }


def _open(record: dict, time: str) -> dict:
    return _item(record) | {"time": time, "label": [a["text"] for a in record["target"]]}
