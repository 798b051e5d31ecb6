"""``gdelt-forecast release --month YYYY-MM``: an immutable, verifiable release of a month.

``<data_root>/releases/<version>/`` holds the warehouse's tables from the history start
(``release.history_start``, else the 1st of January of the month's year) through the
month's last day; the month's test set, timelines and tasks as their stages built them,
MIRAI's ``data/`` folder, statistics and plots, the dataset card, Croissant metadata and
``manifest.json``.

The release packages, it does not rebuild: it reads the records of the month's stages
(:mod:`gdelt_forecast.pipeline.stage_record`), refuses with one line naming the stage to run again
when one is missing or stale (its inputs changed since it ran, or it was built for another
history window or config), and copies the files they list, checking each one's sha256 on
the way. Then three steps: package (:func:`_package`), score the baselines
(:func:`_score`), seal (:func:`_seal`: statistics, card, Croissant, manifest). It is written
into a hidden folder beside its final place and renamed into place; an existing version is
never touched. ``releases/LATEST`` names the newest version. Everything but the manifest's
``created`` and the live round named (``round``: a release built in the month after its own
names the round its refresh opens, ``live-<build date>``) is a function of the inputs, config
and code, so a rebuild gives the same bytes.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
from filelock import FileLock

from gdelt_forecast.contract import months as months_index
from gdelt_forecast.contract.layout import TABLES
from gdelt_forecast.contract.names import (
    BASELINES,
    LEVELS,
    MANIFEST,
    QUERIES,
    REASONING,
    SPLITS,
    live_round,
    version_key,
)
from gdelt_forecast.ground import dates, duck
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import ROUND_QUESTIONS, SCRATCH, DataRoot, round_folder
from gdelt_forecast.ground.digests import Digests
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.files import (
    entry,
    link_or_copy,
    parquet_rows,
    replacing,
    sha256,
    temporary_folder,
    write_json,
)
from gdelt_forecast.ground.parquet_io import BATCH, write_parquet, write_reader
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.ground.version import code_version
from gdelt_forecast.pipeline import stage_record
from gdelt_forecast.pipeline.stages import STAGES
from gdelt_forecast.reference import tables as reference
from gdelt_forecast.release import (
    card,
    croissant,
    manifest,
    mirai_database,
    mirai_info,
    openforecast,
    quality,
    stats,
)
from gdelt_forecast.release.model_built import model_built
from gdelt_forecast.release.tkg import write_tkg
from gdelt_forecast.storage.working_copy import where

log = logging.getLogger(__name__)
REASONING_SUMMARY = ("records", "left_out", "soundness", "letters", "note", "judged", "examples")
# The month's stages a release packages, and where their files go in it: (prefix in the
# stage's folder, prefix in the release), the first that matches.
PLACES = {
    "testset": (("mirai_compat/", "mirai/MIRAI/"), ("", "testset/")),
    "timelines": (("", "timelines/"),),
    "tasks": (("", "tasks/"),),
    # reasoning/<month>/I-CEC.parquet -> reasoning/I-CEC/test.parquet (one split: test); the
    # model's judgements, with reasoning.method llm, beside them as the other stages' are
    "reasoning": (
        *((f"{t}.", f"reasoning/{t}/test.") for t in REASONING),
        ("llm_calls.parquet", "reasoning/llm_calls.parquet"),
    ),
}


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
    phases: dict[str, float] = field(default_factory=dict)  # step -> seconds
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
    return DataRoot(cfg.data_root).releases


def current_records(cfg: Config, month: str, history_start: date | None = None) -> dict:
    """The records of the month's stages, each checked against what this release asks for
    now; a ReleaseError of one line naming the stage to run again when one is missing or
    stale, or when the warehouse itself is older than its sources."""
    root = DataRoot(cfg.data_root)
    if not root.warehouse.exists():
        raise ReleaseError(f"no warehouse at {root.warehouse}: run `gdelt-forecast database`")
    if why := STAGES["database"].stale_up_to(cfg, month):
        raise ReleaseError(
            f"the warehouse at {root.warehouse} is not current up to {month}: {why}: run "
            "`gdelt-forecast database`, then the month's stages"
        )
    found = {}
    for name in PLACES:
        stage = STAGES[name]
        record = stage_record.read(root.month_record(name, month))
        why = stage_record.stale(
            record,
            params={"month": month, **stage.params(cfg, month, history_start=history_start)},
            config=stage.config(cfg),
            inputs=stage.fingerprint(cfg, root, month),
        )
        if why:
            raise ReleaseError(
                f"{name} {month} at {root.month(name, month)} is not current: {why}; run "
                f"`gdelt-forecast {name} --month {month}` again"
            )
        found[name] = record
    return found


def next_version(root: Path, month: str) -> str:
    """``YYYY.MM.n`` with the first n no release of that name uses."""
    stem = month.replace("-", ".")
    n = 0
    while (root / f"{stem}.{n}").exists():
        n += 1
    return f"{stem}.{n}"


def build_release(
    cfg: Config,
    month: str,
    version: str | None = None,
    history_start: date | None = None,
    now: datetime | None = None,
) -> Summary:
    """Release ``month`` (the module's doc); ``now`` (UTC, this machine's clock by default)
    decides the live round the release names, the one its refresh opens after it."""
    try:
        start, last = dates.history(month, history_start or cfg.release.history_start)
    except dates.MonthError as exc:
        raise ReleaseError(str(exc)) from None
    records = current_records(cfg, month, history_start)
    root = releases_dir(cfg)
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(root / ".lock"):
        version = version or next_version(root, month)
        if not manifest.VERSION.fullmatch(version):
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
    phases: dict[str, float] = {}
    try:
        meta = _package(cfg, month, version, (start, last), records, tmp, phases)
        meta["round"] = _live_round(month, (now or datetime.now(UTC)).date())
        with _timed(phases, "baselines"):
            meta["baselines"] = _score(cfg, tmp)
        rows = _seal(meta, tmp, phases, cfg.data_root)
        put_in_place(root, tmp, version)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    files = [p for p in dest.rglob("*") if p.is_file()]
    return Summary(
        month=month,
        version=version,
        path=str(dest),
        history_start=start.isoformat(),
        history_end=last.isoformat(),
        rows=rows,
        files=len(files),
        bytes=sum(p.stat().st_size for p in files),
        phases=phases,
    )


def _live_round(month: str, today: date) -> dict | None:
    """The live round that the month's refresh opens after this release, built ``today``:
    where it will lie in the data root (``round refresh`` opens the one the release names)."""
    round_id = live_round(month, today)
    if round_id is None:
        return None
    return {
        "round": round_id,
        "open_date": today.isoformat(),
        "questions": f"{round_folder(round_id)}/{ROUND_QUESTIONS}",
    }


@contextmanager
def _timed(phases: dict[str, float], name: str) -> Iterator[None]:
    t0 = time.monotonic()
    try:
        yield
    finally:
        phases[name] = phases.get(name, 0.0) + time.monotonic() - t0


def _package(
    cfg: Config,
    month: str,
    version: str,
    window: tuple[date, date],
    records: dict[str, dict],
    out: Path,
    phases: dict[str, float],
) -> dict:
    """The release's data into ``out``: the warehouse's tables of the window, the month's
    stages' files, MIRAI's folders, ``tkg/``; what the manifest says of them."""
    start, last = window
    with _timed(phases, "history tables"):
        log.info("release %s: the history's tables, a month at a time", version)
        link_history(cfg, start, last, out)
    write_parquet(reference.relations(), out / "reference" / "relations.parquet")
    write_parquet(reference.countries(), out / "reference" / "countries.parquet")
    slots = _gdelt_slots(cfg, start, last, out / "gdelt" / "slots.parquet")
    with _timed(phases, "MIRAI's database (measured)"):
        log.info("release %s: MIRAI's data_kg.csv and data_news.csv, measured", version)
        root = DataRoot(cfg.data_root)
        listed = months_index.read_index(root.warehouse_parts)["months"]
        keys = {month: found["key"] for month, found in listed.items()}
        built = mirai_database.measure(out, start, last, cfg.release.memory_limit, keys,
                                       root.path(f"{SCRATCH}/mirai-parts"))  # fmt: skip
    with _timed(phases, "tkg files"):
        log.info("release %s: tkg/ quadruple files", version)
        tkg = write_tkg(out, start, dates.month_range(month)[0], cfg.release.tkg_valid_days)
    with _timed(phases, "stages' files"):
        for name, record in records.items():
            log.info("release %s: %s (%d files)", version, name, len(record["files"]))
            _copy_stage(DataRoot(cfg.data_root).month(name, month), record, out, PLACES[name])
    with _timed(phases, "openforecast"):
        log.info("release %s: openforecast/ (OpenForecast's layout of the tasks)", version)
        openforecast_files = openforecast.write(out)
    with _timed(phases, "embeddings/info"):
        log.info("release %s: MIRAI's info folder (embeddings)", version)
        embeddings = mirai_info.write_info(cfg, out / "mirai" / "info")
    summary = {name: record["summary"] for name, record in records.items()}
    tasks = summary["tasks"]
    return {
        "name": cfg.release.name,
        "version": version,
        "month": month,
        "history": {"start": start.isoformat(), "end": last.isoformat()},
        "license": cfg.release.license,
        "code_version": code_version(),
        "config": {**cfg.model_dump(mode="json"), "data_root": where(cfg.data_root)},
        "stages": {
            name: {k: record[k] for k in ("params", "config_sha256", "inputs", "code_version")}
            for name, record in records.items()
        },
        "gdelt": slots,
        "built": built,
        "embeddings": embeddings,
        "tkg": tkg,
        "testset": {k: summary["testset"][k] for k in ("queries", "rows", "subset", "horizons")},
        "timelines": {
            **{
                k: summary["timelines"][k]
                for k in ("method", "complex_events", "atomic_events", "dropped")
            },
            # Rule 6's reasons and the rules' examples (timelines built before rule 6 have none).
            "ungrounded": summary["timelines"].get("ungrounded", {}),
            "arguments_nulled": summary["timelines"].get("arguments_nulled", 0),
            "examples": summary["timelines"].get("examples", {}),
            "written_dropped": summary["timelines"].get("written_dropped", {}),
            "kept_extractive": summary["timelines"].get("kept_extractive", {}),
        },
        "tasks": {
            "method": tasks["method"],
            "cuts": tasks["cuts"],
            "records": tasks["records"],
            "splits": {s: tasks["splits"].get(s, 0) for s in SPLITS},
            "negatives_discarded": tasks["negatives_discarded"],
            "kept_extractive": tasks["kept_extractive"],
            "soundness": tasks["soundness"],
            # what the rules dropped of the model's parts (tasks built before had none)
            "model_dropped": tasks.get("model_dropped", {}),
            "examples": tasks.get("examples", {}),
        },
        "openforecast": openforecast_files,
        "reasoning": {k: summary["reasoning"].get(k, {}) for k in REASONING_SUMMARY},
    }


def link_history(cfg: Config, start: date, last: date, out: Path) -> None:
    """The warehouse's tables of the window, a month's files at a time: a month wholly in it
    is linked (copied where the release lies on another file system), so every release that
    holds the month holds the same file, written once; a month the window starts within is
    filtered from its files, in their order."""
    folder = DataRoot(cfg.data_root).warehouse_parts
    months = {m: e for m, e in months_index.read_index(folder)["months"].items()
              if dates.month_range(m)[1] >= start and dates.month_range(m)[0] <= last}  # fmt: skip
    if not months:
        raise ReleaseError(
            f"the warehouse at {folder} holds no day from {start} to {last}: run `gdelt-forecast "
            "database`"
        )
    with duckdb.connect() as con:
        for month, listed in sorted(months.items()):
            first, end = dates.month_range(month)
            for table in months_index.RELEASED:
                dest = out / table
                dest.mkdir(parents=True, exist_ok=True)
                files = listed["files"][table]
                if first >= start and end <= last:
                    for f in files:
                        _link(folder, f, dest / Path(f["path"]).name)
                    continue
                reader = duck.relation(
                    con,
                    "release/month_window.sql",
                    files=[str(folder / f["path"]) for f in files],
                    first_date=start,
                    last_date=last,
                ).to_arrow_reader(BATCH)
                row_group = months_index.ROW_GROUPS.get(table, months_index.ROW_GROUP)
                write_reader(reader, dest, months_index.ROWS_PER_FILE, row_group,
                             months_index.stem(month))  # fmt: skip


def _link(folder: Path, item: dict, dest: Path) -> None:
    """The warehouse's month file ``item`` at ``dest``, a hard link where the file system
    allows one, once it is as the warehouse wrote it (a file gone or changed since is refused;
    the manifest then lists the sha256 of what was linked)."""
    if not months_index.as_listed(folder, item):
        raise ReleaseError(
            f"{folder / item['path']} is gone or changed since the warehouse wrote it: run "
            "`gdelt-forecast database` again"
        )
    link_or_copy(folder / item["path"], dest)


def _copy_stage(folder: Path, record: dict, out: Path, places: tuple) -> None:
    """Copy the files ``record`` lists from ``folder`` into the release, each at its place;
    the copy's sha256 must be the record's (a file changed since the stage ran is refused)."""
    for item in record["files"]:
        rel = item["path"]
        prefix, place = next((p, to) for p, to in places if rel.startswith(p))
        dest = out / (place + rel.removeprefix(prefix))
        dest.parent.mkdir(parents=True, exist_ok=True)
        source = folder / rel
        if not source.exists():
            raise ReleaseError(f"{source} is gone since its stage ran: run the stage again")
        with replacing(dest) as tmp:
            shutil.copyfile(source, tmp)
        if sha256(dest) != item["sha256"]:
            dest.unlink(missing_ok=True)
            raise ReleaseError(
                f"{source} changed since its stage ran (sha256 differs from its record): "
                f"run `gdelt-forecast {record['stage']} --month {record['partition']}` again"
            )


def _score(cfg: Config, out: Path) -> dict:
    """The baselines' scores on the packaged release (through its own agent environment)."""
    log.info("release: baselines")
    scored = STAGES["baseline"].on_release(cfg, out, BASELINES, list(QUERIES))
    return {m: {s: _figures(scored[m, s]) for s in QUERIES} for m in BASELINES}


