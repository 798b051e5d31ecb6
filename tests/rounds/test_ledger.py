"""A round's forecasts (``round submit``, ``commit``, ``reveal``): checked whole, kept by
their sha256 with a ledger row, refused when late, replaced by a later submission, and a
commit's file accepted after the deadline only with the committed hash."""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gdelt_forecast.ground.config import Config
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.rounds.clock import RoundError
from gdelt_forecast.rounds.ledger import (
    commit_forecasts,
    in_force,
    ledger_rows,
    reveal_forecasts,
    submit_forecasts,
)
from gdelt_forecast.rounds.questions import open_round
from gdelt_forecast.rounds.submissions import SubmissionError
from tests.rounds.conftest import NOW, OPEN, demo_root

DEADLINE = datetime(2025, 8, 3, 23, 59, 59, 999999, UTC)
BEFORE, AFTER = DEADLINE - timedelta(hours=2), DEADLINE + timedelta(seconds=1)


@pytest.fixture(scope="module")
def history(demo_built, tmp_path_factory) -> Config:
    return demo_root(demo_built, tmp_path_factory.mktemp("history"), later_days=False)


@pytest.fixture
def live(history, tmp_path) -> Config:
    """A live round "live" (opened on its open date: the clock is the caller's ``now``) in a
    copy of the history's data root."""
    root = tmp_path / "data"
    shutil.copytree(history.data_root / "silver", root / "silver")
    cfg = history.model_copy(update={"data_root": root})
    open_round(cfg, "live", OPEN, now=BEFORE)
    return cfg


def questions(cfg: Config, round_id: str) -> list[dict]:
    path = cfg.data_root / f"rounds/{round_id}/questions.parquet"
    return pq.read_table(path).to_pylist()


