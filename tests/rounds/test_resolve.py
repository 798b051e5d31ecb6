"""Resolving a round (``round resolve``) from the GDELT files of its days, and its scores:
refused while files are missing, voids with ``--allow-missing``, frozen against a changed
md5, fragile marks where a variant of the rule flips an answer, and each forecaster scored as
computed by hand."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gdelt_forecast.gdelt import ledger
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.rounds.clock import RoundError
from gdelt_forecast.rounds.ledger import submit_forecasts
from gdelt_forecast.rounds.questions import open_round
from gdelt_forecast.rounds.resolve import resolve_round
from tests.rounds.conftest import NOW, OPEN, demo_root

SLOT = "20250807220000"


@pytest.fixture
def opened(demo_built, tmp_path) -> Config:
    """The demo's replay round on 2025-08-03 (target days 08-07 and 08-12, no grace days:
    the demo's mirror ends on 08-12), with the demo's later days ingested."""
    cfg = demo_root(demo_built, tmp_path, later_days=True, grace_days=0)
    open_round(cfg, "demo", OPEN, replay=True, now=NOW)
    return cfg


def resolution(cfg: Config) -> dict[str, dict]:
    rows = pq.read_table(cfg.data_root / "rounds/demo/resolution.parquet").to_pylist()
    return {r["question_id"]: r for r in rows}


def silver_relations(cfg: Config, day: str, pair: tuple[str, str]) -> dict[str, int]:
    """The pair's relations on ``day`` in silver (normalized under the demo's rule, as the
    round pinned it), each with its quad's daily mentions."""
    table = pq.read_table(cfg.data_root / f"silver/events/date={day}/part-0.parquet",
                          partitioning=None)  # fmt: skip
    return {
        e["relation"]: e["daily_mentions"]
        for e in table.to_pylist()
        if (e["head"], e["tail"]) == pair
    }


def test_the_answers_are_silvers_under_the_pinned_rule_and_a_variant_marks_fragile(opened):
    summary = resolve_round(opened, "demo")
    assert (summary.questions, summary.voided, summary.files) == (30, 0, 10)
    found = resolution(opened)
    for question_id, row in found.items():
        if row["rule"] != "relation":
            continue
        day = f"{question_id[2:6]}-{question_id[6:8]}-{question_id[8:10]}"
        pair = tuple(question_id.split("_")[2:4])
        relations = silver_relations(opened, day, pair)
        expected: dict[str, list[str]] = {}
        for code in sorted(relations):
            expected.setdefault(code[:2], []).append(code)
        assert json.loads(row["answer"]) == expected, question_id
        # Doubled, the threshold (1 daily mention in the demo's rule) drops the quads with 1.
        doubled = sorted(c for c, n in relations.items() if n >= 2)
        variants = json.loads(row["variants"])
        assert sorted(c for cs in variants["mentions_doubled"].values() for c in cs) == doubled
        assert row["fragile"] == (doubled != sorted(relations)), question_id
    assert summary.fragile == sum(r["fragile"] for r in found.values()) > 0
    pinned = json.loads((opened.data_root / "rounds/demo/round.json").read_text())
    assert pinned["state"] == "resolved"
    assert pinned["resolution"]["vintage_sha256"] == summary.vintage
    vintage = json.loads((opened.data_root / "rounds/demo/vintage.json").read_text())["files"]
    assert [f["file"] for f in vintage] == sorted(
        f"{day}220000.{t}.CSV.zip" for day in ("20250722", "20250728", "20250802", "20250807",
                                               "20250812") for t in ("export", "mentions")
    )  # fmt: skip


def test_missing_slots_refuse_and_allow_missing_voids_the_questions_that_read_them(opened):
    book = ledger.read(opened.data_root / "bronze/slots.parquet")
    del book[(SLOT, "english", "export")]
    shutil.rmtree(opened.data_root / "bronze/events/date=2025-08-07")
    write_parquet(pa.Table.from_pylist(list(book.values()), schema=ledger.SCHEMA),
                  opened.data_root / "bronze/slots.parquet")  # fmt: skip
    with pytest.raises(RoundError, match=f"1 GDELT file.*{SLOT}.export.CSV.zip"):
        resolve_round(opened, "demo")
    assert not (opened.data_root / "rounds/demo/resolution.parquet").exists()

    summary = resolve_round(opened, "demo", allow_missing=True)
    found = resolution(opened)
    reads_0807 = {q for q, r in found.items() if r["rule"] != "relation" or "20250807" in q}
    assert {q for q, r in found.items() if r["void"]} == reads_0807  # every window holds 08-07
    assert summary.voided == len(reads_0807) and summary.resolved == 30 - len(reads_0807)
    assert all(r["answer"] for q, r in found.items() if q not in reads_0807)


def test_a_resolved_round_is_frozen_against_a_changed_md5(opened):
    first = resolve_round(opened, "demo")
    before = (opened.data_root / "rounds/demo/resolution.parquet").read_bytes()
    again = resolve_round(opened, "demo")
    assert again.unchanged and again.vintage == first.vintage
    # GDELT lists one of the files with another md5 now (as it does when it revises one).
    mirror_dir = opened.gdelt.base_url.removeprefix("file://")
    listing = opened.data_root.parent / "mirror/masterfilelist.txt"
    assert str(listing.parent) == mirror_dir
    lines = listing.read_text().splitlines()
    changed = [" ".join([p[0], "0" * 32, p[2]]) if SLOT in p[2] and "mentions" in p[2]
               else line for line in lines for p in [line.split()]]  # fmt: skip
    listing.write_text("\n".join(changed) + "\n")
    with pytest.raises(RoundError, match=f"1 changed since \\({SLOT}.mentions.CSV.zip\\)"):
        resolve_round(opened, "demo")
    assert (opened.data_root / "rounds/demo/resolution.parquet").read_bytes() == before


