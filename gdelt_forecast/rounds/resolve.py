"""``gdelt-forecast round resolve``: a round's answers, from the GDELT files it names.

A round resolves only when GDELT has published its days: every slot file that GDELT's master
file list names for the days its questions read (each target day, and each binary window's
days) and for the ``grace_days`` after its last target day is in the ingest ledger with a
final outcome (downloaded, cached, or missing or corrupt at GDELT), with the md5 GDELT lists
now, and GDELT lists a slot on or after the last of those days. Otherwise it names the slots
it lacks and resolves nothing. ``--allow-missing`` voids the questions that read a day whose
slots are not all in, instead.

The answers come from GDELT alone: each day's bronze events and mentions through the
normalize rules that ``round.json`` pinned at opening (``resolution_rule.events``), never the
articles, so a news host that is down changes no answer. ``resolution.parquet`` holds each
question's answer, or the reason it is void (voids are kept, never dropped). ``vintage.json``
lists the files read, each with its md5 and outcome, and ``round.json`` gains their sha256
(the vintage) and becomes ``resolved``.

A resolved round is frozen: resolving it again reads the ledger and the master file list
again, and refuses, naming each file, where one changed, rather than change an answer. The
same files give the same answers, and it says so.

**Fragility.** Each question is also resolved under three variants of the rule: the mention
threshold halved and doubled, and the other mention metric (the sum of ``NumMentions``
instead of distinct sources, or the reverse). A question whose answer differs under any of
them is ``fragile``; the scores are given with and without the fragile questions.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from functools import cache

import pyarrow as pa
import pyarrow.parquet as pq

from gdelt_forecast.contract.names import BINARY
from gdelt_forecast.gdelt import ledger
from gdelt_forecast.gdelt.days import FINAL
from gdelt_forecast.gdelt.ingest import list_slot_files
from gdelt_forecast.ground import dates
from gdelt_forecast.ground.config import Config, EventsConfig
from gdelt_forecast.ground.data_root import ROUND_JSON, ROUND_QUESTIONS, DataRoot, round_folder
from gdelt_forecast.ground.files import sha256, write_json
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.reference import tables
from gdelt_forecast.rounds.clock import RoundError
from gdelt_forecast.rounds.scores import score_round
from gdelt_forecast.scoring.answers import answer_dict

RESOLUTION_FILE = "resolution.parquet"
VINTAGE_FILE = "vintage.json"
RESOLUTION = pa.schema(
    [
        ("question_id", pa.string()),
        ("kind", pa.string()),
        ("rule", pa.string()),
        ("answer", pa.string()),  # a relation query's: MIRAI's answer dict, as JSON
        ("outcome", pa.int8()),  # a binary question's: 1 yes, 0 no
        ("count", pa.int64()),  # a binary question's: distinct events in its window
        ("published_days", pa.int32()),  # days it reads on which GDELT listed any slot
        ("void", pa.string()),  # why it has no answer; null when it has one
        ("fragile", pa.bool_()),
        ("variants", pa.string()),  # JSON: each variant's answer or outcome
    ]
)
NAMED = 10  # missing or changed files named in a refusal


@dataclass
class Summary(StageSummary):
    round_id: str
    questions: int = 0
    resolved: int = 0
    voided: int = 0
    fragile: int = 0
    files: int = 0
    vintage: str = ""
    unchanged: bool = False  # resolved before, from the same files
    forecasters: int = 0  # scored
    unrevealed: int = 0  # commits never revealed, not scored
    seconds: float = 0.0
    void_reasons: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        if self.unchanged:
            return (
                f"round resolve {self.round_id}: already resolved from the same "
                f"{self.files:,} files (vintage {self.vintage[:12]}...), answers unchanged; "
                f"{self.forecasters} forecaster(s) scored, {self.unrevealed} commit(s) never "
                "revealed"
            )
        return (
            f"round resolve {self.round_id}: {self.resolved:,} of {self.questions:,} questions "
            f"answered, {self.voided:,} void, {self.fragile:,} fragile, from {self.files:,} "
            f"GDELT files (vintage {self.vintage[:12]}...); {self.forecasters} forecaster(s) "
            f"scored, {self.unrevealed} commit(s) never revealed ({self.seconds:.1f} s)"
        )


def resolve_round(cfg: Config, round_id: str, allow_missing: bool = False) -> Summary:
    """Resolve round ``round_id`` of the data root; RoundError naming what it lacks."""
    folder = DataRoot(cfg.data_root).path(round_folder(round_id))
    if not (folder / ROUND_JSON).exists():
        raise RoundError(f"no round {round_id}: `gdelt-forecast round open` it first")
    pinned = json.loads((folder / ROUND_JSON).read_text(encoding="utf-8"))
    questions = pq.read_table(folder / ROUND_QUESTIONS).to_pylist()
    files, reads = published(cfg, pinned, questions)
    listed_days = {f["day"] for f in files}
    summary = Summary(round_id=round_id, questions=len(questions))
    if pinned["state"] == "resolved":
        _frozen(folder, pinned, files, reads, summary)
        _scored(folder, pq.read_table(folder / RESOLUTION_FILE).to_pylist(), summary)
        return summary
    pending = [f for f in files if f["pending"]]
    if pending and not allow_missing:
        raise RoundError(
            f"round {round_id} cannot resolve: {len(pending):,} GDELT file(s) of its days are "
            f"not in the ledger as ingested ({_names(pending)}); ingest them, or resolve with "
            "--allow-missing to void the questions that read their days"
        )
    void_days = {f["day"] for f in pending}
    vintage = _vintage(files, reads)
    rows = answers(cfg, pinned, questions, listed_days, void_days)
    write_parquet(pa.Table.from_pylist(rows, schema=RESOLUTION), folder / RESOLUTION_FILE)
    write_json(folder / VINTAGE_FILE, {"round": round_id, "files": vintage})
    summary.files, summary.vintage = len(vintage), _digest(vintage)
    summary.voided = sum(r["void"] is not None for r in rows)
    summary.resolved = summary.questions - summary.voided
    summary.fragile = sum(bool(r["fragile"]) for r in rows)
    for row in rows:
        if row["void"]:
            summary.void_reasons[row["void"]] = summary.void_reasons.get(row["void"], 0) + 1
    pinned |= {
        "state": "resolved",
        "resolution": {
            "resolved_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "allow_missing": allow_missing,
            "vintage_sha256": summary.vintage,
            "files": summary.files,
            "void_days": sorted(d.isoformat() for d in void_days),
            "answered": summary.resolved,
            "voided": summary.voided,
            "fragile": summary.fragile,
            "resolution_sha256": sha256(folder / RESOLUTION_FILE),
        },
    }
    write_json(folder / ROUND_JSON, pinned)
    _scored(folder, rows, summary)
    return summary


def _scored(folder, rows: list[dict], summary: Summary) -> None:
    """The forecasts in force scored again (a commit revealed since counts now)."""
    counts = score_round(folder, rows)
    summary.forecasters, summary.unrevealed = counts["forecasters"], counts["unrevealed"]


def answers(
    cfg: Config, pinned: dict, questions: list[dict], listed: set[date], void: set[date]
) -> list[dict]:
    """Each question's row of resolution.parquet, under the rule ``pinned`` (round.json)
    fixed and its variants, from the bronze of the days read; ``listed``: the days GDELT
    listed a file of, ``void``: the days whose files are not all in."""
    reads = _days_read(questions)
    rule = EventsConfig(**pinned["resolution_rule"]["events"])
    events = _events(cfg.model_copy(update={"events": rule}), reads, listed, void)
    return [_resolved(q, events, listed, void, pinned["window_days"]) for q in questions]


def published(cfg: Config, pinned: dict, questions: list[dict]) -> tuple[list[dict], list[date]]:
    """GDELT's files of the days the questions read and of the grace days (each with its
    md5 and ledger outcome, :func:`_published`), and the days read."""
    reads = _days_read(questions)
    last = max(q["target_date"] for q in questions) + timedelta(days=pinned["grace_days"])
    return _published(cfg, dates.days(min(reads), last), last), reads


def vintage_of(files: list[dict], reads: list[date]) -> tuple[list[dict], str]:
    """The files of the days read, sorted, and their sha256 (the round's vintage)."""
    found = _vintage(files, reads)
    return found, _digest(found)


def _days_read(questions: list[dict]) -> list[date]:
    """Every day a question's answer reads: its window, or its target day alone."""
    return sorted({d for q in questions for d in dates.days(q["window_start"], q["target_date"])})


def _published(cfg: Config, days: list[date], last: date) -> list[dict]:
    """Each file GDELT's master file list names for ``days``, with its day, md5 and ledger
    outcome, ``pending`` where the ledger has no final outcome with that md5; RoundError where
    GDELT lists nothing on or after ``last`` yet."""
    start = datetime.combine(days[0], time())
    end = datetime.combine(last, time()) + timedelta(days=1, seconds=-1)
    listing = list_slot_files(cfg, start, end, cfg.gdelt.tables)
    if not any(f.slot[:8] >= last.strftime("%Y%m%d") for f in listing.files):
        raise RoundError(
            f"GDELT lists no slot on or after {last} yet (the last target day and the grace "
            "days): its days are not all published"
        )
    book = ledger.read(DataRoot(cfg.data_root).ledger, {f.slot for f in listing.files})
    found = []
    for f in listing.files:
        row = book.get((f.slot, f.stream, f.table), {})
        status, md5 = row.get("status"), row.get("md5")
        found.append({
            "file": f.name, "day": date.fromisoformat(f"{f.slot[:4]}-{f.slot[4:6]}-{f.slot[6:8]}"),
            "md5": f.md5, "status": status or "not ingested",
            "pending": status not in FINAL or md5 != f.md5,
        })  # fmt: skip
    return found


def _vintage(files: list[dict], reads: list[date]) -> list[dict]:
    """The files of the days read, sorted: what the answers come from."""
    wanted = set(reads)
    return sorted(
        ({"file": f["file"], "md5": f["md5"], "status": f["status"]}
         for f in files if f["day"] in wanted),
        key=lambda f: f["file"],
    )  # fmt: skip


def _digest(vintage: list[dict]) -> str:
    pairs = [[f["file"], f["md5"]] for f in vintage]
    return hashlib.sha256(json.dumps(pairs, separators=(",", ":")).encode()).hexdigest()


def _frozen(folder, pinned: dict, files: list[dict], reads: list[date], summary) -> None:
    """A resolved round read again: unchanged where its files are, else RoundError naming
    each file GDELT lists with another md5 now, or no longer lists, or lists anew."""
    before = json.loads((folder / VINTAGE_FILE).read_text(encoding="utf-8"))["files"]
    was = {f["file"]: f["md5"] for f in before}
    now = {f["file"]: f["md5"] for f in _vintage(files, reads)}
    changed = [
        {"file": name} for name in sorted(set(was) | set(now)) if was.get(name) != now.get(name)
    ]
    if changed:
        raise RoundError(
            f"round {summary.round_id} was resolved from other GDELT files: {len(changed):,} "
            f"changed since ({_names(changed)}); a resolved round is frozen, and its answers "
            "stay as they were"
        )
    summary.unchanged, summary.files = True, len(before)
    summary.vintage = pinned["resolution"]["vintage_sha256"]


def _names(files: list[dict]) -> str:
    shown = ", ".join(f["file"] for f in files[:NAMED])
    return shown + (f" and {len(files) - NAMED:,} more" if len(files) > NAMED else "")


def _variants(rule: EventsConfig) -> dict[str, EventsConfig]:
    """The pinned rule and the three variants whose disagreement marks a question fragile."""
    other = "sum_num_mentions" if rule.mentions_metric == "distinct_sources" else "distinct_sources"
    return {
        "pinned": rule,
        "mentions_halved": rule.model_copy(
            update={"min_daily_mentions": rule.min_daily_mentions // 2}
        ),
        "mentions_doubled": rule.model_copy(
            update={"min_daily_mentions": rule.min_daily_mentions * 2}
        ),
        other: rule.model_copy(update={"mentions_metric": other}),
    }


def _events(cfg: Config, reads: list[date], listed: set[date], void: set[date]) -> dict:
    """Per variant of the rule (``cfg.events``, :func:`_variants`) and day read: the distinct
    events kept, per (subject, object), as (GLOBALEVENTID, relation) pairs; a day GDELT listed
    nothing for, or whose files are void, has none."""
    from gdelt_forecast.events.normalize import kept_events

    variants = _variants(cfg.events)
    found = {name: {day: defaultdict(set) for day in reads} for name in variants}
    days = [d for d in reads if d in listed and d not in void and _has_bronze(cfg, d)]
    if not days:
        return found
    for name, kept in kept_events(cfg, days, variants).items():
        for e in kept.to_pylist():
            found[name][e["date"]][(e["head"], e["tail"])].add((e["GLOBALEVENTID"], e["relation"]))
    return found


def _has_bronze(cfg: Config, day: date) -> bool:
    """Whether any slot of the day reached bronze (a day whose every file GDELT lists but
    never served, missing or corrupt, has none: no events)."""
    folder = DataRoot(cfg.data_root).bronze_root / "events" / f"date={day.isoformat()}"
    return any(folder.glob("*.parquet"))


@cache
def _quad_classes() -> dict[str, int]:
    """First-level CAMEO code -> its quad class."""
    return {r["code"]: r["quad_class"] for r in tables.relations().to_pylist() if r["level"] == 1}


def _resolved(q: dict, events: dict, listed: set[date], void: set[date], window: int) -> dict:
    days = dates.days(q["window_start"], q["target_date"])
    row = {k: q[k] for k in ("question_id", "kind", "rule")} | dict.fromkeys(
        ("answer", "outcome", "count", "void", "variants"), None
    )
    row |= {"published_days": sum(d in listed for d in days), "fragile": False}
    if void & set(days):
        row["void"] = "a day it reads lacks GDELT files (resolved with --allow-missing)"
        return row
    if not row["published_days"]:
        row["void"] = "GDELT published nothing on the days it reads"
        return row
    answers = {name: _answer(q, by_day, days, window, row["published_days"])
               for name, by_day in events.items()}  # fmt: skip
    main = answers.pop("pinned")
    if q["kind"] == BINARY:
        row["outcome"], row["count"] = main
        variants = {name: a[0] for name, a in answers.items()}
        row["fragile"] = any(v != main[0] for v in variants.values())
    else:
        row["answer"] = json.dumps(main, sort_keys=True)
        variants = answers
        row["fragile"] = any(v != main for v in variants.values())
    row["variants"] = json.dumps(variants, sort_keys=True)
    return row


def _answer(q: dict, by_day: dict, days: list[date], window: int, published: int):
    """A relation query's answer dict; a binary question's (outcome, count)."""
    pair = (q["subject"], q["object"])
    seen = {e for d in days for e in by_day[d].get(pair, ())}
    if q["rule"] == "relation":
        return answer_dict(list({relation for _, relation in seen}))
    if q["rule"] == "count_above_mean":
        count = len({i for i, r in seen if _quad_classes()[r[:2]] == q["quad_class"]})
        return int(count * window / published > q["threshold"]), count
    count = len({i for i, r in seen if r[:2] == q["relation"]})
    return int(count > 0), count
