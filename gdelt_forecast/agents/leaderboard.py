"""``agents/<release>/leaderboard.parquet``: one row per agent run on the release and per
run of the llm baseline (Direct IO, :mod:`gdelt_forecast.baselines.direct`; a re-run
replaces its row), and ``gdelt-forecast leaderboard``, which prints it as MIRAI's Table 2
reads: model, action, APIs, then first- and second-level precision, recall and F1 and the
quad classes' KL divergence (the rows hold the binary classes' too, which the site shows),
with the release's history and frequency baselines (from its manifest) among them; the llm
baseline's rows on OpenForecast's tasks (:mod:`gdelt_forecast.tasks.baseline`: ``task``,
``accuracy`` and LRAE's ``f1``) and on EV2's reasoning tasks
(:mod:`gdelt_forecast.reasoning.baseline`: ``task``, ``accuracy``) follow."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
from filelock import FileLock

from gdelt_forecast.agents.prompts import APIS
from gdelt_forecast.contract.names import REASONING
from gdelt_forecast.contract.names import TASKS as OPENFORECAST
from gdelt_forecast.ground.parquet_io import read_rows, write_parquet

FILE = "leaderboard.parquet"
_RUN = ("release", "run", "model", "action", "apis", "split", "samples", "prompt_version")
_LEVELS = ("first_level", "second_level")
_METRICS = ("precision", "recall", "f1")


def add(path: Path, meta: dict) -> None:
    summary = meta["summary"]
    scores = summary["scores"]
    row = {k: meta[k] for k in _RUN} | {"task": "MIRAI"}
    row |= {f"{level}_{m}": scores[level][m] for level in _LEVELS for m in _METRICS}
    row |= {
        "binary_kl": scores["binary"]["kl"],
        "quad_kl": scores["quad"]["kl"],
        "outside_apis": outside_apis(meta),
        "queries": summary["queries"],
        "prompt_tokens": summary["prompt_tokens"],
        "completion_tokens": summary["completion_tokens"],
        "finished": meta.get("finished"),
    }
    _store(path, row)


def outside_apis(meta: dict) -> int | None:
    """How many calls the run's traces made to environment functions outside its API set
    (``run.json``'s ``tools_called``); None for a run recorded before runs counted them. A
    row with any is not a result of its set, and is marked wherever it is shown."""
    if "tools_called" not in meta:
        return None
    offered = APIS.get(meta["apis"], ())
    return sum(n for t, n in meta["tools_called"].items() if t in APIS["all"] and t not in offered)


def add_task(path: Path, row: dict) -> None:
    """A row of an llm baseline's scores on one of OpenForecast's or EV2's tasks (``task``,
    ``accuracy``, ``f1``; :mod:`gdelt_forecast.baselines.answered`)."""
    _store(path, row)


def _store(path: Path, row: dict) -> None:
    """``row`` in place of the run's old one; ``finished`` is now unless the run recorded its
    own end (an agent's ``run.json``)."""
    now = datetime.now(UTC).replace(microsecond=0).isoformat()
    row = {**row, "finished": row.get("finished") or now}
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{path}.lock"):  # two runs on one release may finish at once
        rows = [r for r in read_rows(path) if r["run"] != row["run"]] + [row]
        keys = list(dict.fromkeys(k for r in rows for k in r))  # MIRAI's and the tasks' columns
        rows = [{k: r.get(k) for k in keys} for r in sorted(rows, key=lambda r: r["run"])]
        write_parquet(pa.Table.from_pylist(rows), path)


def mirai_rows(found: list[dict], baselines: dict) -> list[dict]:
    """The rows on MIRAI's queries: ``found``'s, then ``baselines``, a release manifest's
    ``baselines`` (method -> split -> MIRAI's scores), as rows of the same columns."""
    return [r for r in found if r.get("task", "MIRAI") == "MIRAI"] + [
        _baseline_row(method, split, scores)
        for method, splits in baselines.items()
        for split, scores in splits.items()
    ]


def task_rows(found: list[dict], tasks: tuple[str, ...]) -> list[dict]:
    """``found``'s rows on ``tasks`` (OpenForecast's or EV2's), in the tasks' order."""
    mine = [r for r in found if r.get("task") in tasks]
    return sorted(mine, key=lambda r: (tasks.index(r["task"]), r["model"]))


def render(path: Path, release: str, baselines: dict) -> str:
    """The leaderboard at ``path`` (if any run has made one) with the release's baselines."""
    found = read_rows(path)
    rows = mirai_rows(found, baselines)
    head = (
        f"{'model':<28}{'action':<10}{'apis':<8}{'split':<8}{'k':>3}"
        f"{'1st P':>8}{'1st R':>8}{'1st F1':>8}{'2nd P':>8}{'2nd R':>8}{'2nd F1':>8}{'KL':>8}"
    )
    lines = [f"MIRAI's queries on {release} (scores in %, KL in nats)", head]
    for r in sorted(rows, key=lambda r: (r["split"], -r["second_level_f1"])):
        scores = "".join(f"{r[f'{lv}_{m}']:>8.1f}" for lv in _LEVELS for m in _METRICS)
        apis = f"{r['apis']}!" if r.get("outside_apis") else r["apis"]
        lines.append(
            f"{r['model'][:27]:<28}{r['action']:<10}{apis:<8}{r['split']:<8}"
            f"{r['samples']:>3}{scores}{r['quad_kl']:>8.2f}"
        )
    if any(r.get("outside_apis") for r in rows):
        lines.append("!: the run called tools outside its API set; it is no result of that set")
    for title, tasks in (("OpenForecast's", OPENFORECAST), ("EV2's reasoning", REASONING)):
        mine = task_rows(found, tasks)
        if mine:
            head = f"{'model':<28}{'task':<8}{'acc':>8}{'F1':>8}"
            lines += ["", f"{title} tasks (in %; F1: LRAE's)", head]
            for r in mine:
                figures = "".join(_figure(r.get(k)) for k in ("accuracy", "f1"))
                lines.append(f"{r['model'][:27]:<28}{r['task']:<8}{figures}")
    return "\n".join(lines)


def _baseline_row(method: str, split: str, scores: dict) -> dict:
    return {
        "model": f"{method} baseline",
        "action": "-",
        "apis": "-",
        "split": split,
        "samples": "-",
        "queries": scores["n"],
        **{f"{lv}_{m}": scores[lv][m] for lv in _LEVELS for m in _METRICS},
        "binary_kl": scores["binary"]["kl"],
        "quad_kl": scores["quad"]["kl"],
    }


def _figure(value: float | None) -> str:
    return f"{'-':>8}" if value is None else f"{value:>8.1f}"
