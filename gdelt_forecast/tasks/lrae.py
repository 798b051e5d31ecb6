"""OpenForecast's LLM-based Retrieval-Augmented Evaluation (LRAE, section 5) for STF, LTF
and AQA, with the timelines' client (cache, retries, ``llm.model`` as the judge).

1. A prediction is split into atomic predictions: the paper's numbered list (STF, LTF), or
   the whole answer (AQA).
2. Stage 1 (Table 13's prompts, asking for JSON): each atomic prediction is judged against
   the gold labels; for STF and LTF the judge also names the label it matches. Correct
   predictions are TP; labels no prediction matched are FN.
3. Stage 2: every prediction stage 1 called wrong is judged again against the top
   ``EVIDENCE_K`` paragraphs of our own news corpus, retrieved by embedding similarity
   (the local all-MiniLM-L6-v2, or ``release.embedding_url``) among the documents
   dated after the record's cut. The paper searches the web (Serper) and embeds with
   bge-large-en-1.5; offline, the release's ``news/`` is the evidence. Supported
   predictions are MTP, the rest FP.

Per record: precision = (TP + MTP) / (TP + MTP + FP), recall = (TP + MTP) / (TP + MTP + FN),
F1 their harmonic mean (appendix B.3, formula 2), each 0 when its denominator is; the
``strict`` figures leave MTP out (formula 1). A missing or empty prediction has no atomic
predictions: precision and recall 0. Reported: macro averages over records. For AQA,
accuracy is the share of records whose answer stage 1 or stage 2 accepts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.embeddings import embed
from gdelt_forecast.llm import Answer, Request, Result, parse_numbered, run
from gdelt_forecast.tasks.generated import render

EVIDENCE_K = 5  # paragraphs per prediction, as in the paper
MIN_PARAGRAPH = 40  # characters: shorter lines (bylines, captions) are no evidence


class Verdict(Answer):
    answer: Literal["yes", "no"]


class Match(Verdict):
    index: Annotated[int, Field(ge=1, le=1000)] | None  # the matched label's number


def yes_no(text: str) -> str | None:
    """The last yes or no of a free-text answer, lower case; None without one."""
    found = re.findall(r"\b(yes|no)\b", text, re.IGNORECASE)
    return found[-1].lower() if found else None


def _verdict_from_text(text: str) -> dict:
    answer = yes_no(text)
    if answer is None:
        raise ValueError("no yes or no in the answer")
    index = re.search(r"\((\d+)\)", text)
    return {"answer": answer, "index": int(index[1]) if index else None}


def atomic(task: str, prediction: object) -> list[str]:
    """The atomic predictions of a raw prediction (a string, or a list of strings)."""
    if isinstance(prediction, list):
        return [str(p).strip() for p in prediction if str(p).strip()]
    text = str(prediction or "").strip()
    if task == "AQA" or not text:
        return [text] if text else []
    try:
        return parse_numbered(text)
    except ValueError:  # not a numbered list: one prediction a line
        return [line.strip() for line in text.splitlines() if line.strip()]


@dataclass
class Evidence:
    """Paragraphs of the news corpus with their embeddings, for stage 2."""

    paragraphs: list[str]
    dates: list[date]
    vectors: np.ndarray  # unit rows

    @classmethod
    def of(cls, cfg: Config, documents: list[dict], after: date) -> Evidence:
        """The paragraphs of the documents dated after ``after``, the earliest cut asked
        about: no query may be shown an earlier one, so none is embedded."""
        paragraphs, dates = [], []
        for doc in documents:
            if doc["date"] <= after:
                continue
            for line in [doc["title"] or "", *(doc["text"] or "").splitlines()]:
                if len(line.strip()) >= MIN_PARAGRAPH:
                    paragraphs.append(line.strip())
                    dates.append(doc["date"])
        return cls(paragraphs, dates, _unit(embed(cfg, paragraphs)))

    def top(self, queries: np.ndarray, after: list[date]) -> list[list[str]]:
        """For each query row, the ``EVIDENCE_K`` most similar paragraphs dated after its
        day (none when nothing is)."""
        if not self.paragraphs:
            return [[] for _ in after]
        similarity = queries @ self.vectors.T
        dated = np.array(self.dates, dtype="datetime64[D]")
        out = []
        for row, day in zip(similarity, after, strict=True):
            row = np.where(dated > np.datetime64(day, "D"), row, -np.inf)
            best = [i for i in np.argsort(-row, kind="stable")[:EVIDENCE_K] if row[i] > -np.inf]
            out.append([self.paragraphs[i] for i in best])
        return out


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True) if vectors.size else 1.0
    return vectors / np.where(norms == 0, 1.0, norms)


def _labels(record: dict) -> list[str]:
    return [e["text"] for e in record["target"]]


def _stage1(record: dict, n: int, prediction: str) -> Request:
    if record["task"] == "AQA":
        prompt = render(
            "judge_aqa", question=record["question"], label=record["answer"], prediction=prediction
        )
        answer = Verdict
    else:
        labels = "\n".join(f"({i}) {t}" for i, t in enumerate(_labels(record), 1))
        prompt = render("judge_labels", labels=labels, prediction=prediction)
        answer = Match
    messages = [{"role": "user", "content": prompt}]
    return Request(record["id"], f"judge:1:{n}", messages, answer, "judge", _verdict_from_text)


def _stage2(record: dict, n: int, prediction: str, evidence: list[str]) -> Request:
    listed = "\n".join(f"({i}) {p}" for i, p in enumerate(evidence, 1)) or "(none)"
    prompt = render("judge_evidence", evidence=listed, prediction=prediction)
    messages = [{"role": "user", "content": prompt}]
    return Request(record["id"], f"judge:2:{n}", messages, Verdict, "judge", _verdict_from_text)


def score(
    cfg: Config, records: list[dict], predictions: dict[str, object], news: list[dict]
) -> tuple[dict, list[Result]]:
    """Macro averages over ``records`` (of one task) and every judge call's result;
    ``news``: the evidence corpus's documents (doc_id, date, title, text)."""
    items = [
        (r, n, text)
        for r in records
        for n, text in enumerate(atomic(r["task"], predictions.get(r["id"])), 1)
    ]
    first = run(cfg, [_stage1(r, n, text) for r, n, text in items])
    wrong = [item for item, result in zip(items, first, strict=True) if not _yes(result)]
    second: list[Result] = []
    if wrong:
        evidence = Evidence.of(cfg, news, min(r["cut_date"] for r, _, _ in wrong))
        queries = _unit(embed(cfg, [text for _, _, text in wrong]))
        found = evidence.top(queries, [r["cut_date"] for r, _, _ in wrong])
        second = run(cfg, [_stage2(r, n, t, e) for (r, n, t), e in zip(wrong, found, strict=True)])
    supported = {(r["id"], n) for (r, n, _), res in zip(wrong, second, strict=True) if _yes(res)}
    matched: dict[str, set[int]] = {}
    counts = {r["id"]: {"tp": 0, "mtp": 0, "fp": 0} for r in records}
    for (record, n, _), result in zip(items, first, strict=True):
        tally = counts[record["id"]]
        if _yes(result):
            tally["tp"] += 1
            index = result.answer.get("index")
            known = isinstance(index, int) and 1 <= index <= len(_labels(record))
            matched.setdefault(record["id"], set()).add(index if known else -n)
        elif (record["id"], n) in supported:
            tally["mtp"] += 1
        else:
            tally["fp"] += 1
    per_record = []
    for record in records:
        tally = counts[record["id"]]
        tally["fn"] = max(len(_labels(record)) - len(matched.get(record["id"], ())), 0)
        per_record.append(tally)
    return _summary(records[0]["task"] if records else "", per_record), first + second


def _yes(result: Result) -> bool:
    return result.answer is not None and result.answer.get("answer") == "yes"


def _prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def _summary(task: str, tallies: list[dict]) -> dict:
    n = len(tallies) or 1
    open_, strict = [], []
    for t in tallies:
        open_.append(_prf(t["tp"] + t["mtp"], t["fp"], t["fn"]))
        strict.append(_prf(t["tp"], t["fp"] + t["mtp"], t["fn"]))
    totals = {k: sum(t[k] for t in tallies) for k in ("tp", "mtp", "fp", "fn")}

    def mean(rows: list[tuple], i: int) -> float:
        return round(100 * sum(r[i] for r in rows) / n, 2)

    result = {
        "precision": mean(open_, 0),
        "recall": mean(open_, 1),
        "f1": mean(open_, 2),
        "strict": {"precision": mean(strict, 0), "recall": mean(strict, 1), "f1": mean(strict, 2)},
        "counts": totals,
    }
    if task == "AQA":
        result["accuracy"] = round(100 * sum(t["tp"] + t["mtp"] > 0 for t in tallies) / n, 2)
        result["strict"]["accuracy"] = round(100 * sum(t["tp"] > 0 for t in tallies) / n, 2)
    return result
