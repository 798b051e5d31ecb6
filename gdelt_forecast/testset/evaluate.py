"""Score forecasts against MIRAI test queries the way MIRAI's ``agent_evaluation/eval.py`` does.

Per query, with the answer A and the cleaned prediction P (both dicts first-level -> second-level):

- first level: the set of A's keys against the set of P's valid keys (keys only: a key counts
  even with an empty or all-invalid list, as in MIRAI, and second-level prefixes never add one);
- second level: A's codes against P's valid codes listed under their own key;
- binary / quad: the deduplicated classes of those first-level codes;
- precision = tp / |P| (0 when P is empty), recall = tp / |A| (0 when A is empty),
  F1 = 2PR / (P + R) (0 when P + R = 0), all in percent;
- KL(binary|quad) = sum over every class c of p(c) ln(p(c) / q(c)), where p and q are the class
  frequencies of A's and P's first-level codes (one class per code, not deduplicated; 0 for
  every class of an empty side) plus 1e-10 each, not renormalised.

Every metric is then the mean over queries (macro average). An unparseable prediction and a
query without one score as an empty prediction, as MIRAI's ``load_predictions`` does on error;
a predictions file without a single JSON object naming a query_id is an error instead.

Where this differs from MIRAI's code (none of it changes a score of a well-formed prediction):
MIRAI asks gpt-3.5 to rewrite the agent's output as ``<answer>{...}</answer>`` and then
``eval``s it; here the raw string is parsed without a model (``parse_prediction``) and never
``eval``ed. MIRAI drops invalid and mismatched codes silently; here they are counted (the
issue asks for warning counts). MIRAI scores several rounds (average, max, repeated); here one
prediction per query. MIRAI calls the binary classes "mediation"/"conflict"; the reference
table's labels "cooperation"/"conflict" are used.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from gdelt_forecast.contract.names import LEVELS
from gdelt_forecast.errors import StageError
from gdelt_forecast.reference import tables
from gdelt_forecast.wellformed import wellformed, wellformed_value

EPSILON = 1e-10  # MIRAI's constant against log(0), added to both distributions
# The counts, then two about the predictions file itself: lines without a readable
# query id, and query ids given more than once (the last line wins).
WARNINGS = (
    "invalid_codes",
    "prefix_mismatch",
    "unparseable",
    "missing",
    "unknown_ids",
    "bad_lines",
    "duplicate_ids",
)


# --- CAMEO codebook -------------------------------------------------------------------------


@dataclass(frozen=True)
class Codebook:
    binary: dict[str, str]  # first-level code -> binary class
    quad: dict[str, str]  # first-level code -> quad label
    second_level: frozenset[str]
    binary_labels: tuple[str, ...]  # every class, in code order: the KL sums over all of them
    quad_labels: tuple[str, ...]


@cache
def codebook() -> Codebook:
    """Valid codes and classes from the project's relations table (level 1 and level 2)."""
    rows = tables.relations().to_pylist()
    first = sorted((r for r in rows if r["level"] == 1), key=lambda r: r["code"])
    return Codebook(
        binary={r["code"]: r["binary_class"] for r in first},
        quad={r["code"]: r["quad_label"] for r in first},
        second_level=frozenset(r["code"] for r in rows if r["level"] == 2),
        binary_labels=tuple(dict.fromkeys(r["binary_class"] for r in first)),
        quad_labels=tuple(
            dict.fromkeys(r["quad_label"] for r in sorted(first, key=lambda r: r["quad_class"]))
        ),
    )


# --- parsing a prediction --------------------------------------------------------------------

_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'"})
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_ANSWER_END = re.compile(r"</answer>", re.IGNORECASE)
_FINAL_ANSWER = re.compile(r"final\s*answer\s*:?", re.IGNORECASE)


def parse_prediction(raw: object) -> dict | None:
    """The prediction dict in `raw` (a dict, or a string an agent printed), None if there is none.

    Strings are tried, after curly quotes become straight ones, as: the last
    ``<answer>...</answer>`` (MIRAI's extraction format), the text after the last
    "Final Answer:" (the agents' format; a brace-less ``"01": [...], "02": [...]`` is wrapped
    in braces), the whole string, and its first ``{...}`` block. Each is read as JSON, then as
    a Python literal (single quotes, trailing commas). The last tag or "Final Answer:" wins
    because agents restate the prompt's example before they answer.
    """
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return None
    text = raw.translate(_QUOTES)
    for candidate in _candidates(text):
        parsed = _load_dict(candidate)
        if parsed is not None:
            return parsed
    return None