def _seal(meta: dict, out: Path, phases: dict[str, float], data_root: Path) -> dict[str, int]:
    """Statistics, ``quality.json``, the card, Croissant and the manifest; the row count of
    each table."""
    schemas = _schemas(out)
    with _timed(phases, "stats"), duckdb.connect() as con:
        for name in ("events", "quads", "news", "quad_docs", "funnel", "relations", "countries",
                     "complex_events", "timelines"):  # fmt: skip
            glob = next(t.glob for t in TABLES if t.name == name)
            con.execute(
                f"CREATE VIEW {name} AS SELECT * FROM read_parquet({duck.literal(out / glob)})"
            )
        con.execute(
            f"CREATE VIEW tasks AS SELECT * FROM read_parquet("
            f"{duck.literal(out / 'tasks' / '*' / '*.parquet')})"
        )
        headline = stats.write_stats(con, out, meta["config"]["release"]["top_pairs"])
    meta["funnel"] = headline["funnel"]
    rows = {
        name: sum(parquet_rows(p) for p in sorted(out.glob(t.glob)))
        for t in TABLES
        if (name := t.name) in schemas
    }
    meta["quality"] = quality.quality(out / "tasks", meta["timelines"], meta["tasks"])
    meta["quality"]["model_built"] = model_built(out, meta)
    write_json(out / "stats" / "quality.json", meta["quality"])
    with _timed(phases, "card, croissant, manifest"):
        (out / "README.md").write_text(card.render(meta, schemas, rows, headline), encoding="utf-8")
        # The history's files are the warehouse's, linked: their sha256 is known already.
        with Digests(data_root) as digests:
            files = manifest.entries(out, digests.of)
        write_json(
            out / "croissant.json",
            croissant.croissant(
                out,
                {
                    "name": meta["name"],
                    "version": meta["version"],
                    "license": meta["license"],
                    "description": f"{meta['name']} {meta['version']}: MIRAI-style relation "
                    f"queries for {meta['month']} and the GDELT event database and news "
                    f"corpus from {meta['history']['start']} to {meta['history']['end']}.",
                    "citation": card.MIRAI_BIBTEX,
                    "url": None,
                    "date_published": None,
                    "creator": "gdelt-forecast",
                },
                files,
            ),
        )
        files = sorted([*files, entry(out, out / "croissant.json")], key=lambda f: f["path"])
        created = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        keys = (
            "code_version",
            "month",
            "history",
            "config",
            "stages",
            "gdelt",
            "built",
            "funnel",
            "embeddings",
            "baselines",
            "tkg",
            "testset",
            "timelines",
            "tasks",
            "openforecast",
            "reasoning",
            "round",
        )
        write_json(
            out / MANIFEST,
            {
                "name": meta["name"],
                "version": meta["version"],
                "created": created,
                **{k: meta[k] for k in keys},
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
    ledger = DataRoot(cfg.data_root).ledger
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


def put_in_place(root: Path, tmp: Path, version: str) -> None:
    """The finished release in ``tmp`` renamed to ``root/<version>`` (the loser of two builds
    of one version is refused), and LATEST updated."""
    with FileLock(root / ".lock"):
        dest = root / version
        if dest.exists():
            raise ReleaseError(f"release {version} appeared at {dest} meanwhile")
        os.rename(tmp, dest)
        update_latest(root, version)


def stays_latest(current: str | None, version: str) -> bool:
    """Whether LATEST keeps naming ``current`` (a release there is) when ``version`` is
    added: it does when an older month was rebuilt, so the newest stays newest."""
    return bool(current) and version_key(current) > version_key(version)


def update_latest(root: Path, version: str) -> None:
    latest = root / "LATEST"
    current = latest.read_text(encoding="utf-8").strip() if latest.exists() else None
    if current and (root / current).exists() and stays_latest(current, version):
        return
    tmp = root / ".LATEST.tmp"
    tmp.write_text(version + "\n", encoding="utf-8")
    tmp.replace(latest)
