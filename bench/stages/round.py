"""Benchmark: a live round on a data root at GDELT's volume, as the month bench leaves one.

``python -m bench.stages.round WORKDIR [--open-date YYYY-MM-DD] [--horizons 1]`` opens a replay
round ``bench`` on ``WORKDIR/data`` (the month bench's data root, its mirror at
``WORKDIR/mirror``) with no grace day, resolves it from the mirror, and prints the seconds of
each step and, per rule, its questions, mean base rate, share answered yes (or non-empty),
fragile and void: what says whether a round is informative. Run the month bench first, e.g.
``python -m bench.month.run --days 7 --pages 30 --hosts 12 --storage local --no-faults
--no-reference --workdir WORKDIR``; a round opened again on the same id is left as it is, so
remove ``WORKDIR/data/rounds/bench`` between runs.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import date
from pathlib import Path

import pyarrow.parquet as pq

from bench.harness import REPO
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.rounds.questions import open_round
from gdelt_forecast.rounds.resolve import resolve_round


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--open-date", type=date.fromisoformat, default=date(2025, 8, 6))
    parser.add_argument("--horizons", default="1")
    args = parser.parse_args()
    cfg = load_config(
        REPO / "configs/default.yaml",
        [
            f"gdelt.base_url={(args.workdir / 'mirror').as_uri()}",
            f"rounds.horizons=[{args.horizons}]",
            "rounds.grace_days=0",
            f"storage.local_dir={args.workdir / 'scratch'}",
        ],
        args.workdir / "data",
    )
    started = time.perf_counter()
    print(open_round(cfg, "bench", args.open_date, replay=True).line())
    opened = time.perf_counter() - started
    started = time.perf_counter()
    print(resolve_round(cfg, "bench").line())
    resolved = time.perf_counter() - started
    folder = cfg.data_root / "rounds/bench"
    answers = {
        r["question_id"]: r for r in pq.read_table(folder / "resolution.parquet").to_pylist()
    }
    rules: dict[str, dict[str, float]] = {}
    for q in pq.read_table(folder / "questions.parquet").to_pylist():
        r, d = (
            answers[q["question_id"]],
            rules.setdefault(
                q["rule"], dict.fromkeys(("questions", "base_rate", "yes", "fragile", "void"), 0)
            ),
        )
        d["questions"] += 1
        d["base_rate"] += q["base_rate"]
        d["fragile"] += bool(r["fragile"])
        d["void"] += r["void"] is not None
        if r["void"] is None:
            d["yes"] += (
                r["outcome"] == 1 if q["kind"] == "binary" else json.loads(r["answer"]) != {}
            )
    for rule, d in rules.items():
        n = d["questions"]
        print(
            f"{rule}: {n} questions, mean base rate {d['base_rate'] / n:.3f}, answered yes (or "
            f"non-empty) {d['yes'] / n:.3f}, fragile {d['fragile'] / n:.3f}, void {d['void']}"
        )
    print(f"round open {opened:.1f} s, round resolve {resolved:.1f} s")


if __name__ == "__main__":
    main()
