"""``gdelt-forecast evaluate --queries FILE --predictions FILE``: score forecasts against
MIRAI queries with MIRAI's metrics (:mod:`.mirai`), over all queries and broken down by
horizon and by the answer's quad classes, and the report that prints them.

Any predictions file scores against any queries file: the test set's, a release's, or the
agents' and baselines' runs (which call :func:`score` on what they hold in memory). An
unparseable prediction and a query without one score as an empty prediction, as MIRAI's
``load_predictions`` does on error; a predictions file without a single JSON object naming a
query_id is an error instead. MIRAI scores several rounds (average, max, repeated); here one
prediction per query.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from gdelt_forecast.contract.names import LEVELS
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.scoring.answers import parse_prediction
from gdelt_forecast.scoring.mirai import aggregate, codebook, score_query
from gdelt_forecast.scoring.predictions import LineCounts, bad_lines_note, load_predictions
from gdelt_forecast.scoring.queries import Query, load_queries

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
