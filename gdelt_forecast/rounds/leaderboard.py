"""``gdelt-forecast round leaderboard``: the forecasters ranked, on one round (``--round ID``,
a replay's too) or across every resolved live round (replays never count there).

Per forecaster, from each round's ``question_scores.parquet``:

- the mean Brier score and log score of its binary questions, the Brier score's seeded
  bootstrap 95% interval, and the questions counted;
- ``brier_skill``: 1 - its Brier score over the base-rate forecaster's on the same questions
  (0: no better than the base rate; the leaderboard's reference);
- ``adjusted_brier``: the difficulty-adjusted Brier score (ForecastBench's: the question and
  forecaster effects fitted jointly, ``always-0.5`` at 0.25), which compares forecasters that
  answered different rounds as if they had answered the same questions;
- MIRAI's first- and second-level F1 on its relation queries;
- how many of its forecasts were imputed, and ``marked`` where more than 5% were.

Ranked by ``adjusted_brier``, best first. Across rounds it is written to
``rounds/leaderboard.parquet``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq

from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import ROUND_JSON, ROUNDS, DataRoot, round_folder
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.rounds.clock import RoundError
from gdelt_forecast.rounds.references import BASE_RATE
from gdelt_forecast.rounds.scores import IMPUTED_MARK, QUESTION_SCORES_FILE
from gdelt_forecast.scoring.rounds import ALWAYS_HALF, difficulty_adjusted, interval

LEADERBOARD_FILE = "leaderboard.parquet"
LEADERBOARD = pa.schema(
    [
        ("rank", pa.int32()),
        ("forecaster", pa.string()),
        ("models", pa.list_(pa.string())),
        ("rounds", pa.int32()),
        ("binary_questions", pa.int64()),
        ("brier", pa.float64()),
        ("brier_low", pa.float64()),
        ("brier_high", pa.float64()),
        ("log_score", pa.float64()),
        ("brier_skill", pa.float64()),  # against the base-rate forecaster, same questions
        ("adjusted_brier", pa.float64()),
        ("relation_questions", pa.int64()),
        ("first_level_f1", pa.float64()),
        ("second_level_f1", pa.float64()),
        ("imputed", pa.int64()),
        ("marked", pa.bool_()),
    ]
)


@dataclass
class Summary(StageSummary):
    scope: str  # a round's id, or "live rounds"
    rounds: list[str] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> str:
        head = (
            f"round leaderboard, {self.scope}: {len(self.rows)} forecasters on "
            f"{len(self.rounds)} round(s)"
        )
        table = [
            f"{r['rank']:>3} {r['forecaster']:<20} adjusted Brier {_f(r['adjusted_brier'])}  "
            f"Brier {_f(r['brier'])} [{_f(r['brier_low'])}, {_f(r['brier_high'])}] "
            f"skill {_f(r['brier_skill'])}  log {_f(r['log_score'])}  "
            f"F1 {_f(r['first_level_f1'], 1)}/{_f(r['second_level_f1'], 1)}  "
            f"n {r['binary_questions']}+{r['relation_questions']}"
            + (f"  imputed {r['imputed']}{' (marked)' if r['marked'] else ''}" if r["imputed"]
               else "")
            for r in self.rows
        ]  # fmt: skip
        return "\n".join([head, *table])


def round_leaderboard(cfg: Config, round: str | None = None, seed: int = 0) -> Summary:
    """One round's leaderboard (``round``), or the live rounds' (written to
    ``rounds/leaderboard.parquet``)."""
    root = DataRoot(cfg.data_root)
    if round is not None:
        folder = root.path(round_folder(round))
        if not (folder / QUESTION_SCORES_FILE).exists():
            raise RoundError(f"round {round} is not resolved: `gdelt-forecast round resolve` it")
        summary = Summary(scope=f"round {round}", rounds=[round])
        summary.rows = ranked({round: pq.read_table(folder / QUESTION_SCORES_FILE)}, seed)
        return summary
    scored = {}
    for pinned in sorted(root.path(ROUNDS).glob(f"*/{ROUND_JSON}")):
        state = json.loads(pinned.read_text(encoding="utf-8"))
        if state["state"] == "resolved" and not state["replay"]:
            scored[pinned.parent.name] = pq.read_table(pinned.parent / QUESTION_SCORES_FILE)
    summary = Summary(scope="live rounds", rounds=sorted(scored))
    summary.rows = ranked(scored, seed)
    write_parquet(
        pa.Table.from_pylist(summary.rows, schema=LEADERBOARD),
        root.path(ROUNDS) / LEADERBOARD_FILE,
    )
    return summary


@dataclass
class _Entry:
    """One forecaster's scores across the rounds read: metric -> (round, question) -> value."""

    models: set[str] = field(default_factory=set)
    rounds: set[str] = field(default_factory=set)
    values: dict[str, dict[tuple[str, str], float]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    scored: int = 0  # questions
    imputed: int = 0


def ranked(scored: dict[str, pa.Table], seed: int = 0) -> list[dict]:
    """The leaderboard's rows from each round's per-question scores, best first."""
    by: dict[str, _Entry] = defaultdict(_Entry)
    for round_id, table in scored.items():
        for s in table.to_pylist():
            entry = by[s["forecaster"]]
            entry.models |= {s["model"]} - {None}
            entry.rounds.add(round_id)
            entry.values[s["metric"]][(round_id, s["question_id"])] = s["value"]
            if s["metric"] in ("brier", "first_level_f1"):  # one metric of each question
                entry.scored += 1
                entry.imputed += s["imputed"]
    base = by[BASE_RATE].values["brier"] if BASE_RATE in by else {}
    briers = [
        (forecaster, f"{r}/{q}", value)
        for forecaster, entry in by.items()
        for (r, q), value in entry.values["brier"].items()
    ]
    # always-0.5 sets the adjusted score's scale; every round has it, submitted at open
    adjusted = difficulty_adjusted(briers) if briers and ALWAYS_HALF in by else {}
    rows = []
    for forecaster, entry in by.items():
        brier = entry.values["brier"]
        low_high = interval(list(brier.values()), seed) if brier else None
        shared = [q for q in brier if q in base]
        base_mean = _mean([base[q] for q in shared])
        rows.append({
            "forecaster": forecaster, "models": sorted(entry.models),
            "rounds": len(entry.rounds), "binary_questions": len(brier),
            "brier": _mean(list(brier.values())),
            "brier_low": low_high[0] if low_high else None,
            "brier_high": low_high[1] if low_high else None,
            "log_score": _mean(list(entry.values["log_score"].values())),
            "brier_skill": 1 - _mean([brier[q] for q in shared]) / base_mean
            if base_mean else None,
            "adjusted_brier": adjusted.get(forecaster),
            "relation_questions": len(entry.values["first_level_f1"]),
            "first_level_f1": _mean(list(entry.values["first_level_f1"].values())),
            "second_level_f1": _mean(list(entry.values["second_level_f1"].values())),
            "imputed": entry.imputed,
            "marked": bool(entry.scored) and entry.imputed / entry.scored > IMPUTED_MARK,
        })  # fmt: skip
    rows.sort(key=lambda r: (r["adjusted_brier"] is None, r["adjusted_brier"], r["forecaster"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
