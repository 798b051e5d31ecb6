"""OpenForecast's evaluation of the closed tasks as its scripts do it (miaomiao1215/Openforecast
at 2e7ffaab, ``evaluate/eval_MCNC.py``, ``eval_MCAC.py``, ``eval_VQA.py``): the same fields
read from each line of ``--dataset``, the same prompts, answer parsing and accuracy. Written
here against their documented behaviour: that repository has no licence, so its scripts
cannot be copied into this one.

- MCNC and MCAC read ``info["MCNC"]`` / ``info["MCAC"]``: ``known_timeline``, ``choices`` and
  the integer ``label`` (MCAC also ``question``); the answer is the last parenthesised
  A-D of the output (upper-cased; MCAC also takes full-width brackets), else none; correct
  when it is ``"ABCD"[label]``.
- VQA reads ``info["MCNC"]``'s items again, with ``VQA.event`` and the boolean
  ``VQA.label``; the output says yes when it matches ``(Yes|will happen)`` anywhere
  (ignoring case), else no; correct when that equals the label.
- Accuracy is correct answers over all questions; unreadable answers count as wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

LETTERS = "ABCD"
MCNC_PROMPT = (
    "Based on the given event background, please select one option from the four candidate "
    "event options that is most likely to occur in the future. Your final answer should be a "
    "single option letter, in the form (option letter) such as (A), at the end of your "
    "response. \n Event background: \n{background} \n Event options: \n{options}\n Answer: "
)
MCAC_PROMPT = (
    "Based on the given event background and question, please select the most likely option "
    "from the four candidate options. Your final answer should be a single option letter, in "
    "the form (option letter) such as (A), at the end of your response. \n Event background: "
    "\n{background} \n Question: {question}\nEvent options: \n{options}\n Answer: "
)
VQA_PROMPT = (
    "Event background: \n{background} \n Event option: \n{options}\n Based on the given event "
    "background, please predict whether the given event option will happen with high "
    'probability. Your final answer should be "Yes" or "No", at the end of your response.\n '
    'Answer ("Yes" or "No"): '
)


def _numbered(events: list[str]) -> str:
    return "".join(f"{i}. {e.strip()}\n" for i, e in enumerate(events, 1))


def _options(choices: list[str]) -> str:
    return "".join(f"({LETTERS[i]}). {c.strip()}\n" for i, c in enumerate(choices))


def questions(dataset: Path, task: str) -> Iterator[tuple[dict, str]]:
    """Each question of ``task`` in the dataset file, with the prompt its script builds."""
    for line in dataset.read_text(encoding="utf-8").splitlines(keepends=True):
        info = json.loads(line)  # their scripts fail on a blank line, as json.loads does here
        title = info["title"] if isinstance(info["title"], str) else info["title"][0]
        for item in info["MCNC" if task in ("MCNC", "VQA") else task]:
            item = {**item, "title": title, "event_list": info["event_list"],
                    "time": info["time"], "type": info["type"]}  # fmt: skip
            background = _numbered(item["known_timeline"])
            if task == "MCNC":
                prompt = MCNC_PROMPT.format(
                    background=background, options=_options(item["choices"])
                )
            elif task == "MCAC":
                prompt = MCAC_PROMPT.format(background=background, question=item["question"],
                                            options=_options(item["choices"]))  # fmt: skip
            else:
                prompt = VQA_PROMPT.format(background=background, options=item["VQA"]["event"])
            yield item, prompt


def _letter(text: str, task: str) -> str | None:
    if task == "MCAC":
        text = text.replace("（", "(").replace("）", ")")
    for match in reversed(re.findall(r"\(([^)]*)\)", text.upper())):
        if match.strip() in LETTERS:
            return match.strip()
    return None


def _yes(text: str) -> bool:
    if re.search(r"(Yes|will happen)", text, re.IGNORECASE):
        return True
    if re.search(r'("No"|is unlikely|will not happen)', text, re.IGNORECASE):
        return False
    return "with high probability" in text


def evaluate(dataset: Path, task: str, model: Callable[[str], str]) -> tuple[dict, dict]:
    """Their metric file's numbers (``all_num``, ``true_num``, ``acc``), and each item's id
    with the model's output, for scoring the same answers elsewhere."""
    outputs, right, total = {}, 0, 0
    for item, prompt in questions(dataset, task):
        text = model(prompt)
        if task == "VQA":
            right += item["VQA"]["label"] == _yes(text)
            outputs[item["VQA"]["id"]] = text
        else:
            right += _letter(text, task) == LETTERS[item["label"]]
            outputs[item["id"]] = text
        total += 1
    return {"all_num": total, "true_num": right, "acc": right / total}, outputs
