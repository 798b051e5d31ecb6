"""``gdelt-forecast round submit``, ``round commit`` and ``round reveal``: a round's
forecasts, and the ledger of every one received.

``rounds/<round>/submissions/``:

- ``<forecaster>/<sha256>.jsonl``: each accepted file, named by its sha256 and never written
  again (the same name is the same bytes), so a submission's bytes cannot change once its
  hash is recorded;
- ``ledger.parquet``: one row per accepted action (``LEDGER``): who, which model, what
  (``submit``, ``commit`` or ``reveal``), the sha256 and bytes, when it was received and when
  its forecast counts as made (a reveal's: its commit's), and how many questions it answers.
  Rows are only ever added.

A forecaster's forecasts are its last ``submit`` or ``commit`` received before the deadline
(:func:`in_force`): a new submission replaces the earlier one, whose row and file stay. A
``commit`` records only a sha256; its ``reveal``, after the deadline, is accepted only with the
file of that hash. Nothing is kept of a submission that is refused (late, or a line of it that
:func:`gdelt_forecast.rounds.submissions.check_submission` refuses).

When a submission is received: by this machine's clock, or, where the round lives in a
bucket, by the bucket's own ``LastModified`` of the file as it arrived there (a machine's
clock can be set). In a replay every action is received at the open date's start.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import ROUND_JSON, ROUND_QUESTIONS, DataRoot, round_folder
from gdelt_forecast.ground.files import sha256
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.rounds.clock import Clock, RoundError
from gdelt_forecast.rounds.submissions import check_submission
from gdelt_forecast.storage.working_copy import arrived, shared_file

SUBMISSIONS = "submissions"
LEDGER_FILE = "ledger.parquet"
SUBMIT, COMMIT, REVEAL = "submit", "commit", "reveal"
LEDGER = pa.schema(
    [
        ("forecaster", pa.string()),
        ("model", pa.string()),
        ("action", pa.string()),
        ("sha256", pa.string()),
        ("bytes", pa.int64()),  # none for a commit
        ("questions", pa.int64()),  # answered; none for a commit
        ("received", pa.timestamp("us", tz="UTC")),
        ("counts_from", pa.timestamp("us", tz="UTC")),  # a reveal's: its commit's received
        ("file", pa.string()),  # relative to the round's folder; none for a commit
    ]
)
# Names that become folders and leaderboard rows: no path, no markup, no control character.
FORECASTER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}")
SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass
class Summary(StageSummary):
    round_id: str
    forecaster: str
    action: str
    sha256: str
    received: str
    questions: int | None = None
    asked: int = 0
    replaces: str | None = None  # the sha256 it replaces
    seconds: float = 0.0

    def line(self) -> str:
        answered = (
            f", {self.questions:,} of {self.asked:,} questions answered"
            if self.questions is not None
            else ""
        )
        replaced = f", replacing {self.replaces[:12]}..." if self.replaces else ""
        return (
            f"round {self.action} {self.round_id}: {self.forecaster}'s {self.sha256[:12]}... "
            f"received {self.received}{answered}{replaced} ({self.seconds:.1f} s)"
        )


def submit_forecasts(
    cfg: Config, round_id: str, forecaster: str, file: Path, model: str | None = None,
    now: datetime | None = None,
) -> Summary:  # fmt: skip
    """Accept ``file`` as ``forecaster``'s forecasts for the round, before its deadline."""
    book = _Book(cfg, round_id, forecaster, model)
    forecasts = book.checked(file)
    stored, digest = book.store(file)
    received = book.received_at(stored, now)
    try:
        book.clock.check_on_time(received)
    except RoundError:
        book.discard(stored)
        raise
    previous = book.in_force()
    row = book.row(SUBMIT, digest, received, received, stored, len(forecasts))
    book.append(row)
    return book.summary(row, replaces=previous["sha256"] if previous else None)


def commit_forecasts(
    cfg: Config, round_id: str, forecaster: str, sha256: str, model: str | None = None,
    now: datetime | None = None,
) -> Summary:  # fmt: skip
    """Record only the sha256 of ``forecaster``'s forecasts, before the deadline; the file
    follows with :func:`reveal_forecasts` after it."""
    if not SHA256.fullmatch(sha256):
        raise RoundError("--sha256 is not 64 lowercase hexadecimal digits")
    book = _Book(cfg, round_id, forecaster, model)
    received = book.clock.received(now or datetime.now(UTC))
    book.clock.check_on_time(received)
    previous = book.in_force()
    row = book.row(COMMIT, sha256, received, received, None, None)
    book.append(row)
    return book.summary(row, replaces=previous["sha256"] if previous else None)


def reveal_forecasts(
    cfg: Config, round_id: str, forecaster: str, file: Path, now: datetime | None = None
) -> Summary:
    """Accept ``file`` after the deadline, when its sha256 is that of ``forecaster``'s commit
    in force; its forecasts count from the commit."""
    book = _Book(cfg, round_id, forecaster, None)
    commit = book.in_force()
    if commit is None or commit["action"] != COMMIT:
        raise RoundError(
            f"{forecaster} has no commit in force in round {round_id}: "
            + ("its forecasts are a submission" if commit else "nothing to reveal")
        )
    when = now or datetime.now(UTC)
    if not book.clock.replay and when <= book.clock.deadline:
        raise RoundError(
            f"round {round_id} closes at {book.clock.deadline:%Y-%m-%dT%H:%M:%SZ}: a reveal "
            "before then would show the forecasts while others still forecast; reveal after it"
        )
    digest = sha256(file) if file.is_file() else None
    if digest != commit["sha256"]:
        raise RoundError(
            f"{file}: its sha256 is not the one {forecaster} committed "
            f"({commit['sha256'][:12]}...): nothing kept"
        )
    forecasts = book.checked(file)
    stored, _ = book.store(file)
    received = book.received_at(stored, when) if not book.clock.replay else commit["received"]
    book.model = commit["model"]
    row = book.row(REVEAL, digest, received, commit["received"], stored, len(forecasts))
    book.append(row)
    return book.summary(row)


