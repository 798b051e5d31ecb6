"""The normalize stage: MIRAI's event cleaning over bronze, as counted rules.

Each rule is a SQL file in ``gdelt_forecast/sql/normalize/`` that tags every record it
would drop with a reason. The runner applies them in order to the survivors of the previous
rule, records a funnel row per day and rule (rows in, rows out, top reasons), and writes per
day ``silver/events/date=D/part-0.parquet`` and ``silver/funnel/date=D/part-0.parquet``. A
day's output depends only on bronze of that day and its look-back window, so re-running any
range that includes it gives the same files.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import pyarrow as pa

from gdelt_forecast.gdelt.schema import MENTIONS
from gdelt_forecast.ground import dates, duck
from gdelt_forecast.ground.config import Config, EventsConfig
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.reference import tables

log = logging.getLogger(__name__)

# (rule name, SQL file, whether the config switches it on); order is the funnel's order.
RULES: list[tuple[str, str, str | None]] = [
    ("same_day", "10_same_day.sql", "same_day"),
    ("earliest_url_date", "20_earliest_url.sql", "earliest_url_date"),
    ("countries", "30_countries.sql", None),
    ("international_only", "40_international.sql", "international_only"),
    ("relation", "50_relation.sql", None),
    ("min_daily_mentions", "60_daily_mentions.sql", None),
]
FUNNEL = "normalize/funnel_step.sql"
# What the last rule reads alone: a round's variants of its pinned rule change only these.
MENTIONS_FIELDS = {"mentions_metric", "min_daily_mentions"}


class NormalizeError(StageError):
    """The requested days cannot be normalized (their bronze is missing)."""


@dataclass
class Summary(StageSummary):
    first_day: str
    last_day: str
    days: int = 0
    records_in: int = 0
    records_kept: int = 0
    quads: int = 0
    removed: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def line(self) -> str:
        removed = ", ".join(f"{rule} -{n:,}" for rule, n in self.removed.items())
        return (
            f"normalize {self.first_day}..{self.last_day}: {self.days} days, "
            f"{self.records_in:,} records in, {self.records_kept:,} kept in {self.quads:,} "
            f"quads; {removed} ({self.seconds:.1f} s)"
        )


def _partition_files(root: Path, days: list[date]) -> tuple[list[Path], list[date]]:
    files, missing = [], []
    for day in days:
        found = sorted((root / f"date={day.isoformat()}").glob("*.parquet"))
        files += found
        if not found:
            missing.append(day)
    return files, missing


def _views(con, cfg: Config, first: date, last: date, wanted: list[date] | None = None) -> None:
    """Views of the bronze that the rules read for the records of ``wanted`` (every day of
    [first, last] by default), each of which must have bronze: their events and mentions, and
    the events of the rest of the range and of the URL look-back before it, where there are."""
    bronze = DataRoot(cfg.data_root).bronze_root
    window = dates.days(first - timedelta(days=cfg.events.url_lookback_days), first - timedelta(1))
    wanted = wanted or dates.days(first, last)
    events, missing = _partition_files(bronze / "events", dates.days(first, last))
    missing = sorted(set(missing) & set(wanted))
    if missing:
        raise NormalizeError(
            f"no bronze events for {', '.join(d.isoformat() for d in missing)}: ingest them first"
        )
    earlier, _ = _partition_files(bronze / "events", window)
    mentions, no_mentions = _partition_files(bronze / "mentions", wanted)
    if no_mentions and cfg.events.mentions_metric == "distinct_sources":
        raise NormalizeError(
            f"no bronze mentions for {', '.join(d.isoformat() for d in no_mentions)}: "
            "ingest them, or set events.mentions_metric=sum_num_mentions"
        )
    con.execute(
        # file_index and file_row_number name a bronze row far more cheaply than its path.
        "CREATE VIEW bronze_events AS SELECT *, file_index FROM read_parquet("
        f"{duck.quoted_list(earlier + events)}, hive_partitioning = false, "
        "file_row_number = true)"
    )
    if mentions:
        con.execute(
            "CREATE VIEW bronze_mentions AS SELECT * FROM read_parquet("
            f"{duck.quoted_list(mentions)}, hive_partitioning = false)"
        )
    else:
        con.register("bronze_mentions", MENTIONS.empty_table())
    con.register("cameo_countries", tables.cameo_countries())
    con.register("relations", tables.relations())


def _apply_rules(
    con, cfg: Config, first: date, last: date, progress: int = logging.INFO, stop: int | None = None
) -> None:
    """Leave the survivors of the rules (up to step ``stop``: all by default) in table ``kept``
    and one funnel row per day and rule in ``funnel``; each rule is logged at ``progress``."""
    params = _params(cfg, first, last)
    duck.run(con, "normalize/00_events.sql", "CREATE TEMP TABLE stage AS", **params)
    con.execute("CREATE TEMP TABLE tagged AS SELECT *, CAST(NULL AS VARCHAR) AS reason FROM stage")
    duck.run(
        con, FUNNEL, "CREATE TEMP TABLE funnel AS", step=0, rule="bronze", enabled=True, **params
    )
    con.execute("CREATE TEMP VIEW rule_input AS SELECT * FROM stage")
    _rules(con, cfg, params, 1, progress, stop)
    con.execute("DROP TABLE tagged")
    con.execute("DROP VIEW rule_input")
    con.execute("ALTER TABLE stage RENAME TO kept")


def _params(cfg: Config, first: date, last: date) -> dict:
    ev = cfg.events
    return {
        "first_day": int(first.strftime("%Y%m%d")),
        "last_day": int(last.strftime("%Y%m%d")),
        "first_date": first.isoformat(),
        "last_date": last.isoformat(),
        "top_reasons": ev.top_reasons,
        "same_day": ev.same_day,
        "lookback_days": ev.url_lookback_days,
        "metric": ev.mentions_metric,
        "min_daily_mentions": ev.min_daily_mentions,
    }


def _rules(con, cfg: Config, params: dict, start: int, progress: int, stop: int | None = None):
    """Apply RULES from step ``start`` up to step ``stop`` (the last by default) to table
    ``stage`` (through view ``rule_input``), which is left holding their survivors."""
    for step, (rule, sql_file, switch) in enumerate(RULES[start - 1 : stop], start):
        enabled = True if switch is None else getattr(cfg.events, switch)
        duck.run(
            con,
            f"normalize/{sql_file}",
            "CREATE OR REPLACE TEMP TABLE tagged AS",
            enabled=enabled,
            **params,
        )
        duck.run(con, FUNNEL, "INSERT INTO funnel", step=step, rule=rule, enabled=enabled, **params)
        log.log(progress, "normalize %s..%s: rule %d/%d %s applied",
                params["first_date"], params["last_date"], step, len(RULES), rule)  # fmt: skip
        con.execute(
            "CREATE OR REPLACE TEMP TABLE stage AS "
            "SELECT * EXCLUDE (reason) FROM tagged WHERE reason IS NULL"
        )


def _replace(con, query: str, params: dict, dest: Path) -> None:
    """COPY a query's result to ``dest`` through a temporary file, so readers never see half."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    con.execute(f"COPY ({query}) TO {duck.literal(tmp)} (FORMAT parquet, COMPRESSION zstd)", params)
    os.replace(tmp, dest)


