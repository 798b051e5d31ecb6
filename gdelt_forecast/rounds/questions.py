"""``gdelt-forecast round open``: a live round's questions, from what GDELT first published
before the round's open date, and nothing later.

What is read: the silver events of the days before the open date (``silver/events/date=D``,
D the day GDELT added the record, its ``DATEADDED``), those of the ``rounds.history_days``
before it, and nothing else: a later day's partition is never opened, whether or not it is
already in the data root, so opening a round before and after the later days are ingested
gives the same bytes. A row whose ``DATEADDED`` is on or after the open date inside an
earlier day's partition cannot be (silver's day is ``DATEADDED``'s); it would be left out and
counted (``late_rows``).

The pairs: the ``rounds.candidates`` most active (subject, object) pairs of the last
``rounds.recent_days`` (active days, then events), from which ``rounds.pairs`` are drawn
balanced by continent with the test set's seeded draw. Every chosen pair is asked about on
every target day, whatever will happen: a live round cannot choose by the outcome.

The questions (``questions.parquet``, one row each, ``RULES``):

- ``relation``: MIRAI's query (t, s, ?, o) for each target day t; the answer is every
  second-level CAMEO code of the pair's events added on t, grouped by first level, and may
  be empty.
- ``count_above_mean``: whether the pair's events of a quad class in the
  ``rounds.window_days`` days ending on t outnumber the ``threshold``, the mean count of such
  a window over the history (``window_days`` times the mean daily count over the days the data
  root holds; the mean of the rolling windows when it holds every day). A class the pair never
  took in the history gives no question (counted: ``left_out``).
- ``relation_at_least_once``: whether the pair takes a first-level relation at least once in
  that window, for ``rounds.relations_per_pair`` of the pair's relations: those the pair took
  in a share of the history's windows within ``rounds.base_rate_range``, the nearest to even
  odds first (a relation taken in every window would ask what the history settles); a
  missing one is counted (``left_out``).

Each has its ``background`` (from the history only) and ``base_rate``, the background's own
probability of yes (for ``relation``: the share of the history's days the pair had any event).
``round.json`` pins the rest: the clock, the rules, the days read and their digest, the code,
and the sha256 of ``questions.parquet``. A round already open is left as it is when the same
opening gives the same questions, and refused otherwise.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow as pa

from gdelt_forecast.contract.names import BINARY, RELATION
from gdelt_forecast.ground import duck
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import (
    PART,
    ROUND_JSON,
    ROUND_QUESTIONS,
    DataRoot,
    round_folder,
)
from gdelt_forecast.ground.dates import spoken
from gdelt_forecast.ground.files import sha256, write_json
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.reference import tables
from gdelt_forecast.rounds.clock import Clock, RoundError
from gdelt_forecast.rounds.references import reference_forecasts, submit_references
from gdelt_forecast.storage.working_copy import filesystem, readable, versions
from gdelt_forecast.testset.subset import Item, balanced_subset

RULES = {  # rule: kind
    "relation": RELATION,
    "count_above_mean": BINARY,
    "relation_at_least_once": BINARY,
}
QUESTIONS = pa.schema(
    [
        ("question_id", pa.string()),
        ("kind", pa.string()),  # contract.names: RELATION (an answer dict) or BINARY (yes/no)
        ("rule", pa.string()),
        ("question", pa.string()),
        ("resolution_criteria", pa.string()),
        ("background", pa.string()),
        ("subject", pa.string()),
        ("subject_name", pa.string()),
        ("subject_region", pa.string()),
        ("object", pa.string()),
        ("object_name", pa.string()),
        ("object_region", pa.string()),
        ("horizon", pa.int32()),  # days from the deadline's day to the target day
        ("target_date", pa.date32()),
        ("window_start", pa.date32()),  # the first day the answer counts (the target day's own)
        ("quad_class", pa.int32()),  # count_above_mean's
        ("relation", pa.string()),  # relation_at_least_once's first-level code
        ("threshold", pa.float64()),  # count_above_mean's: more events than this is yes
        ("base_rate", pa.float64()),
    ]
)
_DAY = re.compile(r"date=(\d{4}-\d{2}-\d{2})/")


@dataclass
class Summary(StageSummary):
    round_id: str
    open_date: str
    deadline: str
    replay: bool
    target_days: list[str] = field(default_factory=list)
    days_read: int = 0
    late_rows: int = 0
    candidates: int = 0
    pairs: int = 0
    questions: dict[str, int] = field(default_factory=dict)
    left_out: dict[str, int] = field(default_factory=dict)
    unchanged: bool = False  # already open with the same questions
    references: int = 0  # reference forecasters submitted
    seconds: float = 0.0

    def line(self) -> str:
        kinds = ", ".join(f"{rule} {n:,}" for rule, n in self.questions.items())
        dropped = "".join(f", {why} {n:,} left out" for why, n in self.left_out.items() if n)
        return (
            f"round open {self.round_id}{' (replay)' if self.replay else ''}: "
            f"{'already open, unchanged: ' if self.unchanged else ''}"
            f"{sum(self.questions.values()):,} questions ({kinds}) on {self.pairs} pairs of "
            f"{self.candidates} candidates, target days {', '.join(self.target_days)}, "
            f"deadline {self.deadline}; {self.days_read} days read, all before "
            f"{self.open_date}{dropped}; {self.references} reference forecasters submitted "
            f"({self.seconds:.1f} s)"
        )


def open_round(
    cfg: Config,
    round_id: str,
    open_date: date,
    deadline: datetime | None = None,
    replay: bool = False,
    now: datetime | None = None,
    release: str | None = None,
) -> Summary:
    """Open round ``round_id`` in ``rounds/<round_id>/`` of the data root (``cfg``'s,
    local: the runner hands a bucket's working copy). ``now`` (UTC, this machine's clock by
    default) decides live or replay, and is when the reference forecasters submit;
    ``release`` is the release that names the round (``round refresh``'s)."""
    rc = cfg.rounds
    now = now or datetime.now(UTC)
    clock = Clock.opened(round_id, open_date, now.date(), deadline, tuple(rc.horizons), replay)
    if not replay and now > clock.deadline:
        raise RoundError(
            f"deadline {_utc(clock.deadline)} has passed (it is {_utc(now)}): a live round "
            "must take forecasts"
        )
    found = build(cfg, clock)
    summary, files, history_start = found.summary, found.files, found.history_start
    folder = DataRoot(cfg.data_root).path(round_folder(round_id))
    folder.mkdir(parents=True, exist_ok=True)
    staged = folder / f".{ROUND_QUESTIONS}.new"
    write_parquet(pa.Table.from_pylist(found.rows, schema=QUESTIONS), staged)
    try:
        digest = sha256(staged)
        if _already_open(folder, clock, digest):
            summary.unchanged = True
            return summary
        staged.replace(folder / ROUND_QUESTIONS)
    finally:
        staged.unlink(missing_ok=True)
    write_json(
        folder / ROUND_JSON,
        _round_json(cfg, clock, files, history_start, digest, summary) | {"release": release},
    )
    submit_references(cfg, round_id, found.references, now=now)
    summary.references = len(found.references)
    return summary


@dataclass
class Built:
    """A round's questions as its clock and its history give them, and what they read."""

    rows: list[dict]
    references: dict[str, dict[str, object]]  # each reference forecaster's forecasts
    files: dict[date, str]  # the silver partition read of each day
    history_start: date
    summary: Summary


def build(cfg: Config, clock: Clock) -> Built:
    """The questions of a round with ``clock``, from the silver days before its open date
    (``round open`` writes them; ``round verify`` builds them again)."""
    rc, open_date = cfg.rounds, clock.open_date
    history_start = open_date - timedelta(days=rc.history_days)
    files = _history_files(cfg, history_start, open_date)
    if not files:
        raise RoundError(
            f"no silver events between {history_start} and {open_date - timedelta(days=1)}: "
            "ingest and normalize the days before the open date first"
        )
    summary = Summary(
        round_id=clock.round_id,
        open_date=open_date.isoformat(),
        deadline=_utc(clock.deadline),
        replay=clock.replay,
        target_days=[d.isoformat() for d in clock.target_days().values()],
        days_read=len(files),
    )
    rows, references = _questions(cfg, clock, files, history_start, summary)
    return Built(rows, references, files, history_start, summary)


def _history_files(cfg: Config, first: date, before: date) -> dict[date, str]:
    """The silver events partition of each day in [first, before) that the data root holds;
    later days are never listed to a reader."""
    found = {}
    for path in readable(cfg.data_root, f"silver/events/date=*/{PART}"):
        day = date.fromisoformat(_DAY.search(path)[1])
        if first <= day < before:
            found[day] = path
    return dict(sorted(found.items()))


def _questions(
    cfg: Config, clock: Clock, files: dict[date, str], history_start: date, summary: Summary
) -> list[dict]:
    rc = cfg.rounds
    open_date = clock.open_date
    recent_start = open_date - timedelta(days=rc.recent_days)
    countries = {c["iso3"]: c for c in tables.countries().to_pylist()}
    relations = tables.relations()
    names = {r["code"]: r for r in relations.to_pylist()}
    with duck.connect(cfg) as con:
        if fs := filesystem(cfg.data_root):
            con.register_filesystem(fs)
        con.execute(
            "CREATE TEMP TABLE silver_read AS SELECT date, head, relation, tail, GLOBALEVENTID, "
            f"DATEADDED FROM read_parquet({duck.quoted_list(list(files.values()))}, "
            "hive_partitioning = false)"
        )
        # Silver's day is DATEADDED's: none can be late, and one that were is left out.
        cut = int(open_date.strftime("%Y%m%d"))
        summary.late_rows = con.execute(
            "SELECT count(*) FROM silver_read WHERE DATEADDED // 1000000 >= ?", [cut]
        ).fetchone()[0]
        con.execute(
            "CREATE TEMP VIEW history AS SELECT * FROM silver_read "
            f"WHERE DATEADDED // 1000000 < {cut}"
        )
        candidates = duck.records(
            con, "rounds/pairs.sql", recent_start=recent_start, candidates=rc.candidates
        )
        summary.candidates = len(candidates)
        if not candidates:
            raise RoundError(
                f"no country pair had an event in the {rc.recent_days} days before "
                f"{open_date} (rounds.recent_days): no question to ask"
            )
        region = {iso: c["continent"] or "?" for iso, c in countries.items()}
        items = [
            Item(f"{p['subject']}_{p['object']}", "", (region.get(p["subject"], "?"),
                 region.get(p["object"], "?")), ())
            for p in candidates
        ]  # fmt: skip
        chosen = sorted(balanced_subset(items, rc.pairs, rc.seed, rc.attempts))
        summary.pairs = len(chosen)
        con.register(
            "chosen",
            pa.table(
                {
                    "subject": [k.split("_")[0] for k in chosen],
                    "object": [k.split("_")[1] for k in chosen],
                }
            ),
        )
        con.register("observed", pa.table({"day": pa.array(list(files), pa.date32())}))
        con.register("relations", relations)
        series = duck.records(
            con,
            "rounds/series.sql",
            history_start=history_start,
            recent_start=recent_start,
            window_days=rc.window_days,
        )
        found = duck.records(
            con,
            "rounds/references.sql",
            recent_start=open_date - timedelta(days=cfg.baseline.window_days),
            top=cfg.baseline.frequency_top,
        )
    counts: dict[tuple[str, str], dict[str, dict]] = {}
    for row in series:
        counts.setdefault((row["subject"], row["object"]), {})[row["series"]] = row
    writer = _Writer(clock, rc, countries, names, history_start, summary)
    rows = []
    for key in chosen:
        subject, object_ = key.split("_")
        rows += writer.pair(subject, object_, counts.get((subject, object_), {}))
    rows.sort(key=lambda r: (r["target_date"], r["question_id"]))
    for row in rows:
        summary.questions[row["rule"]] = summary.questions.get(row["rule"], 0) + 1
    pair_relations = {(r["subject"], r["object"]): r["relations"] for r in found
                      if r["source"] == "pair"}  # fmt: skip
    top = next(r["relations"] for r in found if r["source"] == "top") or []
    return rows, reference_forecasts(rows, writer.carried, pair_relations, top)


QUAD_LABELS = {1: "verbal cooperation", 2: "material cooperation", 3: "verbal conflict",
               4: "material conflict"}  # fmt: skip


class _Writer:
    """One pair's questions on every target day, their words from the history's counts."""

    def __init__(self, clock, rc, countries, names, history_start, summary):
        self.clock, self.rc, self.countries, self.names = clock, rc, countries, names
        self.history_start, self.summary = history_start, summary
        self.opened = spoken(clock.open_date)
        # each binary question's answer on the history's last window: the history forecaster's
        self.carried: dict[str, int] = {}

    def pair(self, subject: str, object_: str, series: dict[str, dict]) -> list[dict]:
        rows = []
        s, o = self._name(subject), self._name(object_)
        any_ = series.get("any") or {"days": 0, "active_days": 0, "total": 0, "recent": 0}
        codes = sorted(
            (k for k in series if k.startswith("code")),
            key=lambda k: (-series[k]["total"], k),
        )
        low, high = self.rc.base_rate_range
        # The relations whose history leaves the question open, the nearest to even odds first.
        open_ = sorted(
            (k for k in codes if low <= series[k]["any_share"] <= high),
            key=lambda k: (abs(series[k]["any_share"] - 0.5), -series[k]["total"], k),
        )[: self.rc.relations_per_pair]
        for horizon, target in self.clock.target_days().items():
            start = target - timedelta(days=self.rc.window_days - 1)
            base = {
                "subject": subject,
                "subject_name": s,
                "subject_region": self._region(subject),
                "object": object_,
                "object_name": o,
                "object_region": self._region(object_),
                "horizon": horizon,
                "target_date": target,
                "quad_class": None,
                "relation": None,
                "threshold": None,
            }
            tag = f"{target:%Y%m%d}_{subject}_{object_}"
            rows.append(self._relation(base, tag, any_, series, codes, s, o, target))
            for q in range(1, 5):
                found = series.get(f"class{q}")
                if not found or not found["total"]:
                    self._left_out("class never taken in the history")
                    continue
                rows.append(self._count(base, tag, q, found, s, o, start, target))
            for key in open_:
                rows.append(self._once(base, tag, key[4:], series[key], s, o, start, target))
            if len(open_) < self.rc.relations_per_pair:
                self._left_out(
                    "fewer relations than relations_per_pair within base_rate_range",
                    self.rc.relations_per_pair - len(open_),
                )
        return rows

    def _relation(self, base, tag, any_, series, codes, s, o, target) -> dict:
        recent = ", ".join(
            f"{self.names[k[4:]]['name']} ({k[4:]}) {series[k]['recent']}"
            for k in sorted(codes, key=lambda k: (-series[k]["recent"], k))[:5]
            if series[k]["recent"]
        )
        return {
            **base,
            "question_id": f"R_{tag}",
            "kind": RELATION,
            "rule": "relation",
            "window_start": target,
            "question": (
                f"Which relations (CAMEO codes) will {s} take towards {o} on {spoken(target)}? "
                "Answer with a dict of first-level codes to lists of second-level codes, "
                "as MIRAI's queries do; an empty dict says there will be none."
            ),
            "resolution_criteria": (
                f"GDELT's events added on {target} (UTC) with {s} ({base['subject']}) as the "
                f"first actor's country and {o} ({base['object']}) as the second's, kept by "
                "the normalize rules fixed in round.json: the answer is every second-level "
                "CAMEO code among them, grouped by first level; none gives the empty answer."
            ),
            "background": (
                f"Of the {any_['days']} days of the {self.rc.history_days} before "
                f"{self.opened} that the data holds, {s} took at least one action towards {o} "
                f"on {any_['active_days']}; in the last {self.rc.recent_days} days, "
                f"{any_['recent']} events" + (f": {recent}." if recent else ".")
            ),
            "base_rate": _share(any_["active_days"], any_["days"]),
        }

    def _count(self, base, tag, q, found, s, o, start, target) -> dict:
        threshold = round(self.rc.window_days * found["daily_mean"], 6)
        w = self.rc.window_days
        self.carried[f"C{q}_{tag}"] = int(found["last_scaled"] > threshold)
        return {
            **base,
            "question_id": f"C{q}_{tag}",
            "kind": BINARY,
            "rule": "count_above_mean",
            "window_start": start,
            "quad_class": q,
            "threshold": threshold,
            "question": (
                f"Will {s}'s {QUAD_LABELS[q]} events towards {o} in the {w} days from "
                f"{spoken(start)} to {spoken(target)} number more than {threshold:g}, the mean "
                f"of a {w}-day window in the year before {self.opened}?"
            ),
            "resolution_criteria": (
                f"Yes if GDELT's events added from {start} to {target} (UTC) with "
                f"{base['subject']} as the first actor's country and {base['object']} as the "
                f"second's, of CAMEO quad class {q} ({QUAD_LABELS[q]}), kept by the normalize "
                f"rules fixed in round.json, are more than {threshold:g} distinct events "
                "(GLOBALEVENTID), counted over the window's days GDELT published (scaled to "
                f"the {w} days where it published fewer); otherwise no."
            ),
            "background": (
                f"Over the {found['days']} days of the {self.rc.history_days} before "
                f"{self.opened} that the data holds, {s} took {found['daily_mean']:.2f} "
                f"{QUAD_LABELS[q]} actions a day towards {o}: {threshold:g} in a {w}-day "
                f"window, and {_percent(found['above_share'])} of its {w}-day windows had "
                f"more; the last {self.rc.recent_days} days had {found['recent']}."
            ),
            "base_rate": round(found["above_share"], 6),
        }

    def _once(self, base, tag, code, found, s, o, start, target) -> dict:
        name = self.names[code]["name"]
        w = self.rc.window_days
        self.carried[f"E{code}_{tag}"] = int(found["last_count"] > 0)
        return {
            **base,
            "question_id": f"E{code}_{tag}",
            "kind": BINARY,
            "rule": "relation_at_least_once",
            "window_start": start,
            "relation": code,
            "question": (
                f"Will {s} take a '{name}' action (CAMEO {code}) towards {o} at least once "
                f"from {spoken(start)} to {spoken(target)}?"
            ),
            "resolution_criteria": (
                f"Yes if at least one of GDELT's events added from {start} to {target} (UTC) "
                f"with {base['subject']} as the first actor's country and {base['object']} as "
                f"the second's has a relation under CAMEO {code}, kept by the normalize rules "
                "fixed in round.json; otherwise no."
            ),
            "background": (
                f"Over the {found['days']} days of the {self.rc.history_days} before "
                f"{self.opened} that the data holds, {s} took '{name}' actions towards {o} "
                f"in {_percent(found['any_share'])} of the {w}-day windows; "
                f"{found['recent']} in the last {self.rc.recent_days} days."
            ),
            "base_rate": round(found["any_share"], 6),
        }

    def _name(self, iso: str) -> str:
        return (self.countries.get(iso) or {}).get("name") or iso

    def _region(self, iso: str) -> str | None:
        return (self.countries.get(iso) or {}).get("continent")

    def _left_out(self, why: str, n: int = 1) -> None:
        self.summary.left_out[why] = self.summary.left_out.get(why, 0) + n


def _already_open(folder: Path, clock: Clock, digest: str) -> bool:
    """Whether the round is open with these questions (True), or not open (False); RoundError
    where it is open otherwise, or resolved."""
    path = folder / ROUND_JSON
    if not path.exists():
        return False
    pinned = json.loads(path.read_text(encoding="utf-8"))
    if pinned.get("state") != "open":
        raise RoundError(f"round {clock.round_id} is {pinned.get('state')}: it cannot open again")
    same = (
        pinned["open_date"] == clock.open_date.isoformat()
        and pinned["deadline"] == _utc(clock.deadline)
        and pinned["horizons"] == list(clock.horizons)
        and pinned["replay"] == clock.replay
    )
    if not same or pinned["questions"]["sha256"] != digest:
        raise RoundError(
            f"round {clock.round_id} is already open with other "
            f"{'questions' if same else 'dates, horizons or mode'} (questions.parquet sha256 "
            f"{pinned['questions']['sha256'][:12]}..., this opening's {digest[:12]}...): its "
            "forecasts answer those; open a new round instead"
        )
    return True


def _round_json(cfg, clock, files, history_start, digest, summary) -> dict:
    from gdelt_forecast.ground.version import code_version

    return {
        "round": clock.round_id,
        "state": "open",
        "replay": clock.replay,
        "open_date": clock.open_date.isoformat(),
        "deadline": _utc(clock.deadline),
        "horizons": list(clock.horizons),
        "target_days": {str(h): d.isoformat() for h, d in clock.target_days().items()},
        "window_days": cfg.rounds.window_days,
        "grace_days": cfg.rounds.grace_days,
        "data_cutoff": {
            "before": clock.open_date.isoformat(),
            "history_start": history_start.isoformat(),
            "days_read": len(files),
            "first_day": min(files).isoformat(),
            "last_day": max(files).isoformat(),
            "files_sha256": history_digest(cfg, files),
            "late_rows": summary.late_rows,
        },
        "resolution_rule": {
            "events": cfg.events.model_dump(mode="json"),
            "answers": "GDELT's events and mentions alone, through the normalize rules of "
            "`events` (never the articles); a relation query's answer is the second-level "
            "codes of the pair's events added on its target day; a binary question's, its "
            "count of distinct events over its window against its threshold",
        },
        "void_rules": [
            "a day whose GDELT slots are not all in the ledger, resolved with --allow-missing, "
            "voids every question that reads it",
        ],
        "rounds": cfg.rounds.model_dump(mode="json"),
        "code_version": code_version(),
        "questions": {
            "file": ROUND_QUESTIONS,
            "sha256": digest,
            "rows": sum(summary.questions.values()),
            "by_rule": summary.questions,
        },
    }


def history_digest(cfg: Config, files: dict[date, str]) -> str:
    """The digest of the silver files read, each named with its sha256 (a bucket's ETag)."""
    from gdelt_forecast.pipeline.stage_record import digest

    return digest(versions(cfg.data_root, tuple(f"silver/events/date={d}/{PART}" for d in files)))


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _share(part: int, whole: int) -> float:
    return round(part / whole, 6) if whole else 0.0


def _percent(share: float | None) -> str:
    return f"{(share or 0.0):.0%}"
