"""``gdelt-forecast baseline --method llm --task MCNC``: the `llm` server answers a
release's OpenForecast task records of one split with OpenForecast's own evaluation prompts
(the paper's Table 10, ``prompts/openforecast-eval-v1``), in free text as the paper
evaluates models, and ``evaluate-tasks`` scores the answers: accuracy for MCNC, MCAC and
VQA; LRAE for STF, LTF and AQA, with the same model as judge and the release's news as
evidence. Calls and predictions land in ``<data_root>/baselines/<release>/tasks/<TASK>/``;
the scores join the release's leaderboard (:mod:`gdelt_forecast.baselines.answered`).

A prompt shows what the record shows a model (its background, question and options), never
its target or answer; STF's ``{time}`` is the day its question names.
"""

from __future__ import annotations

from pathlib import Path

from gdelt_forecast.baselines import answered
from gdelt_forecast.contract.text import DATE
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.parquet_io import read_rows
from gdelt_forecast.timelines.written import listed

PROMPT_VERSION = "openforecast-eval-v1"
PROMPTS = Path(__file__).parent / "prompts" / PROMPT_VERSION
LETTERS = "ABCD"


def prompt(record: dict) -> str:
    """The Table 10 prompt of ``record``'s task, filled in from what the record shows."""
    task = record["task"]
    fields = {"background": listed(record["background"]), "question": record["question"]}
    if task in ("MCNC", "MCAC"):
        options = zip(LETTERS, record["candidates"], strict=True)
        fields["options"] = "\n".join(f"({letter}) {text}" for letter, text in options)
    elif task == "VQA":
        fields["options"] = record["candidates"][0]
    elif task == "STF":  # "What events will occur on 2025-08-07?"
        fields["time"] = DATE.search(record["question"])[0]
    return (PROMPTS / f"{task.lower()}.txt").read_text(encoding="utf-8").format(**fields)


class Summary(answered.Summary):
    def line(self) -> str:
        from gdelt_forecast.tasks.evaluate import render

        return (
            f"baseline llm on {self.task} ({self.split}):\n{render(self.scores)}\n"
            + (self.llm["line"])
        )


def answer_tasks(cfg: Config, folder: Path, task: str, split: str = "test") -> Summary:
    from gdelt_forecast.tasks.evaluate import evaluate_tasks

    path = folder / "tasks" / task / f"{split}.parquet"
    rows = read_rows(path)
    if not rows:
        raise StageError(f"baseline: {folder.name} has no {task} records in {split} ({path})")
    return answered.answered(
        Summary, cfg, folder.name, task, split, f"tasks/{task}",
        [(r["id"], prompt(r)) for r in rows], PROMPT_VERSION,
        lambda predictions: evaluate_tasks(cfg, task, path, predictions, split),
    )  # fmt: skip