def _candidates(text: str) -> Iterator[str]:
    # Only up to the last closing tag: an opening tag with none after it would have the
    # search scan to the end of the text, once per such tag (minutes for a hostile line).
    end = max((m.end() for m in _ANSWER_END.finditer(text)), default=0)
    tags = _ANSWER_TAG.findall(text, 0, end)
    if tags:
        yield _first_braced(tags[-1]) or tags[-1]
    finals = list(_FINAL_ANSWER.finditer(text))
    if finals:
        tail = text[finals[-1].end() :].strip()
        block = _first_braced(tail)
        if block is not None:
            yield block
        elif tail:
            yield "{" + tail.splitlines()[0].strip().rstrip(".") + "}"
    yield text
    block = _first_braced(text)
    if block is not None:
        yield block


def _first_braced(text: str) -> str | None:
    """The first balanced ``{...}`` in `text` (codes hold no braces, so strings are not skipped)."""
    start = text.find("{")
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start : i + 1]
    return None  # truncated output


def _load_dict(text: str) -> dict | None:
    text = text.strip()
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested past the parser's limit
        try:
            value = ast.literal_eval(text)  # never eval(): predictions are untrusted text
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    return value if isinstance(value, dict) else None


# --- per-query metrics ------------------------------------------------------------------------


@dataclass(frozen=True)
class CleanPrediction:
    first_level: frozenset[str]
    second_level: frozenset[str]
    invalid_codes: int = 0  # keys not level 1, values not level 2 (e.g. "999", "0211")
    prefix_mismatch: int = 0  # valid second-level codes listed under another key


def clean_prediction(prediction: Mapping) -> CleanPrediction:
    """Keep MIRAI's valid part of a prediction dict and count what it drops."""
    book = codebook()
    first: set[str] = set()
    second: set[str] = set()
    invalid = mismatch = 0
    for raw_key, raw_values in prediction.items():
        key = _code(raw_key)
        if key in book.binary:
            first.add(key)
        else:
            invalid += 1
        for raw in _as_list(raw_values):
            code = _code(raw)
            if code not in book.second_level:
                invalid += 1
            elif code[:2] != key:
                mismatch += 1
            else:
                second.add(code)
    return CleanPrediction(frozenset(first), frozenset(second), invalid, mismatch)


def _code(value: object) -> str | None:
    # Strings only: 1 or 10 as numbers lost their leading zero, so they are not guessed at.
    return value.strip() if isinstance(value, str) else None


def _as_list(values: object) -> list:
    if values is None:
        return []
    if isinstance(values, str):  # {"01": "011"}: one code, not its characters
        return [values]
    if isinstance(values, list | tuple | set | frozenset):
        return list(values)
    return [values]


def answer_codes(answer: Mapping) -> tuple[frozenset[str], frozenset[str]]:
    """The answer's first-level (its keys) and second-level (its listed) codes.

    Unlike a prediction, a bad code in an answer is a bug in the test set, so it raises.
    """
    book = codebook()
    bad = [key for key in answer if key not in book.binary]
    bad += [
        code
        for key, codes in answer.items()
        for code in codes
        if code not in book.second_level or code[:2] != key
    ]
    if bad:
        raise ValueError(f"answer {dict(answer)} has invalid codes {bad}")
    return frozenset(answer), frozenset(code for codes in answer.values() for code in codes)


def prf(predicted: Iterable[str], gold: Iterable[str]) -> dict[str, float]:
    """MIRAI's per-query precision, recall and F1 in percent; 0 where a denominator is 0."""
    predicted, gold = set(predicted), set(gold)
    tp = len(predicted & gold)
    precision = tp / len(predicted) if predicted else 0.0
    recall = tp / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"precision": 100 * precision, "recall": 100 * recall, "f1": 100 * f1}


def kl_divergence(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]) -> float:
    """D(P||Q) in nats, P and Q the class frequencies of `gold` and `predicted` + EPSILON each.

    Not renormalised (as MIRAI): an empty answer against a non-empty prediction gives a tiny
    negative value, about -2.3e-9 per class the prediction holds.
    """
    total = 0.0
    for label in labels:
        p = (gold.count(label) / len(gold) if gold else 0.0) + EPSILON
        q = (predicted.count(label) / len(predicted) if predicted else 0.0) + EPSILON
        total += p * math.log(p / q)
    return total


