"""``gdelt-forecast release --month YYYY-MM``: an immutable, verifiable release of a month.

``<data_root>/releases/<version>/`` holds the warehouse's tables from the history start
(``release.history_start``, else the 1st of January of the month's year) through the
month's last day, the month's test set and its complex events with their timelines (built
afresh from the same warehouse, so they always agree), MIRAI's ``data/`` folder,
statistics and plots, the dataset card,
Croissant metadata and ``manifest.json``. It is written into a hidden folder beside its
final place and renamed into place; an existing version is never touched.
``releases/LATEST`` names the newest version. Everything but the manifest's ``created``
is a function of the inputs, config and code, so a rebuild gives the same bytes.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
from filelock import FileLock

from gdelt_forecast import duck
from gdelt_forecast.baselines import METHODS as BASELINES
from gdelt_forecast.baselines import SPLITS as BASELINE_SPLITS
from gdelt_forecast.baselines import run_baselines
from gdelt_forecast.config import Config
from gdelt_forecast.dates import month_range
from gdelt_forecast.errors import StageError
from gdelt_forecast.files import temporary_folder
from gdelt_forecast.locks import month_lock
from gdelt_forecast.objectstore import publish, where, working_copy_of
from gdelt_forecast.parquet_io import write_parquet
from gdelt_forecast.reference import tables as reference
from gdelt_forecast.release import card, croissant, export, manifest, mirai_info, quality, stats
from gdelt_forecast.release.layout import TABLES
from gdelt_forecast.release.news_terms import write_news_terms
from gdelt_forecast.release.tkg import write_tkg
from gdelt_forecast.summary import StageSummary
from gdelt_forecast.tasks.build import build_tasks
from gdelt_forecast.tasks.cut import SPLITS
from gdelt_forecast.testset import mirai_compat
from gdelt_forecast.testset.build import build_testset
from gdelt_forecast.testset.evaluate import LEVELS
from gdelt_forecast.timelines.build import build_timelines
from gdelt_forecast.warehouse.build import open_read_only

log = logging.getLogger(__name__)
VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
DATABASE = ("events", "quads", "news", "quad_docs", "funnel")
ROWS_PER_FILE = 5_000_000  # files of a few hundred MB: easy to download, few per table
# Texts in small row groups: reading one article (browse_news_article) or one day's decompresses
# a few MB, not the month's texts.
ROW_GROUPS = {"news": 1_000}


class ReleaseError(StageError):
    """The release cannot be written (bad version, version exists, nothing to release)."""


@dataclass
class Summary(StageSummary):
    month: str
    version: str
    path: str
    history_start: str
    history_end: str
    rows: dict[str, int] = field(default_factory=dict)
    files: int = 0
    bytes: int = 0
    seconds: float = 0.0

    def line(self) -> str:
        r = self.rows
        return (
            f"release {self.version} ({self.month}, history {self.history_start}.."
            f"{self.history_end}): {r.get('events', 0):,} events, {r.get('quads', 0):,} quads, "
            f"{r.get('news', 0):,} news, {r.get('queries', 0):,} queries (subset "
            f"{r.get('subset', 0):,}); {self.files} files, {self.bytes / 1e6:,.1f} MB at "
            f"{self.path} ({self.seconds:.1f} s)"
        )


def releases_dir(cfg: Config) -> Path:
    return cfg.data_root / "releases"


def history(cfg: Config, month: str, start: date | None = None) -> tuple[date, date]:
    first, last = month_range(month)
    start = start or cfg.release.history_start or first.replace(month=1)
    if start > first:
        raise ReleaseError(f"history start {start} is after the test month's first day {first}")
    return start, last


def next_version(root: Path, month: str) -> str:
    """``YYYY.MM.n`` with the first n no release of that name uses."""
    stem = month.replace("-", ".")
    n = 0
    while (root / f"{stem}.{n}").exists():
        n += 1
    return f"{stem}.{n}"


def _version_key(name: str) -> tuple:
    return tuple(int(p) if p.isdigit() else -1 for p in re.split(r"[.\-_]", name))


def build_release(
    cfg: Config, month: str, version: str | None = None, history_start: date | None = None
) -> Summary:
    t0 = time.monotonic()
    start, last = history(cfg, month, history_start)
    root = releases_dir(cfg)
    root.mkdir(parents=True, exist_ok=True)
    with month_lock(cfg, "release", month):
        with FileLock(root / ".lock"):
            version = version or next_version(root, month)
            if not VERSION.fullmatch(version):
                raise ReleaseError(f"version {version!r}: use letters, digits, '.', '-', '_'")
            dest = root / version
            if dest.exists():
                raise ReleaseError(
                    f"release {version} exists at {dest}: releases are "
                    "immutable, choose another --version"
                )
        # Unique, so two builds that ask for one name never share a folder; the loser of
        # the rename below is refused.
        tmp = temporary_folder(root, prefix=f".{version}.")
        try:
            rows = _write(cfg, month, version, start, last, tmp)
            with FileLock(root / ".lock"):
                if dest.exists():
                    raise ReleaseError(f"release {version} appeared at {dest} meanwhile")
                os.rename(tmp, dest)
                _update_latest(root, version)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    files = [p for p in dest.rglob("*") if p.is_file()]
    copy = working_copy_of(cfg.data_root)
    path = publish(copy[0], version, _stays_latest) if copy else str(dest)
    return Summary(
        month=month,
        version=version,
        path=path,
        history_start=start.isoformat(),
        history_end=last.isoformat(),
        rows=rows,
        files=len(files),
        bytes=sum(p.stat().st_size for p in files),
        seconds=time.monotonic() - t0,
    )


def _write(
    cfg: Config, month: str, version: str, start: date, last: date, out: Path
) -> dict[str, int]:
    """Everything of the release into ``out``; the row count of each table."""
    window = {"first_date": start, "last_date": last}
    with open_read_only(cfg) as con:
        con.execute(f"SET memory_limit = '{cfg.release.memory_limit}'")  # validated pattern
        for name in DATABASE:
            log.info("release %s: %s", version, name)
            export.write_query(
                con,
                f"release/export/{name}.sql",
                out / name,
                ROWS_PER_FILE,
                ROW_GROUPS.get(name, export.ROW_GROUP),
                **window,
            )
        log.info("release %s: MIRAI's data_kg.csv and data_news.csv", version)
        mirai_compat.write_database(con, out / "mirai" / "MIRAI", start, last)
    log.info("release %s: news_terms/ (the articles' terms, for BM25 search)", version)
    write_news_terms(out, ROWS_PER_FILE)
    write_parquet(reference.relations(), out / "reference" / "relations.parquet")
    write_parquet(reference.countries(), out / "reference" / "countries.parquet")
    slots = _gdelt_slots(cfg, start, last, out / "gdelt" / "slots.parquet")
    log.info("release %s: tkg/ quadruple files", version)
    tkg = write_tkg(out, start, month_range(month)[0], cfg.release.tkg_valid_days)
    log.info("release %s: test set", version)
    testset = build_testset(cfg, month, out / "testset", out / "mirai" / "MIRAI")
    log.info("release %s: complex events and timelines", version)
    timelines = build_timelines(cfg, month, out / "timelines", floor=start)
    log.info("release %s: tasks", version)
    tasks = build_tasks(cfg, month, out / "timelines", out / "tasks", by_split=True)
    log.info("release %s: MIRAI's info folder (embeddings)", version)
    embeddings = mirai_info.write_info(cfg, out / "mirai" / "info")
    log.info("release %s: baselines", version)
    scored = run_baselines(cfg, out, BASELINES, list(BASELINE_SPLITS))
    baselines = {m: {s: _figures(scored[m, s]) for s in BASELINE_SPLITS} for m in BASELINES}
    schemas = _schemas(out)
    with duckdb.connect() as con:
        for name in (*DATABASE, "relations", "countries", "complex_events", "timelines"):
            glob = next(t.glob for t in TABLES if t.name == name)
            con.execute(
                f"CREATE VIEW {name} AS SELECT * FROM read_parquet({duck.literal(out / glob)})"
            )
        con.execute(
            f"CREATE VIEW tasks AS SELECT * FROM read_parquet("
            f"{duck.literal(out / 'tasks' / '*' / '*.parquet')})"
        )
        headline = stats.write_stats(con, out, cfg.release.top_pairs)
    rows = {
        name: sum(manifest.parquet_rows(p) for p in sorted(out.glob(t.glob)))
        for t in TABLES
        if (name := t.name) in schemas
    }
    meta = {
        "name": cfg.release.name,
        "version": version,
        "month": month,
        "history": {"start": start.isoformat(), "end": last.isoformat()},
        "license": cfg.release.license,
        "code_version": manifest.code_version(),
        "config": {**cfg.model_dump(mode="json"), "data_root": where(cfg.data_root)},
        "gdelt": slots,
        "funnel": headline["funnel"],
        "embeddings": embeddings,
        "baselines": baselines,
        "tkg": tkg,
        "testset": {
            "queries": testset.queries,
            "rows": testset.rows,
            "subset": testset.subset,
            "horizons": testset.horizons,
        },
        "timelines": {
            "method": timelines.method,
            "complex_events": timelines.complex_events,
            "atomic_events": timelines.atomic_events,
            "dropped": dict(timelines.dropped),
        },
        "tasks": {
            "method": tasks.method,
            "cuts": tasks.cuts,
            "records": tasks.records,
            "splits": {s: tasks.splits.get(s, 0) for s in SPLITS},
            "negatives_discarded": dict(tasks.negatives_discarded),
            "kept_extractive": tasks.kept_extractive,
            "soundness": tasks.soundness,
        },
    }
    meta["quality"] = quality.quality(out / "tasks", meta["timelines"], meta["tasks"])
    manifest.write_json(out / "stats" / "quality.json", meta["quality"])
    (out / "README.md").write_text(card.render(meta, schemas, rows, headline), encoding="utf-8")
    files = manifest.entries(out)
    manifest.write_json(
        out / "croissant.json",
        croissant.croissant(
            out,
            {
                "name": cfg.release.name,
                "version": version,
                "license": cfg.release.license,
                "description": f"{cfg.release.name} {version}: MIRAI-style relation queries for "
                f"{month} and the GDELT event database and news corpus from {start} to {last}.",
                "citation": card.MIRAI_BIBTEX,
                "url": None,
                "date_published": None,
                "creator": "gdelt-forecast",
            },
            files,
        ),
    )
    files = sorted([*files, manifest.entry(out, out / "croissant.json")], key=lambda f: f["path"])
    created = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    manifest.write_json(
        out / manifest.MANIFEST,
        {
            "name": meta["name"],
            "version": version,
            "created": created,
            **{
                k: meta[k]
                for k in (
                    "code_version",
                    "month",
                    "history",
                    "config",
                    "gdelt",
                    "funnel",
                    "embeddings",
                    "baselines",
                    "tkg",
                    "testset",
                    "timelines",
                    "tasks",
                )
            },
            "files": files,
        },
    )
    return rows


def _figures(summary) -> dict:
    """A baseline's scores as the manifest keeps them: n and each level's metrics."""
    return {k: summary.scores[k] for k in ("n", *LEVELS)}


def _schemas(out: Path) -> dict:
    return {t.name: pq.read_schema(files[0]) for t in TABLES if (files := sorted(out.glob(t.glob)))}


def _gdelt_slots(cfg: Config, start: date, last: date, path: Path) -> dict:
    """The source files' ledger rows of the window (md5 of every file) and their summary."""
    ledger = cfg.data_root / "bronze" / "slots.parquet"
    if not ledger.exists():
        raise ReleaseError(f"no GDELT ledger at {ledger}: the release records its source files")
    lookback = cfg.events.url_lookback_days if cfg.events.earliest_url_date else 0
    with duckdb.connect() as con:
        table = duck.relation(
            con,
            "release/export/gdelt_slots.sql",
            ledger=str(ledger),
            lookback_date=start - timedelta(days=lookback),
            last_date=last,
        ).to_arrow_table()
    write_parquet(table, path)
    slots = table["slot"].to_pylist()
    statuses = Counter(table["status"].to_pylist())
    return {
        "slots": len(set(slots)),
        "files": table.num_rows,
        "first": min(slots, default=None),
        "last": max(slots, default=None),
        "statuses": dict(sorted(statuses.items())),
        "md5s": "gdelt/slots.parquet",
    }


def _stays_latest(current: str | None, version: str) -> bool:
    """Whether LATEST keeps naming ``current`` (a release there is) when ``version`` is
    added: it does when an older month was rebuilt, so the newest stays newest."""
    return bool(current) and _version_key(current) > _version_key(version)


def _update_latest(root: Path, version: str) -> None:
    latest = root / "LATEST"
    current = latest.read_text(encoding="utf-8").strip() if latest.exists() else None
    if current and (root / current).exists() and _stays_latest(current, version):
        return
    tmp = root / ".LATEST.tmp"
    tmp.write_text(version + "\n", encoding="utf-8")
    tmp.replace(latest)