def kept_events(
    cfg: Config, days: list[date], variants: dict[str, EventsConfig]
) -> dict[str, pa.Table]:
    """Per variant of ``cfg.events``, the records of ``days`` that its rules keep (``date``,
    ``head``, ``relation``, ``tail``, ``GLOBALEVENTID``), from bronze and written nowhere: what
    a round's resolution reads, under the rules its round pinned and their variants.

    The variants may differ from ``cfg.events`` only in the daily mentions rule, the last: the
    rules before it run once for them all, over the days' range, so each bronze file and the
    URL look-back are read once rather than once a day and variant."""
    changed = {k for v in variants.values() for k, x in v if getattr(cfg.events, k) != x}
    if changed - MENTIONS_FIELDS:
        raise ValueError(f"variants may change only {sorted(MENTIONS_FIELDS)}, not {changed}")
    first, last = min(days), max(days)
    quiet = logging.DEBUG  # a round's days x variants
    found = {}
    with duck.connect(cfg) as con:
        _views(con, cfg, first, last, days)
        _apply_rules(con, cfg, first, last, quiet, stop=len(RULES) - 1)
        for name, events in variants.items():
            variant = cfg.model_copy(update={"events": events})
            con.execute("CREATE OR REPLACE TEMP TABLE stage AS SELECT * FROM kept")
            con.execute("CREATE OR REPLACE TEMP VIEW rule_input AS SELECT * FROM stage")
            _rules(con, variant, _params(variant, first, last), len(RULES), quiet)
            found[name] = con.sql(
                "SELECT date, head, relation, tail, GLOBALEVENTID FROM stage "
                "WHERE list_contains($days, date)",
                params={"days": sorted(days)},
            ).to_arrow_table()
    return found


def normalize(cfg: Config, first: date, last: date) -> Summary:
    """Normalize the days [first, last] and write their silver events and funnel."""
    days = dates.days(first, last)
    with duck.connect(cfg) as con:
        _views(con, cfg, first, last)
        _apply_rules(con, cfg, first, last)
        duck.run(con, "normalize/70_silver.sql", "CREATE TEMP TABLE silver AS")
        silver = DataRoot(cfg.data_root).silver_root
        for day in days:
            part = f"date={day.isoformat()}/part-0.parquet"
            at = {"day": day}
            _replace(con, "SELECT * FROM silver WHERE date = $day", at, silver / "events" / part)
            _replace(
                con,
                "SELECT * FROM funnel WHERE date = $day ORDER BY step",
                at,
                silver / "funnel" / part,
            )
        totals = con.execute(
            "SELECT rule, sum(removed), sum(rows_in) FROM funnel GROUP BY rule, step ORDER BY step"
        ).fetchall()
        kept, quads = con.execute("SELECT count(*), count(DISTINCT quad_id) FROM silver").fetchone()
    return Summary(
        first_day=first.isoformat(),
        last_day=last.isoformat(),
        days=len(days),
        records_in=int(totals[0][2]),
        records_kept=kept,
        quads=quads,
        removed={rule: int(n) for rule, n, _ in totals[1:]},
    )
