"""``gdelt-forecast testset --month YYYY-MM``: MIRAI's relation queries for a month.

From the warehouse: the strict collection (quads with at least ``testset.min_daily_mentions``
daily mentions and ``testset.min_documents`` kept documents), one query (t, s, ?, o) per
(date, subject, object) of it, one row per forecasting horizon (cutoff = t - horizon), the
MIRAI query prompt, the answer as a list and as a dict grouped by first-level code, and the
balanced subset. Writes ``testset/<month>/queries.parquet``, ``subset.parquet``,
``balance.json`` (what the subset achieved against the full set) and MIRAI's
``relation_query.csv`` files (``mirai_compat/``, the release's ``mirai/MIRAI/``, where it
adds MIRAI's database files).
A month without queries is an error, never an empty test set.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pyarrow as pa

from gdelt_forecast.ground import duck
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.dates import month_range, spoken
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.scoring.answers import answer_dict
from gdelt_forecast.testset import mirai_compat
from gdelt_forecast.testset.subset import Item, balance, balanced_subset

PROMPT = (
    "Please forecast the relations that {subject_name} will take towards {object_name} on "
    "{date_nlp} based on historical information up to {cutoff_nlp}. I.e. forecast the "
    "relation CAMEO codes in query event Event(date={date}, head_entity=ISOCode({subject}), "
    "relation=CAMEOCode(?), tail_entity=ISOCode({object}))."
)  # MIRAI appendix K.2, "Query prompt"
QUERIES = pa.schema(
    [
        ("query_id", pa.string()),
        ("key", pa.string()),  # the (t, s, ?, o) a query asks, whatever its horizon
        ("date", pa.date32()),
        ("horizon", pa.int32()),
        ("cutoff", pa.date32()),
        ("subject", pa.string()),
        ("subject_name", pa.string()),
        ("subject_region", pa.string()),
        ("subject_subregion", pa.string()),
        ("object", pa.string()),
        ("object_name", pa.string()),
        ("object_region", pa.string()),
        ("object_subregion", pa.string()),
        ("date_nlp", pa.string()),
        ("cutoff_nlp", pa.string()),
        ("prompt", pa.string()),
        ("answer", pa.string()),  # JSON: {"03": ["036"], "04": ["042"]}
        ("answer_list", pa.list_(pa.string())),
        ("daily_mentions", pa.int64()),
        ("min_docs", pa.int64()),
    ]
)


class TestsetError(StageError):
    """The month cannot give a test set (bad month, no warehouse, or leakage)."""

    __test__ = False  # a name pytest would otherwise try to collect


@dataclass
class Summary(StageSummary):
    month: str
    candidates: int = 0
    queries: int = 0
    rows: int = 0
    subset: int = 0
    horizons: list[int] = field(default_factory=list)
    balance_cv: dict[str, dict[str, float]] = field(default_factory=dict)
    seconds: float = 0.0

    def line(self) -> str:
        cv = "; ".join(
            f"{d} cv {v['subset']:.2f} (full {v['full']:.2f})" for d, v in self.balance_cv.items()
        )
        return (
            f"testset {self.month}: {self.candidates:,} strict quads, {self.queries:,} queries "
            f"x horizons {self.horizons} = {self.rows:,} rows, subset {self.subset}; {cv} "
            f"({self.seconds:.1f} s)"
        )


def _rows(pairs: list[dict], horizons: list[int]) -> list[dict]:
    rows = []
    for pair in pairs:
        key = f"{pair['date']}_{pair['subject']}_{pair['object']}"
        for horizon in horizons:
            cutoff = pair["date"] - timedelta(days=horizon)
            row = {
                **pair,
                "query_id": f"{key}_h{horizon}",
                "key": key,
                "horizon": horizon,
                "cutoff": cutoff,
                "date_nlp": spoken(pair["date"]),
                "cutoff_nlp": spoken(cutoff),
                "answer": json.dumps(answer_dict(pair["answer_list"])),
            }
            row["prompt"] = PROMPT.format(**row)
            rows.append(row)
    return rows


def check_leakage(rows: list[dict]) -> None:
    """A release fails if a query's history could reach its own day: every cutoff must be
    before the query date, by exactly its horizon."""
    leaks = [
        r["query_id"]
        for r in rows
        if not r["cutoff"] < r["date"] or (r["date"] - r["cutoff"]).days != r["horizon"]
    ]
    if leaks:
        raise TestsetError(f"{len(leaks)} queries see past their cutoff: {leaks[:5]}")


def build_testset(cfg: Config, month: str, out: Path) -> Summary:
    """Into ``out`` (``<data_root>/testset/<month>`` when :mod:`gdelt_forecast.pipeline.runner` runs
    it), MIRAI's query files into ``out/mirai_compat``."""
    ts = cfg.testset
    first, last = month_range(month)
    params = {
        "first_date": first,
        "last_date": last,
        "min_daily_mentions": ts.min_daily_mentions,
        "min_documents": ts.min_documents,
        "answer_source": ts.answer_source,
    }
    compat = out / "mirai_compat"
    with duck.open_warehouse(cfg) as con:
        duck.run(con, "testset/candidates.sql", "CREATE TEMP TABLE candidates AS", **params)
        candidates = con.execute("SELECT count(*) FROM candidates").fetchone()[0]
        if not candidates:
            (in_month,) = con.execute(
                "SELECT count(*) FROM quads WHERE date BETWEEN ? AND ?", [first, last]
            ).fetchone()
            raise TestsetError(_no_queries(cfg, month, in_month))
        pairs = duck.records(con, "testset/queries.sql", **params)
    rows = _rows(pairs, sorted(set(ts.horizons)))
    check_leakage(rows)
    items = [
        Item(
            p["key"],
            str(p["date"]),
            (p["subject_region"] or "?", p["object_region"] or "?"),
            tuple(sorted(answer_dict(p["answer_list"]))),
        )
        for p in (
            {**pair, "key": f"{pair['date']}_{pair['subject']}_{pair['object']}"} for pair in pairs
        )
    ]
    chosen = set(balanced_subset(items, ts.subset_size, ts.seed, ts.attempts))
    full, picked = balance(items), balance([i for i in items if i.key in chosen])
    table = pa.Table.from_pylist(rows, schema=QUERIES)
    write_parquet(table, out / "queries.parquet")
    subset = table.filter(pa.array([r["key"] in chosen for r in rows], pa.bool_()))
    write_parquet(subset, out / "subset.parquet")
    _write_json(out / "balance.json", {"full": full, "subset": picked, "seed": ts.seed})
    first_horizon = [r for r in rows if r["horizon"] == min(ts.horizons)]
    for folder, keep in (
        ("test", first_horizon),
        ("test_subset", [r for r in first_horizon if r["key"] in chosen]),
    ):
        mirai_compat.write_queries(compat / folder / "relation_query.csv", keep)
    return Summary(
        month=month,
        candidates=candidates,
        queries=len(pairs),
        rows=len(rows),
        subset=len(chosen),
        horizons=sorted(set(ts.horizons)),
        balance_cv={d: {"subset": picked[d]["cv"], "full": full[d]["cv"]} for d in full},
    )


def _no_queries(cfg: Config, month: str, in_month: int) -> str:
    where = f"the warehouse at {DataRoot(cfg.data_root).warehouse}"
    if not in_month:
        return f"no quads dated in {month} in {where}: ingest, normalize and rebuild it first"
    ts = cfg.testset
    return (
        f"none of the {in_month:,} quads of {month} in {where} has both "
        f"{ts.min_daily_mentions} daily mentions and {ts.min_documents} kept documents "
        "(testset.min_daily_mentions, testset.min_documents): no test set written"
    )


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