def score_query(answer: Mapping, prediction: Mapping) -> dict:
    """Metrics of one query: a block per level (kl on binary and quad) and its drop counts."""
    book = codebook()
    gold_first, gold_second = answer_codes(answer)
    clean = clean_prediction(prediction)
    result: dict[str, Any] = {
        "first_level": prf(clean.first_level, gold_first),
        "second_level": prf(clean.second_level, gold_second),
    }
    for level, classes, labels in (
        ("binary", book.binary, book.binary_labels),
        ("quad", book.quad, book.quad_labels),
    ):
        # One class per first-level code: deduplicated for P/R/F1, counted for the KL.
        gold = [classes[c] for c in sorted(gold_first)]
        predicted = [classes[c] for c in sorted(clean.first_level)]
        result[level] = prf(predicted, gold) | {"kl": kl_divergence(gold, predicted, labels)}
    result["warnings"] = {
        "invalid_codes": clean.invalid_codes,
        "prefix_mismatch": clean.prefix_mismatch,
    }
    return result


def aggregate(scores: Sequence[dict]) -> dict:
    """Macro average of per-query scores: ``n`` and a block per level (zeros when n = 0)."""
    block: dict[str, Any] = {"n": len(scores)}
    for level in LEVELS:
        metrics = ("precision", "recall", "f1") + (("kl",) if level in ("binary", "quad") else ())
        block[level] = {
            m: (sum(s[level][m] for s in scores) / len(scores) if scores else 0.0) for m in metrics
        }
    return block


# --- files -------------------------------------------------------------------------------------


QUERY_COLUMNS = ("query_id", "answer", "answer_list", "horizon")


@dataclass(frozen=True)
class Query:
    query_id: str
    answer: dict[str, list[str]]
    horizon: int | None = None


def load_queries(path: Path) -> list[Query]:
    """Queries from the builder's Parquet (queries/subset.parquet) or a JSONL of the same fields."""
    with open(path, "rb") as f:
        is_parquet = f.read(4) == b"PAR1"
    if is_parquet:
        present = pq.read_schema(path).names
        columns = [c for c in QUERY_COLUMNS if c in present]  # skip the prompts and the rest
        records = pq.read_table(path, columns=columns).to_pylist()
    else:
        records = list(_jsonl(path))
    return [_query(record, path) for record in records]


def _query(record: object, path: Path) -> Query:
    """One query; a ValueError naming it (never its hostile content) when it is malformed."""
    if not isinstance(record, dict) or "query_id" not in record:
        raise ValueError(f"{path}: a query is {_what(record, 'query_id')}")
    query_id = wellformed(str(record["query_id"]), "queries")
    answer = record.get("answer")
    if isinstance(answer, str):
        answer = _load_dict(answer)  # JSON from the builder; Python repr from MIRAI's CSVs
    elif answer is None and _codes(record.get("answer_list")):
        answer = {}
        for code in sorted(record["answer_list"]):
            answer.setdefault(code[:2], []).append(code)
    # answer_codes checks the codes; their types are checked here (a code that is no
    # string, or a key that lists no codes, is no answer).
    if not isinstance(answer, dict) or not all(_codes(codes) for codes in answer.values()):
        raise ValueError(f"{path}: query {query_id} has no readable answer")
    horizon = record.get("horizon")
    try:
        horizon = None if horizon is None else int(horizon)
    except (TypeError, ValueError, OverflowError):  # a list, a word, NaN, Infinity
        raise ValueError(f"{path}: query {query_id} has no whole-number horizon") from None
    return Query(query_id, answer, horizon)


def _codes(value: object) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(code, str) for code in value)


def _jsonl(path: Path) -> Iterator[dict]:
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError as e:
                    raise ValueError(f"{path}:{number}: not JSON: {e}") from None
                except RecursionError:  # arrays or objects nested past the parser's limit
                    raise ValueError(f"{path}:{number}: not JSON: nested too deeply") from None


BAD_LINES_SHOWN = 10