def ledger_rows(folder: Path) -> list[dict]:
    """The ledger of the round at ``folder``, in the order received."""
    path = folder / SUBMISSIONS / LEDGER_FILE
    return pq.read_table(path, schema=LEDGER).to_pylist() if path.exists() else []


def in_force(rows: list[dict], deadline: datetime) -> dict[str, dict]:
    """Each forecaster's submission or commit in force: its last received by the deadline,
    with ``revealed`` (the reveal's row) for a commit that was."""
    found: dict[str, dict] = {}
    for row in rows:
        if row["action"] in (SUBMIT, COMMIT) and row["received"] <= deadline:
            found[row["forecaster"]] = dict(row)
    for row in rows:
        held = found.get(row["forecaster"])
        if row["action"] == REVEAL and held and held["sha256"] == row["sha256"]:
            held["revealed"] = row
    return found


class _Book:
    """One forecaster's action on a round: its clock and questions, its folder and ledger."""

    def __init__(self, cfg: Config, round_id: str, forecaster: str, model: str | None):
        if not FORECASTER.fullmatch(forecaster):
            raise RoundError(
                "--forecaster is not 1-64 letters, digits, '.', '_' or '-' (the first a "
                "letter or digit)"
            )
        if model is not None and not MODEL.fullmatch(model):
            raise RoundError(
                "--model is not 1-128 letters, digits or '._:/@+-' (the first a letter or digit)"
            )
        self.folder = DataRoot(cfg.data_root).path(round_folder(round_id))
        pinned = self.folder / ROUND_JSON
        if not pinned.exists():
            raise RoundError(f"no round {round_id}: `gdelt-forecast round open` it first")
        self.round = json.loads(pinned.read_text(encoding="utf-8"))
        if self.round["state"] != "open":
            raise RoundError(f"round {round_id} is {self.round['state']}: it takes no forecast")
        self.clock = Clock.pinned(self.round)
        self.round_id, self.forecaster, self.model = round_id, forecaster, model
        self.ledger = self.folder / SUBMISSIONS / LEDGER_FILE
        self.kinds: dict[str, str] = {}  # the round's questions, once a file is checked

    def checked(self, file: Path) -> dict[str, object]:
        table = pq.read_table(self.folder / ROUND_QUESTIONS, columns=["question_id", "kind"])
        self.kinds = dict(zip(*(table[c].to_pylist() for c in ("question_id", "kind")),
                              strict=True))  # fmt: skip
        return check_submission(file, self.kinds)

    def store(self, file: Path) -> tuple[Path, str]:
        """``file`` copied to ``<forecaster>/<sha256>.jsonl`` (left as it is where that name
        is already there: the same bytes), and its sha256."""
        digest = sha256(file)
        stored = self.folder / SUBMISSIONS / self.forecaster / f"{digest}.jsonl"
        if not stored.exists():
            stored.parent.mkdir(parents=True, exist_ok=True)
            tmp = stored.with_name(f".{stored.name}.tmp")
            shutil.copyfile(file, tmp)
            if sha256(tmp) != digest:  # changed while it was read
                tmp.unlink()
                raise RoundError(f"{file} changed while it was read: nothing kept")
            tmp.replace(stored)
        return stored, digest

    def discard(self, stored: Path) -> None:
        """A refused file's copy, unless an accepted row names the same bytes."""
        if not any(r["file"] == self._rel(stored) for r in ledger_rows(self.folder)):
            stored.unlink(missing_ok=True)

    def received_at(self, stored: Path, now: datetime | None) -> datetime:
        """The replay's simulated time; the bucket's ``LastModified`` of the stored file
        where the round is in a bucket; else ``now`` (this machine's clock)."""
        if self.clock.replay:
            return self.clock.received(datetime.now(UTC))
        return arrived(stored) or (now or datetime.now(UTC))

    def in_force(self) -> dict | None:
        return in_force(ledger_rows(self.folder), self.clock.deadline).get(self.forecaster)

    def row(self, action, digest, received, counts_from, stored, questions) -> dict:
        return {
            "forecaster": self.forecaster,
            "model": self.model,
            "action": action,
            "sha256": digest,
            "bytes": stored.stat().st_size if stored else None,
            "questions": questions,
            "received": received,
            "counts_from": counts_from,
            "file": self._rel(stored) if stored else None,
        }

    def append(self, row: dict) -> None:
        self.ledger.parent.mkdir(parents=True, exist_ok=True)
        with shared_file(self.ledger):
            rows = [*ledger_rows(self.folder), row]
            write_parquet(pa.Table.from_pylist(rows, schema=LEDGER), self.ledger)

    def summary(self, row: dict, replaces: str | None = None) -> Summary:
        return Summary(
            round_id=self.round_id,
            forecaster=self.forecaster,
            action=row["action"],
            sha256=row["sha256"],
            received=f"{row['received']:%Y-%m-%dT%H:%M:%S.%fZ}",
            questions=row["questions"],
            asked=len(self.kinds),
            replaces=replaces,
        )

    def _rel(self, stored: Path) -> str:
        return stored.relative_to(self.folder).as_posix()