def test_each_forecaster_is_scored_as_computed_by_hand(opened, tmp_path):
    questions = pq.read_table(opened.data_root / "rounds/demo/questions.parquet").to_pylist()
    binary = [q for q in questions if q["kind"] == "binary"]
    left_out = binary[0]["question_id"]
    lines = [{"question_id": q["question_id"], "forecast": 0.2} for q in binary[1:]]
    lines += [{"question_id": q["question_id"], "forecast": {}} for q in questions
              if q["kind"] == "relation"]  # fmt: skip
    file = tmp_path / "f.jsonl"
    file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    submit_forecasts(opened, "demo", "team-a", file, now=datetime.now(UTC))
    summary = resolve_round(opened, "demo")
    assert summary.forecasters == 5  # and the 4 reference forecasters submitted at open
    found = resolution(opened)
    scores = pq.read_table(opened.data_root / "rounds/demo/scores.parquet").to_pylist()
    got = {(s["kind"], s["metric"], s["questions_set"]): s for s in scores
           if s["forecaster"] == "team-a"}  # fmt: skip

    def p(q):  # the forecast scored: 0.5 imputed where left out
        return 0.5 if q == left_out else 0.2

    outcomes = {q: r["outcome"] for q, r in found.items() if r["kind"] == "binary"}
    brier = [(p(q) - o) ** 2 for q, o in outcomes.items()]
    assert got[("binary", "brier", "all")]["mean"] == pytest.approx(sum(brier) / len(brier))
    assert got[("binary", "brier", "all")]["imputed"] == 1
    assert got[("binary", "brier", "all")]["marked"] == (1 / len(brier) > 0.05)
    robust = [(p(q) - o) ** 2 for q, o in outcomes.items() if not found[q]["fragile"]]
    assert got[("binary", "brier", "robust")]["questions"] == len(robust)
    # The empty forecast is an exact match where nothing happened, and misses otherwise.
    relation = [r for r in found.values() if r["kind"] == "relation"]
    hits = [100.0 if json.loads(r["answer"]) == {} else 0.0 for r in relation]
    assert got[("relation", "first_level_f1", "all")]["mean"] == pytest.approx(
        sum(hits) / len(hits)
    )
    s = got[("binary", "brier", "all")]
    assert s["low"] is None or s["low"] <= s["mean"] <= s["high"]


def test_a_live_round_takes_a_forecast_and_refuses_to_resolve_before_its_days_are_in(
    opened, tmp_path
):
    today = datetime.now(UTC).date()
    wide = {"history_days": 1000, "recent_days": 1000}  # the demo's days are in 2025
    cfg = opened.model_copy(update={"rounds": opened.rounds.model_copy(update=wide)})
    open_round(cfg, "live", today)
    first = pq.read_table(cfg.data_root / "rounds/live/questions.parquet").to_pylist()[0]
    forecast = {} if first["kind"] == "relation" else 0.5
    file = tmp_path / "f.jsonl"
    file.write_text(json.dumps({"question_id": first["question_id"], "forecast": forecast}))
    assert submit_forecasts(cfg, "live", "team-a", file).questions == 1
    last = today + timedelta(days=9)  # the last target day (horizon 9), no grace days
    with pytest.raises(RoundError, match=f"GDELT lists no slot on or after {last} yet"):
        resolve_round(cfg, "live")
    assert not (cfg.data_root / "rounds/live/resolution.parquet").exists()


def test_a_round_in_a_bucket_resolves_as_on_a_local_disk(
    opened, s3_endpoint, s3fs_client, tmp_path
):
    """The same replay round opened and resolved with its data root in a bucket (the bronze,
    the ledger and the silver put there, nothing else): the same questions and answers."""
    from gdelt_forecast.pipeline.runner import run
    from tests.conftest import new_bucket

    root = f"{new_bucket()}/demo"
    local = opened.data_root
    files = [p for folder in ("bronze", "silver") for p in (local / folder).rglob("*.parquet")]
    s3fs_client.put([str(p) for p in files],
                    [f"{root}/{p.relative_to(local).as_posix()}" for p in files])  # fmt: skip
    machine = tmp_path / "machine"
    cfg = opened.model_copy(update={
        "data_root": root,
        "storage": opened.storage.model_copy(update={"local_dir": machine}),
    })  # fmt: skip
    run("round_open", cfg, "bucket", open_date=OPEN, replay=True)
    summary = run("round_resolve", cfg, "bucket")
    resolve_round(opened, "demo")
    assert summary.questions == 30 and summary.voided == 0
    key = root.removeprefix("s3://")
    for name in ("questions.parquet", "resolution.parquet"):
        in_bucket = s3fs_client.cat_file(f"{key}/rounds/bucket/{name}")
        assert in_bucket == (local / f"rounds/demo/{name}").read_bytes(), name
    pinned = json.loads(s3fs_client.cat_file(f"{key}/rounds/bucket/round.json"))
    assert (
        pinned["state"] == "resolved" and pinned["resolution"]["vintage_sha256"] == summary.vintage
    )
