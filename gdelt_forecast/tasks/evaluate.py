"""``gdelt-forecast evaluate-tasks --task T --tasks PATH --predictions FILE``: score
predictions for one of the six tasks.

Predictions are JSON Lines, ``{"id": ..., "prediction": ...}`` (the last line of an id wins;
a line without an id is counted, as for ``evaluate``). A record without a prediction, or
with one that cannot be read, scores as wrong and is counted.

- MCNC, MCAC: accuracy. The answer is the option letter in the paper's form "(B)" (the last
  one in the text), or a bare letter A-D with nothing but punctuation or "Answer:" around it.
- VQA: accuracy. The answer is the last "yes" or "no" of the text.
- STF, LTF, AQA: LRAE (:mod:`gdelt_forecast.tasks.lrae`), with ``llm.model`` as the judge; its
  calls are cached under the data root like every LLM call, and the result names the judge
  and the embedding model of the evidence.

``--tasks`` is a task file or a folder holding them (``tasks/<month>/`` of a data root, or a
release's ``tasks/<TASK>/``, whose splits ``--split`` picks from). The evidence for LRAE is
``--news`` (a Parquet file or folder of news: doc_id, date, title, text); by default the
release's ``news/`` when ``--tasks`` lies in a release, else the data root's warehouse.
"""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow.dataset as ds

from gdelt_forecast.contract.names import MANIFEST, TASKS
from gdelt_forecast.ground import duck
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.embeddings import model_name
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.llm import summarize
from gdelt_forecast.scoring.answers import option_letter
from gdelt_forecast.scoring.predictions import bad_lines_note, coverage, predictions_by_id
from gdelt_forecast.tasks import lrae

CLOSED = ("MCNC", "MCAC", "VQA")


class TaskEvaluateError(StageError):
    """The tasks, predictions or news cannot be read."""


def parse_choice(task: str, raw: object) -> str | None:
    """The option a raw prediction chose: a letter A-D, or yes/no for VQA; None if none."""
    text = str(raw or "")
    return lrae.yes_no(text) if task == "VQA" else option_letter(text)


def evaluate_tasks(
    cfg: Config,
    task: str,
    tasks_path: Path,
    predictions_path: Path,
    split: str | None = None,
    news: Path | None = None,
) -> dict:
    t0 = time.monotonic()
    if task not in TASKS:
        raise TaskEvaluateError(f"task {task!r}: one of {', '.join(TASKS)}")
    records = _records(tasks_path, task, split)
    predictions, counts = predictions_by_id(predictions_path, TaskEvaluateError)
    result: dict = {
        "task": task,
        "tasks": str(tasks_path),
        "split": split,
        **coverage({r["id"] for r in records}, predictions, counts),
    }
    if task in CLOSED:
        chosen = {
            r["id"]: parse_choice(task, predictions[r["id"]])
            for r in records
            if r["id"] in predictions
        }
        result["unparseable"] = sum(c is None for c in chosen.values())
        correct = sum(chosen.get(r["id"]) == r["answer"] for r in records)
        result["accuracy"] = round(100 * correct / len(records), 2)
    else:
        started = time.monotonic()
        scores, calls = lrae.score(cfg, records, predictions, _news(cfg, tasks_path, news))
        calls_summary = summarize(calls, time.monotonic() - started)
        llm = {**calls_summary.to_dict(), "line": calls_summary.line()}
        result |= scores | {
            "judge_model": cfg.llm.model,
            "evidence_model": model_name(cfg),
            "llm": llm,
        }
    result["seconds"] = round(time.monotonic() - t0, 3)
    return result


def render(result: dict) -> str:
    head = (
        f"{result['task']}: {result['records']} records ({result['predicted']} predicted, "
        f"{result['missing']} missing, {result['unknown_ids']} unknown ids, "
        f"{result['bad_lines']} bad lines)"
    )
    if "f1" not in result:
        return "\n".join(
            [
                f"{head}; accuracy {result['accuracy']:.2f}% ({result['unparseable']} unparseable)",
                *bad_lines_note(result),
            ]
        )
    strict = result["strict"]
    lines = [
        head,
        f"LRAE (judge {result['judge_model']}, evidence by {result['evidence_model']}): "
        f"precision {result['precision']:.2f}, recall {result['recall']:.2f}, "
        f"F1 {result['f1']:.2f}; without evidence: precision {strict['precision']:.2f}, "
        f"recall {strict['recall']:.2f}, F1 {strict['f1']:.2f}",
        "atomic predictions: {tp} TP, {mtp} MTP, {fp} FP; {fn} labels missed".format(
            **result["counts"]
        ),
    ]
    if "accuracy" in result:
        lines.append(
            f"accuracy {result['accuracy']:.2f}% (without evidence {strict['accuracy']:.2f}%)"
        )
    return "\n".join([*lines, *bad_lines_note(result), result["llm"]["line"]])


def _records(path: Path, task: str, split: str | None) -> list[dict]:
    if not path.exists():
        raise TaskEvaluateError(f"no task records at {path}")
    files = [path] if path.is_file() else sorted(path.rglob("*.parquet"))
    files = [f for f in files if f.name != "llm_calls.parquet"]
    rows = ds.dataset(files, format="parquet").to_table().to_pylist() if files else []
    rows = [r for r in rows if r["task"] == task and split in (None, r["split"])]
    if not rows:
        where = f" ({split})" if split else ""
        raise TaskEvaluateError(f"no {task}{where} records in {path}")
    return rows


def _news(cfg: Config, tasks_path: Path, news: Path | None) -> list[dict]:
    columns = ["doc_id", "date", "title", "text"]
    if news is None:
        release = next((p for p in tasks_path.resolve().parents if (p / MANIFEST).exists()), None)
        if release is None:
            with duck.open_warehouse(cfg) as con:
                return (
                    con.sql(f"SELECT {', '.join(columns)} FROM news").to_arrow_table().to_pylist()
                )
        news = release / "news"
    if not news.exists():
        raise TaskEvaluateError(f"no news at {news}: pass --news")
    return ds.dataset(news, format="parquet").to_table(columns=columns).to_pylist()
