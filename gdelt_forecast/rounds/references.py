"""The reference forecasters of every round, submitted when it opens, from its history alone
(what ``round open`` read), through ``round submit``'s own checks and ledger:

- ``history``: for a relation query, the pair's second-level relations in the
  ``baseline.window_days`` days before the open date (the release's history baseline); for a
  binary question, 1 or 0, its rule on the last ``rounds.window_days`` days before the open
  date.
- ``frequency``: the ``baseline.frequency_top`` most frequent relations of all the history's
  events, whoever took part (MIRAI's frequency baseline); a binary question's ``base_rate``.
- ``base-rate``: the empty answer where the pair acted on fewer than half the days held, else
  ``history``'s; a binary question's ``base_rate``.
- ``always-0.5``: the empty answer; 0.5.

``always-0.5`` sets the scale of the difficulty-adjusted Brier score; ``base-rate`` is the
forecaster the leaderboard's skill is measured against.
"""

from __future__ import annotations

import json
from datetime import datetime

from gdelt_forecast.contract.names import BINARY
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.files import temporary
from gdelt_forecast.rounds.ledger import submit_forecasts
from gdelt_forecast.scoring.answers import answer_dict
from gdelt_forecast.scoring.rounds import ALWAYS_HALF

BASE_RATE = "base-rate"
REFERENCES = ("history", "frequency", BASE_RATE, ALWAYS_HALF)


def reference_forecasts(
    rows: list[dict], carried: dict[str, int], pair_relations: dict, top: list[str]
) -> dict[str, dict[str, object]]:
    """Each reference forecaster's forecasts (question id -> forecast) for the questions
    ``rows``; ``carried``: each binary question's answer on the history's last window;
    ``pair_relations``: (subject, object) -> its recent relations; ``top``: the frequency
    forecaster's relations."""
    out: dict[str, dict[str, object]] = {name: {} for name in REFERENCES}
    frequent = answer_dict(top)
    for q in rows:
        qid = q["question_id"]
        if q["kind"] == BINARY:
            out["history"][qid] = float(carried[qid])
            out["frequency"][qid] = out[BASE_RATE][qid] = q["base_rate"]
            out[ALWAYS_HALF][qid] = 0.5
            continue
        recent = answer_dict(pair_relations.get((q["subject"], q["object"])) or [])
        out["history"][qid] = recent
        out["frequency"][qid] = frequent
        out[BASE_RATE][qid] = recent if q["base_rate"] >= 0.5 else {}
        out[ALWAYS_HALF][qid] = {}
    return out


def submit_references(
    cfg: Config, round_id: str, forecasts: dict[str, dict[str, object]], now: datetime
) -> None:
    """Each reference forecaster's forecasts, submitted as any forecaster's are."""
    scratch = DataRoot(cfg.data_root).scratch
    scratch.mkdir(parents=True, exist_ok=True)
    for name, answers in forecasts.items():
        file = temporary(scratch / f"{round_id}-{name}.jsonl")
        try:
            file.write_text(
                "".join(
                    json.dumps({"question_id": q, "forecast": f}) + "\n"
                    for q, f in sorted(answers.items())
                ),
                encoding="utf-8",
            )
            submit_forecasts(cfg, round_id, name, file, now=now)
        finally:
            file.unlink(missing_ok=True)
