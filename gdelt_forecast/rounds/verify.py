"""``gdelt-forecast round verify --round ID``: a round checked from the data alone.

1. **Opened from its history only.** The questions are built again from the silver days
   before the open date with the round's own settings (round.json's ``rounds``), and must be
   the bytes whose sha256 round.json pinned; the days read must all be before the open date,
   with none of their rows added on or after it, and their files' digest the one pinned.
2. **Asked about days to come.** Every target day starts after the deadline, and every
   window ends on its target day.
3. **Forecasts as received.** Every file the ledger names has the sha256 the ledger and its
   name say; every submission and commit it counts was received by the deadline, and every
   reveal has its commit's sha256.
4. **Resolved from the files it names** (a resolved round). The master file list and the
   ledger give the same vintage, the answers are built again from them under the pinned rule
   and must be the bytes pinned, and the scores are computed again and must be the bytes
   written.

Exit 0 when the round is sound, else 1 naming each problem.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from gdelt_forecast.ground.config import Config, RoundsConfig
from gdelt_forecast.ground.data_root import ROUND_JSON, ROUND_QUESTIONS, DataRoot, round_folder
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.files import sha256
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.rounds.clock import Clock, RoundError
from gdelt_forecast.rounds.ledger import COMMIT, REVEAL, SUBMIT, ledger_rows
from gdelt_forecast.rounds.questions import QUESTIONS, build, history_digest
from gdelt_forecast.rounds.resolve import (
    RESOLUTION,
    RESOLUTION_FILE,
    answers,
    published,
    vintage_of,
)
from gdelt_forecast.rounds.scores import QUESTION_SCORES_FILE, SCORES_FILE, scored


@dataclass
class Summary(StageSummary):
    round_id: str
    state: str = ""
    checks: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> str:
        verdict = "sound" if not self.problems else f"{len(self.problems)} problem(s)"
        lines = [
            f"round verify {self.round_id} ({self.state}): {verdict}, "
            f"{len(self.checks)} checks ({self.seconds:.1f} s)"
        ]
        return "\n".join([*lines, *(f"  {p}" for p in self.problems)])


def verify_round(cfg: Config, round_id: str) -> Summary:
    """Check round ``round_id`` (the module's doc); the summary lists the problems, and the
    command exits 1 where there is one."""
    folder = DataRoot(cfg.data_root).path(round_folder(round_id))
    if not (folder / ROUND_JSON).exists():
        raise RoundError(f"no round {round_id}: `gdelt-forecast round open` it first")
    pinned = json.loads((folder / ROUND_JSON).read_text(encoding="utf-8"))
    summary = Summary(round_id=round_id, state=pinned["state"])
    check = _Checks(summary)
    clock = Clock.pinned(pinned)
    with tempfile.TemporaryDirectory(prefix="gdelt-forecast-round-verify-") as tmp:
        again = Path(tmp)
        _opened(cfg, pinned, clock, folder, again, check)
        _forecasts(folder, clock, check)
        if pinned["state"] == "resolved":
            _resolved(cfg, pinned, folder, again, check)
    return summary


class _Checks:
    def __init__(self, summary: Summary):
        self.summary = summary

    def __call__(self, name: str, ok: bool, problem: str) -> None:
        self.summary.checks.append(name)
        if not ok:
            self.summary.problems.append(f"{name}: {problem}")


def _opened(cfg: Config, pinned: dict, clock: Clock, folder: Path, again: Path, check) -> None:
    settings = cfg.model_copy(update={"rounds": RoundsConfig(**pinned["rounds"])})
    built = build(settings, clock)
    write_parquet(pa.Table.from_pylist(built.rows, schema=QUESTIONS), again / ROUND_QUESTIONS)
    pinned_sha = pinned["questions"]["sha256"]
    check(
        "questions rebuilt from the history",
        sha256(again / ROUND_QUESTIONS) == pinned_sha,
        f"the history before {clock.open_date} gives other questions than the pinned "
        f"{pinned_sha[:12]}...",
    )
    check(
        "questions file as pinned",
        sha256(folder / ROUND_QUESTIONS) == pinned_sha,
        "questions.parquet is not the file round.json pinned",
    )
    cutoff = pinned["data_cutoff"]
    check(
        "every day read before the open date",
        max(built.files) < clock.open_date and cutoff["last_day"] < clock.open_date.isoformat(),
        f"a day on or after {clock.open_date} was read",
    )
    check(
        "no row added on or after the open date",
        cutoff["late_rows"] == 0 and built.summary.late_rows == 0,
        "rows added on or after the open date were read",
    )
    check(
        "the history's files as pinned",
        history_digest(cfg, built.files) == cutoff["files_sha256"],
        "the silver files of the days read changed since the opening",
    )
    start = datetime.combine(clock.open_date, time(), UTC)
    rows = pq.read_table(folder / ROUND_QUESTIONS).to_pylist()
    late = [
        q["question_id"]
        for q in rows
        if datetime.combine(q["target_date"], time(), UTC) <= clock.deadline
        or q["window_start"] > q["target_date"]
    ]
    check(
        "every target day after the deadline",
        not late and clock.deadline >= start,
        f"{len(late)} questions ask about a day the deadline reaches: {late[:5]}",
    )


def _forecasts(folder: Path, clock: Clock, check) -> None:
    rows = ledger_rows(folder)
    bad = [
        r["file"]
        for r in rows
        if r["file"]
        and (
            not (folder / r["file"]).exists()
            or sha256(folder / r["file"]) != r["sha256"]
            or Path(r["file"]).stem != r["sha256"]
        )
    ]
    check(
        "every kept file has its recorded sha256",
        not bad,
        f"{len(bad)} files differ from their ledger rows: {bad[:5]}",
    )
    late = [
        f"{r['forecaster']} {r['action']}"
        for r in rows
        if r["action"] in (SUBMIT, COMMIT) and r["received"] > clock.deadline
    ]
    check(
        "every forecast received by the deadline",
        not late,
        f"accepted after {clock.deadline:%Y-%m-%dT%H:%M:%SZ}: {late[:5]}",
    )
    commits = {(r["forecaster"], r["sha256"]) for r in rows if r["action"] == COMMIT}
    orphans = [
        r["forecaster"]
        for r in rows
        if r["action"] == REVEAL and (r["forecaster"], r["sha256"]) not in commits
    ]
    check(
        "every reveal has its commit's sha256",
        not orphans,
        f"reveals with no such commit: {orphans[:5]}",
    )


def _resolved(cfg: Config, pinned: dict, folder: Path, again: Path, check) -> None:
    resolution = pinned["resolution"]
    questions = pq.read_table(folder / ROUND_QUESTIONS).to_pylist()
    files, reads = published(cfg, pinned, questions)
    _, digest = vintage_of(files, reads)
    check(
        "the vintage as pinned",
        digest == resolution["vintage_sha256"],
        "GDELT's files of the round's days are not the ones it was resolved from",
    )
    listed = {f["day"] for f in files}
    void = {datetime.fromisoformat(d).date() for d in resolution["void_days"]}
    rows = answers(cfg, pinned, questions, listed, void)
    write_parquet(pa.Table.from_pylist(rows, schema=RESOLUTION), again / RESOLUTION_FILE)
    check(
        "answers rebuilt from the vintage",
        sha256(again / RESOLUTION_FILE) == resolution["resolution_sha256"],
        "the pinned files under the pinned rule give other answers",
    )
    check(
        "resolution file as pinned",
        sha256(folder / RESOLUTION_FILE) == resolution["resolution_sha256"],
        "resolution.parquet is not the file round.json pinned",
    )
    try:
        tables, each, _ = scored(folder, pq.read_table(folder / RESOLUTION_FILE).to_pylist())
    except StageError as exc:  # a kept file no longer answers the questions it answered
        check("scores recomputed", False, f"the forecasts in force cannot be scored: {exc}")
        return
    for table, name in ((tables, SCORES_FILE), (each, QUESTION_SCORES_FILE)):
        write_parquet(table, again / name)
        check(
            f"{name} recomputed",
            (folder / name).exists() and sha256(again / name) == sha256(folder / name),
            f"{name} is not what the forecasts in force score",
        )