class LineCounts(Counter):
    """Counts of a predictions file's bad and repeated lines, and the first bad lines, each
    as "line N is ..." (the file's bytes are read, so an undecodable line is one of them)."""

    def __init__(self):
        super().__init__()
        self.bad: list[str] = []

    def add_bad(self, why: str) -> None:
        self["bad_lines"] += 1
        if len(self.bad) < BAD_LINES_SHOWN:
            self.bad.append(why)


def load_predictions(path: Path, key: str = "query_id") -> tuple[dict[str, object], LineCounts]:
    """``key`` value -> raw prediction (the last line of an id wins: a file appended to by a
    re-run ends with its newest answers), and counts of bad and repeated lines.

    A line that is not a JSON object with a ``key`` (or not UTF-8, or nested past the JSON
    parser's limit) only counts as a bad line (its record scores as missing), but a file
    whose every line is one (a JSON array, plain text, a CSV) is not a predictions file:
    ValueError naming its first line. An empty file is no error. Ids and predictions are
    well-formed text (:mod:`gdelt_forecast.wellformed`): a lone surrogate or a NUL escaped in
    a JSON string is replaced, as it could be written nowhere else (a report, a cache).
    """
    predictions: dict[str, object] = {}
    counts = LineCounts()
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                counts.add_bad(f"line {number} is not UTF-8 ({exc.reason} at byte {exc.start})")
                continue
            if number == 1:
                line = line.removeprefix("\ufeff")  # a BOM some editors write first
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                record = _NOT_JSON
            except RecursionError:
                record = _TOO_DEEP
            if not isinstance(record, dict) or record.get(key) is None:
                # no id to blame: that record counts as missing
                counts.add_bad(f"line {number} is {_what(record, key)}")
                continue
            try:
                record_id = wellformed(str(record[key]), "predictions")
                prediction = wellformed_value(record.get("prediction"), "predictions")
            except RecursionError:  # parsed, but too deep to walk (or print) once more
                counts.add_bad(f"line {number} is {_what(_TOO_DEEP, key)}")
                continue
            counts["duplicate_ids"] += record_id in predictions
            predictions[record_id] = prediction
    if counts.bad and not predictions:
        raise ValueError(
            f"{path}: no line is a JSON object with a {key} ({counts.bad[0]}): predictions are "
            f'JSON Lines, one {{"{key}": ..., "prediction": ...}} object per line'
        )
    return predictions, counts


def predictions_by_id(path: Path, error: type[Exception]) -> tuple[dict[str, object], LineCounts]:
    """:func:`load_predictions` keyed by ``id`` (the task records' key), its failures as
    ``error`` in one line naming the file."""
    try:
        return load_predictions(path, key="id")
    except OSError as exc:
        raise error(f"cannot read {exc.filename}: {exc.strerror}") from None
    except ValueError as exc:
        raise error(str(exc).splitlines()[0]) from None


def bad_lines_note(result: dict) -> list[str]:
    """The report's line naming the first bad lines of the predictions file, if any."""
    bad = result.get("bad_lines_first") or []
    return (
        [f"bad lines: {'; '.join(bad)}" + ("; ..." if len(bad) == BAD_LINES_SHOWN else "")]
        if bad
        else []
    )


def coverage(ids: set[str], predictions: dict, counts: LineCounts) -> dict:
    """How the predictions cover the records ``ids``: the counts every report starts with."""
    return {
        "records": len(ids),
        "predicted": len(ids & set(predictions)),
        "missing": len(ids - set(predictions)),
        "unknown_ids": len(set(predictions) - ids),
        "bad_lines": counts["bad_lines"],
        "duplicate_ids": counts["duplicate_ids"],
        "bad_lines_first": counts.bad,
    }


_NOT_JSON = object()
_TOO_DEEP = object()
_JSON_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


def _what(record: object, key: str) -> str:
    if record is _NOT_JSON:
        return "not JSON"
    if record is _TOO_DEEP:
        return "JSON nested too deeply"
    if isinstance(record, dict):
        return f"an object without a {key}"
    return f"a JSON {_JSON_TYPES.get(type(record), 'null')}"


# --- evaluation ------------------------------------------------------------------------------


class EvaluateError(StageError):
    """The queries or predictions cannot be read, or the queries are broken."""