def forecasts(cfg: Config, round_id: str, path: Path, p: float = 0.25) -> Path:
    """One line per question: the empty answer for each relation query, ``p`` for the rest."""
    lines = [
        {"question_id": q["question_id"], "forecast": {} if q["kind"] == "relation" else p}
        for q in questions(cfg, round_id)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def folder(cfg: Config, round_id: str = "live") -> Path:
    return cfg.data_root / "rounds" / round_id


def rows_of(cfg: Config, forecaster: str) -> list[dict]:
    """The ledger's rows of one forecaster (the reference forecasters submitted at open)."""
    return [r for r in ledger_rows(folder(cfg)) if r["forecaster"] == forecaster]


def test_a_submission_is_kept_by_its_hash_with_a_ledger_row(live, tmp_path):
    file = forecasts(live, "live", tmp_path / "f.jsonl")
    summary = submit_forecasts(live, "live", "team-a", file, model="llama-3.1-8b", now=BEFORE)
    asked = len(questions(live, "live"))
    assert (summary.questions, summary.asked, summary.replaces) == (asked, asked, None)
    stored = folder(live) / f"submissions/team-a/{sha(file)}.jsonl"
    assert stored.read_bytes() == file.read_bytes()
    [row] = rows_of(live, "team-a")
    assert row["action"] == "submit" and row["sha256"] == sha(file)
    assert (row["forecaster"], row["model"], row["questions"]) == ("team-a", "llama-3.1-8b", asked)
    assert (
        row["bytes"] == file.stat().st_size
        and row["file"] == f"submissions/team-a/{sha(file)}.jsonl"
    )
    assert row["received"] == row["counts_from"] == BEFORE


def test_a_bad_line_refuses_the_file_and_nothing_is_kept(live, tmp_path):
    file = forecasts(live, "live", tmp_path / "f.jsonl")
    with file.open("a") as out:
        out.write(json.dumps({"question_id": questions(live, "live")[0]["question_id"],
                              "forecast": 1.5}) + "\n")  # fmt: skip
    lines = len(questions(live, "live")) + 1
    with pytest.raises(SubmissionError, match=f"line {lines} answers .* again"):
        submit_forecasts(live, "live", "team-a", file, now=BEFORE)
    assert rows_of(live, "team-a") == [] and not (folder(live) / "submissions/team-a").exists()


def test_a_late_submission_is_refused_naming_the_deadline_and_nothing_is_kept(live, tmp_path):
    file = forecasts(live, "live", tmp_path / "f.jsonl")
    with pytest.raises(RoundError) as refused:
        submit_forecasts(live, "live", "team-a", file, now=AFTER)
    assert "closed at 2025-08-03T23:59:59Z" in str(refused.value)
    assert "received at 2025-08-04T00:00:00Z, after its deadline" in str(refused.value)
    assert rows_of(live, "team-a") == []
    assert not list((folder(live) / "submissions/team-a").iterdir())


def test_a_later_submission_replaces_the_earlier_and_the_ledger_keeps_both(live, tmp_path):
    first = forecasts(live, "live", tmp_path / "first.jsonl", p=0.25)
    second = forecasts(live, "live", tmp_path / "second.jsonl", p=0.75)
    submit_forecasts(live, "live", "team-a", first, now=BEFORE)
    again = submit_forecasts(live, "live", "team-a", second, now=BEFORE + timedelta(minutes=5))
    assert again.replaces == sha(first)
    rows = ledger_rows(folder(live))
    assert [r["sha256"] for r in rows_of(live, "team-a")] == [sha(first), sha(second)]
    assert in_force(rows, DEADLINE)["team-a"]["sha256"] == sha(second)
    for path in (first, second):  # both files stay, each under its hash
        assert (folder(live) / f"submissions/team-a/{sha(path)}.jsonl").exists()


def test_a_commit_is_revealed_after_the_deadline_only_with_its_hash(live, tmp_path):
    file = forecasts(live, "live", tmp_path / "f.jsonl")
    other = forecasts(live, "live", tmp_path / "other.jsonl", p=0.5)
    committed = commit_forecasts(live, "live", "team-b", sha(file), model="m1", now=BEFORE)
    assert committed.questions is None
    assert not (folder(live) / "submissions/team-b").exists()  # only the hash is kept
    with pytest.raises(RoundError, match="a reveal before then would show the forecasts"):
        reveal_forecasts(live, "live", "team-b", file, now=BEFORE + timedelta(minutes=1))
    with pytest.raises(RoundError, match="its sha256 is not the one team-b committed"):
        reveal_forecasts(live, "live", "team-b", other, now=AFTER)
    revealed = reveal_forecasts(live, "live", "team-b", file, now=AFTER + timedelta(days=9))
    assert revealed.questions == len(questions(live, "live"))
    rows = rows_of(live, "team-b")
    assert [(r["action"], r["sha256"]) for r in rows] == [
        ("commit", sha(file)),
        ("reveal", sha(file)),
    ]
    assert rows[1]["counts_from"] == BEFORE and rows[1]["model"] == "m1"
    assert in_force(ledger_rows(folder(live)), DEADLINE)["team-b"]["revealed"]["sha256"] == sha(
        file
    )
    with pytest.raises(RoundError, match="after its deadline"):
        commit_forecasts(live, "live", "team-c", sha(file), now=AFTER)
    with pytest.raises(RoundError, match="team-c has no commit in force"):
        reveal_forecasts(live, "live", "team-c", file, now=AFTER)


def test_a_replay_receives_every_forecast_at_its_open_date(history, tmp_path):
    root = tmp_path / "data"
    shutil.copytree(history.data_root / "silver", root / "silver")
    cfg = history.model_copy(update={"data_root": root})
    open_round(cfg, "replay", OPEN, replay=True, now=NOW)
    file = forecasts(cfg, "replay", tmp_path / "f.jsonl")
    summary = submit_forecasts(cfg, "replay", "team-a", file, now=datetime.now(UTC))
    assert summary.received == "2025-08-03T00:00:00.000000Z"


@pytest.mark.parametrize(
    "forecaster, model, why",
    [
        ("../x", None, "--forecaster is not"),
        ("a" * 65, None, "--forecaster is not"),
        ("team", "<script>", "--model is not"),
        ("team", "m\n", "--model is not"),
    ],
)
def test_names_that_would_be_paths_or_markup_are_refused(live, tmp_path, forecaster, model, why):
    file = forecasts(live, "live", tmp_path / "f.jsonl")
    before = sorted(p.name for p in (folder(live) / "submissions").iterdir())
    with pytest.raises(RoundError, match=why):
        submit_forecasts(live, "live", forecaster, file, model=model, now=BEFORE)
    assert sorted(p.name for p in (folder(live) / "submissions").iterdir()) == before
    assert len(ledger_rows(folder(live))) == 4  # the reference forecasters' alone


def test_a_round_in_a_bucket_times_a_submission_by_the_buckets_clock(
    history, s3_endpoint, s3fs_client, tmp_path
):
    """A live round opened today in a bucket: a submission is received when the bucket says
    its file arrived (``LastModified``), whatever this machine's clock says; one that arrives
    after the deadline is refused, and its file leaves the bucket."""
    from tests.conftest import new_bucket

    root = f"{new_bucket()}/demo"
    local = tmp_path / "local"
    shutil.copytree(history.data_root / "silver", local / "silver")
    files = [p for p in (local / "silver").rglob("*.parquet")]
    s3fs_client.put([str(p) for p in files],
                    [f"{root}/{p.relative_to(local).as_posix()}" for p in files])  # fmt: skip
    today = datetime.now(UTC)
    settings = history.rounds.model_copy(update={"history_days": 1000, "recent_days": 1000})
    cfg = history.model_copy(update={
        "data_root": root, "rounds": settings,
        "storage": history.storage.model_copy(update={"local_dir": tmp_path / "machine"}),
    })  # fmt: skip
    deadline = today + timedelta(seconds=12)  # the opening submits 4 reference forecasters
    run("round_open", cfg, "bucket", open_date=today.date(), deadline=deadline)
    machine = tmp_path / "machine/s3" / root.removeprefix("s3://")
    file = forecasts(cfg.model_copy(update={"data_root": machine}), "bucket", tmp_path / "f.jsonl")
    summary = run("round_submit", cfg, "bucket", forecaster="team-a", file=file, model=None)
    key = f"{root.removeprefix('s3://')}/rounds/bucket/submissions/team-a/{sha(file)}.jsonl"
    arrived = s3fs_client.info(key)["LastModified"]
    assert summary.received == f"{arrived.astimezone(UTC):%Y-%m-%dT%H:%M:%S.%fZ}"
    ledger = f"{root.removeprefix('s3://')}/rounds/bucket/submissions/ledger.parquet"
    assert s3fs_client.exists(ledger)

    time.sleep(max(0.0, (deadline - datetime.now(UTC)).total_seconds()) + 1.5)
    late = forecasts(cfg.model_copy(update={"data_root": machine}), "bucket",
                     tmp_path / "late.jsonl", p=0.9)  # fmt: skip
    with pytest.raises(RoundError, match="after its deadline"):
        run("round_submit", cfg, "bucket", forecaster="team-a", file=late, model=None)
    late_key = key.replace(sha(file), sha(late))
    s3fs_client.invalidate_cache()
    assert not s3fs_client.exists(late_key)
    kept = pq.read_table(s3fs_client.open(ledger, "rb"))["forecaster"].to_pylist()
    assert kept.count("team-a") == 1 and len(kept) == 5  # and the 4 reference forecasters