def evaluate(queries_path: Path, predictions_path: Path) -> dict:
    """Score a predictions JSONL against a queries file; see `score` for the result."""
    try:
        predictions, counts = load_predictions(Path(predictions_path))
        return score(load_queries(Path(queries_path)), predictions, counts)
    except OSError as exc:
        raise EvaluateError(f"cannot read {exc.filename}: {exc.strerror}") from None
    except ValueError as exc:  # a broken queries or predictions file: say which, in one line
        raise EvaluateError(str(exc).splitlines()[0]) from None


def score(
    queries: Sequence[Query], predictions: Mapping[str, object], counts: LineCounts | None = None
) -> dict:
    """The overall block, warnings, and breakdowns by horizon and by the answer's quad classes.

    A query belongs to every quad class among its answer's first-level codes, so the
    ``by_quad_class`` groups overlap (their n sum to at least n) and each group's scores are
    those of the whole query, not of its codes of that class.
    """
    book = codebook()
    warnings = dict.fromkeys(WARNINGS, 0)
    for name, count in (counts or {}).items():
        warnings[name] += count
    known = {q.query_id for q in queries}
    warnings["unknown_ids"] += sum(query_id not in known for query_id in predictions)
    scored: list[tuple[Query, dict]] = []
    for query in queries:
        if query.query_id not in predictions:
            warnings["missing"] += 1
            prediction: dict | None = {}
        else:
            prediction = parse_prediction(predictions[query.query_id])
            if prediction is None:
                warnings["unparseable"] += 1
                prediction = {}
        try:
            result = score_query(query.answer, prediction)
        except ValueError as e:
            raise ValueError(f"query {query.query_id}: {e}") from None
        for name, count in result["warnings"].items():
            warnings[name] += count
        scored.append((query, result))

    by_horizon: dict[str, list[dict]] = {}
    for query, result in sorted(scored, key=lambda qr: (qr[0].horizon is None, qr[0].horizon or 0)):
        if query.horizon is not None:
            by_horizon.setdefault(str(query.horizon), []).append(result)
    by_quad: dict[str, list[dict]] = {label: [] for label in book.quad_labels}
    for query, result in scored:
        for label in {book.quad[code] for code in query.answer}:
            by_quad[label].append(result)

    return aggregate([r for _, r in scored]) | {
        "warnings": warnings,
        "bad_lines_first": counts.bad if counts else [],
        "by_horizon": {h: aggregate(rs) for h, rs in by_horizon.items()},
        "by_quad_class": {label: aggregate(rs) for label, rs in by_quad.items() if rs},
    }


# --- table -------------------------------------------------------------------------------------

_SHORT = {"first_level": "1st", "second_level": "2nd", "binary": "bin", "quad": "quad"}


def render(result: dict) -> str:
    """A plain-text report: the overall metrics, both breakdowns and the warning counts."""
    lines = [
        f"MIRAI scores over {result['n']} queries "
        "(precision, recall, F1 in %, macro-averaged; KL in nats)",
        "",
        f"{'level':<14}{'precision':>10}{'recall':>10}{'f1':>10}{'kl':>10}",
    ]
    for level in LEVELS:
        block = result[level]
        kl = f"{block['kl']:>10.4f}" if "kl" in block else ""
        lines.append(
            f"{level:<14}{block['precision']:>10.2f}{block['recall']:>10.2f}{block['f1']:>10.2f}{kl}"
        )
    for title, groups in (
        ("horizon (days)", result["by_horizon"]),
        ("answer quad class", result["by_quad_class"]),
    ):
        if groups:
            lines += ["", *_breakdown(title, groups)]
    warnings = "  ".join(f"{k}={v}" for k, v in result["warnings"].items())
    lines += ["", f"warnings: {warnings}", *bad_lines_note(result)]
    return "\n".join(lines)


def _breakdown(title: str, groups: Mapping[str, dict]) -> list[str]:
    width = max(len(title), *(len(g) for g in groups)) + 2
    f1s = [f"{_SHORT[level]} F1" for level in LEVELS]
    header = f"{title:<{width}}{'n':>6}" + "".join(f"{h:>10}" for h in f1s)
    header += f"{'bin KL':>10}{'quad KL':>10}"
    rows = [header]
    for name, block in groups.items():
        row = f"{name:<{width}}{block['n']:>6}"
        row += "".join(f"{block[level]['f1']:>10.2f}" for level in LEVELS)
        row += f"{block['binary']['kl']:>10.4f}{block['quad']['kl']:>10.4f}"
        rows.append(row)
    return rows
