"""Benchmark: build a month's release from a synthetic warehouse (wall time, peak memory).

It reuses the test-set bench's synthetic month (``build_warehouse``: 60,000 skewed quads over
30 days from 2025-08-01 with their ``news`` and ``quad_docs``, cached under
<workdir>/testset) and writes its own data root, <workdir>/release, with what a release
reads beyond that:

- the warehouse, as ``database`` keeps it (``warehouse/``: a file per table and month, and
  ``warehouse.duckdb``'s views over them): the test-set bench's tables, plus ``events``, the
  kept GDELT records with every silver column (the 61 export columns with the codebook names and
  types, ``_slot``, ``_source_file``, ``date``, ``head``, ``relation``, ``tail``,
  ``quad_id``, ``daily_mentions``). Each row is the first international record of
  tests/fixtures/gdelt/20250807220000.export.CSV (parsed with ``parse_bytes``) with its
  ids, dates, actor codes and names, CAMEO codes, QuadClass, counts, tone, slot and
  SOURCEURL set from its quad. A quad's records are one per source URL, its kept
  documents' URLs plus, for a quarter of the quads, one never-kept URL, and for 15% of the
  quads a second record from the same article (about 3 records a quad, 180,000 for the
  month); ``quads`` gains ``n_records``, ``n_events`` and ``n_urls`` from them and ``news``
  the article stage's columns (published, preset and the OBELICS filter values), so both
  have the real warehouse's schema. ``funnel`` has the 7 normalization rules a day, rows
  in from the day's bronze export rows down to the day's events, with plausible top
  reasons. Everything is SQL over md5-derived numbers (or a seeded ``random.Random``
  for the funnel), so it is deterministic.
- ``bronze/slots.parquet``: the GDELT ledger (``gdelt_forecast.gdelt.ledger.SCHEMA``) for every
  15-minute slot from the URL look-back window's first day (31 days before 2025-08-01)
  to the last day, export and mentions: made-up sizes and md5s, 0.2% "missing".

The warehouse is reused while its marker (written last) matches the test-set bench's and this
generator's parameters.

Beside the warehouse, the record ``database`` writes (``warehouse.json``: the fingerprint of
its sources, none here since it has no silver), so the release accepts it.

Each run is what a month's refresh runs after ``database``, through the runner as the
command line runs it: the stages ``testset``, ``timelines`` and ``tasks``, then
``release`` (``gdelt_forecast.pipeline.runner.run("release", cfg, "2025-08", version)``), which
checks their records and copies their files, with the default config (configs/default.yaml:
history from 2025-01-01, of which only August has data; DuckDB at release.memory_limit
(1GB), all cores; the local all-MiniLM-L6-v2) under a fresh version name, in a fresh
subprocess: wall seconds of the whole and of the release alone, and peak RSS as that
child's ru_maxrss (DuckDB, pyarrow and ONNX Runtime allocate in the same process, so they are
counted). The phases are each stage's seconds and the release's own steps as its summary
reports them (``phases``: the history's tables linked, MIRAI's CSVs measured, ``tkg/``,
the stages' files, MIRAI's info folder with the embeddings, the baselines, the statistics
and plots, the card, Croissant and manifest); "other" is the rest. Then
``gdelt_forecast.release.verify.verify`` runs once on the last release, timed, in a fresh
subprocess too. Before issue 21 the release built the three stages itself; comparing this
run's whole with that release's time compares the same work.

Targets: median wall < 60 s and every run's peak RSS < 2 GiB. The exit status is 1 when
one fails, or when the release is wrong: a table's row count differs from the warehouse's
rows in the history window (the test set's queries from the strict pairs the generator
wrote), ``verify`` reports a problem, or the runs' Parquet files differ (sha256 of each;
they hold no version name, unlike README.md, croissant.json and manifest.json).

Run: ``python -m bench.stages.release [--days 30] [--workdir bench-data] [--repeat 3]``.
Generating the warehouse takes about 10 s the first time (plus the test-set bench's 5 s if it
has none); each run writes about 0.4 GB under <workdir>/release/releases, and all but the
last run's release are deleted at the end.
"""

from __future__ import annotations

import json
import random
import resource
import shutil
import statistics
import sys
import time
from datetime import date, timedelta
from pathlib import Path

from bench.harness import REPO, bench_parser, in_fresh_process, print_with_peak_rss, verdict
from bench.stages import testset as bench_testset
from bench.stages.testset import BIG_COUNTRIES, MONTH, START
from gdelt_forecast.ground.files import sha256

TEMPLATE = REPO / "tests/fixtures/gdelt/20250807220000.export.CSV"
FIRST_ID = 1_250_000_000  # GLOBALEVENTIDs of August 2025 are around 1.256 billion
EXTRA_URL, EXTRA_RECORD = 0.25, 0.15  # shares of quads with a never-kept URL, a 2nd record
URL_LOOKBACK_DAYS = 31  # configs/default.yaml events.url_lookback_days: the ledger's first day
MISSING = 0.002  # share of GDELT files the ledger marks missing
GENERATOR = 3  # 3: the warehouse as its monthly files and views over them (issue 51)
HISTORY = (date(2025, 1, 1), date(2025, 8, 31))  # the default config's window for 2025-08
SUBSET = 100  # configs/default.yaml testset.subset_size
WALL_TARGET_S, RSS_TARGET_MIB = 60.0, 2 * 1024
DATABASE = ("events", "quads", "news", "quad_docs", "funnel")  # dated tables of the warehouse
VERSIONED = ("README.md", "croissant.json", "manifest.json")  # files naming the version
STAGES = ("testset", "timelines", "tasks", "reasoning")  # the month's stages a release packages
# The normalization rules, in order (sql/normalize), with the share of rows each keeps.
RULES = (
    ("bronze", 1.0), ("same_day", 0.984), ("earliest_url_date", 0.90), ("countries", 0.19),
    ("international_only", 0.79), ("relation", 0.999), ("min_daily_mentions", None),
)  # fmt: skip
TOP_REASONS = 10  # configs/default.yaml events.top_reasons

# A number in [0, 1) from a string, the same on every run and DuckDB version.
UNIFORM = "CREATE MACRO u(s) AS CAST(('0x' || left(md5(s), 12)) AS UBIGINT) / 2.0 ** 48"
EVENTS = """
CREATE TABLE events AS
WITH urls AS (  -- a quad's source URLs: its kept documents', sometimes one never kept
    SELECT d.quad_id, n.url FROM src.quad_docs AS d JOIN src.news AS n USING (doc_id)
    UNION ALL
    SELECT quad_id, 'https://news' || CAST(floor(u(quad_id || '/host') * 500) AS INTEGER)
        || '.example.org/' || date || '/' || left(md5(quad_id || '/url'), 20)
    FROM src.quads
    WHERE u(quad_id || '/url') < $extra_url
),
records AS (  -- a record per URL, for some quads a second one from the same article
    SELECT quad_id, url, 0 AS k FROM urls
    UNION ALL
    SELECT quad_id, min(url), 1 FROM urls GROUP BY quad_id
    HAVING u(quad_id || '/record') < $extra_record
),
cameo AS (  -- the CAMEO actor code of an ISO country (the same letters where there is one)
    SELECT iso3, coalesce(max(cameo_code) FILTER (WHERE cameo_code = iso3), min(cameo_code))
        AS code
    FROM src.cameo_countries
    WHERE kind = 'country' AND iso3 IS NOT NULL
    GROUP BY iso3
),
numbered AS (
    SELECT q.date, q.head, q.relation, q.tail, q.quad_id, q.daily_mentions, r.url,
        $first_id + row_number() OVER (ORDER BY q.date, q.quad_id, r.url, r.k) AS id,
        CAST(strftime(q.date + to_minutes(15 * CAST(floor(u(q.quad_id || r.url || r.k) * 96)
            AS INTEGER)), '%Y%m%d%H%M%S') AS BIGINT) AS added,
        u(q.quad_id || r.url || r.k || '/n') AS x
    FROM records AS r
    JOIN src.quads AS q USING (quad_id)
)
SELECT t.* REPLACE (
        CAST(n.id AS BIGINT) AS GLOBALEVENTID,
        CAST(strftime(n.date, '%Y%m%d') AS INTEGER) AS SQLDATE,
        CAST(strftime(n.date, '%Y%m') AS INTEGER) AS MonthYear,
        CAST(year(n.date) AS SMALLINT) AS Year,
        round(year(n.date) + (month(n.date) * 30 + day(n.date)) / 365, 4) AS FractionDate,
        coalesce(a1.code, n.head) AS Actor1Code,
        upper(c1.name) AS Actor1Name,
        coalesce(a1.code, n.head) AS Actor1CountryCode,
        coalesce(a2.code, n.tail) AS Actor2Code,
        upper(c2.name) AS Actor2Name,
        coalesce(a2.code, n.tail) AS Actor2CountryCode,
        CAST(n.x < 0.6 AS TINYINT) AS IsRootEvent,
        n.relation AS EventCode,
        n.relation AS EventBaseCode,
        left(n.relation, 2) AS EventRootCode,
        CAST(rel.quad_class AS TINYINT) AS QuadClass,
        CAST(1 + floor(n.x * 10) AS INTEGER) AS NumMentions,
        CAST(1 + floor(n.x * 3) AS INTEGER) AS NumSources,
        CAST(1 + floor(n.x * 10) AS INTEGER) AS NumArticles,
        round(-9 + 12 * n.x, 6) AS AvgTone,
        n.added AS DATEADDED,
        n.url AS SOURCEURL
    ),
    n.added AS _slot,
    n.added || '.export.CSV.zip' AS _source_file,
    n.date, n.head, n.relation, n.tail, n.quad_id, n.daily_mentions
FROM numbered AS n
CROSS JOIN template AS t
LEFT JOIN cameo AS a1 ON a1.iso3 = n.head
LEFT JOIN cameo AS a2 ON a2.iso3 = n.tail
LEFT JOIN src.countries AS c1 ON c1.iso3 = n.head
LEFT JOIN src.countries AS c2 ON c2.iso3 = n.tail
LEFT JOIN src.relations AS rel ON rel.code = n.relation
ORDER BY n.date, n.quad_id, GLOBALEVENTID, _slot, _source_file
"""
QUADS = """
CREATE TABLE quads AS
SELECT q.date, q.head, q.relation, q.tail, q.quad_id, q.daily_mentions,
    count(*) AS n_records, count(DISTINCT e.GLOBALEVENTID) AS n_events,
    count(DISTINCT e.SOURCEURL) AS n_urls, q.n_docs
FROM src.quads AS q
JOIN events AS e USING (quad_id)
GROUP BY ALL
ORDER BY q.date, q.quad_id
"""
NEWS = """
CREATE TABLE news AS
SELECT *, strftime(date, '%Y-%m-%d') AS published, 'mirai' AS preset,
    CAST(length(text) // 6 AS DOUBLE) AS words,
    round(0.05 + 0.1 * u(doc_id || '/c'), 4) AS char_repetition,
    round(0.02 + 0.08 * u(doc_id || '/w'), 4) AS word_repetition,
    round(0.15 + 0.1 * u(doc_id || '/s'), 4) AS special_characters,
    round(0.3 + 0.2 * u(doc_id || '/t'), 4) AS stopwords,
    round(0.002 * u(doc_id || '/f'), 4) AS flagged_words,
    round(0.01 + 0.02 * u(doc_id || '/p'), 4) AS punctuation,
    'en' AS lang, round(0.9 + 0.1 * u(doc_id || '/l'), 4) AS lang_score
FROM src.news
ORDER BY date, doc_id
"""
LEDGER = """
WITH files AS (
    SELECT strftime(s.ts, '%Y%m%d%H%M%S') AS slot, s.ts, f.tbl, f.rows, f.size
    FROM generate_series(CAST($first AS TIMESTAMP), CAST($last AS TIMESTAMP),
        INTERVAL 15 MINUTE) AS s(ts)
    CROSS JOIN (VALUES ('export', 909, 61099), ('mentions', 3366, 123670)) AS f(tbl, rows, size)
),
drawn AS (
    SELECT *, u(slot || tbl || '/status') < $missing AS missing,
        0.7 + 0.6 * u(slot || tbl || '/rows') AS scale
    FROM files
)
SELECT slot, 'english' AS stream, tbl AS "table",
    'http://data.gdeltproject.org/gdeltv2/' || slot || '.' || tbl || '.CSV.zip' AS url,
    CAST(size * scale AS BIGINT) AS size,
    md5(slot || '.' || tbl || '.CSV.zip') AS md5,
    CASE WHEN missing THEN 'missing' ELSE 'downloaded' END AS status,
    CASE WHEN NOT missing THEN CAST(rows * scale AS BIGINT) END AS rows,
    CASE WHEN NOT missing THEN CAST(u(slot || tbl || '/rejected') < 0.01 AS BIGINT) END
        AS rejected,
    CASE WHEN missing THEN [] ELSE [strftime(ts, '%Y-%m-%d')] END AS partitions,
    CASE WHEN missing THEN 'HTTP 404' ELSE '' END AS detail
FROM drawn
ORDER BY slot, stream, "table"
"""


def data_root(workdir: Path) -> Path:
    return workdir / "release"


def template_record():
    """The fixture slot's first international record with all three places: one-row table."""
    import pyarrow.compute as pc

    from gdelt_forecast.gdelt.parse import parse_bytes

    rows = parse_bytes(TEMPLATE.read_bytes(), "export", TEMPLATE.name + ".zip").rows
    a1, a2 = rows["Actor1CountryCode"], rows["Actor2CountryCode"]
    keep = pc.and_(pc.is_valid(a1), pc.and_(pc.is_valid(a2), pc.not_equal(a1, a2)))
    for geo in ("Actor1Geo_Type", "Actor2Geo_Type", "ActionGeo_Type"):
        keep = pc.and_(keep, pc.greater(rows[geo], 0))
    return rows.filter(keep).slice(0, 1)


def split(removed: int, reasons: list[tuple[str, float]]) -> list[dict]:
    """``removed`` rows shared out by weight; the top ``TOP_REASONS``, most first, as the
    funnel lists them (the rest, and rounding, stay out of the list as in a real day)."""
    total = sum(w for _, w in reasons)
    rows = [(reason, int(removed * w / total)) for reason, w in reasons]
    rows = sorted((r for r in rows if r[1]), key=lambda r: (-r[1], r[0]))[:TOP_REASONS]
    return [{"reason": reason, "rows": n} for reason, n in rows]


def funnel_rows(bronze: dict, events: dict) -> list[dict]:
    """Seven rules a day: rows in from the day's bronze export rows, rows out of the last
    rule equal to the day's events, the removed rows split into plausible reasons."""
    rng = random.Random(bench_testset.SEED)
    zipf = [(c, 1 / (i + 1)) for i, c in enumerate(BIG_COUNTRIES)]
    reasons = {
        "same_day": [("SQLDATE after the publish day", 0.3)]
        + [
            (f"SQLDATE {d} day(s) before the publish day", 1 / i)
            for i, d in enumerate((1, 7, 30, 2, 365, 3, 14, 4, 5, 6, 10), 1)
        ],
        "earliest_url_date": [
            (f"URL already published {d} day(s) earlier", 1 / d**1.5)
            for d in range(1, URL_LOOKBACK_DAYS + 1)
        ],
        "countries": [("Actor1CountryCode missing", 0.5), ("Actor2CountryCode missing", 0.43)]
        + [
            (f"Actor{a}CountryCode {r} is a region", 0.01)
            for a in (1, 2)
            for r in ("AFR", "EUR", "WST", "NMR", "MEA", "SAS")
        ],
        "international_only": [(f"domestic ({c})", w) for c, w in zipf],
        "relation": [("EventBaseCode missing", 1.0)],
    }
    rows = []
    for day in sorted(bronze):
        rows_in, kept = bronze[day], events.get(day, 0)
        for step, (rule, share) in enumerate(RULES):
            if share is None:  # the last rule keeps exactly the day's events
                rows_out = kept
            else:
                rows_out = max(kept, round(rows_in * min(1.0, share * rng.uniform(0.98, 1.02))))
            removed = rows_in - rows_out
            if rule == "min_daily_mentions":
                top = split(
                    removed, [("fewer than 50 daily mentions", 0.9), ("no daily mentions", 0.1)]
                )
            else:
                top = split(removed, reasons.get(rule, []))
            rows.append(
                {
                    "date": day,
                    "step": step,
                    "rule": rule,
                    "enabled": True,
                    "rows_in": rows_in,
                    "rows_out": rows_out,
                    "removed": removed,
                    "top_reasons": top,
                }
            )
            rows_in = rows_out
    return rows


def build_warehouse(workdir: Path, days: int) -> dict:
    """Write the release's warehouse and ledger unless ones for these parameters exist;
    return their figures (row counts of the history window included)."""
    import duckdb
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from gdelt_forecast.contract import months
    from gdelt_forecast.gdelt import ledger
    from gdelt_forecast.ground import duck
    from gdelt_forecast.ground.config import REPO_DEFAULT, load_config
    from gdelt_forecast.ground.data_root import DataRoot
    from gdelt_forecast.ground.files import write_json
    from gdelt_forecast.warehouse import build as warehouse

    testset = bench_testset.build_warehouse(workdir, days)
    source = bench_testset.data_root(workdir) / "warehouse.duckdb"
    params = json.loads((bench_testset.data_root(workdir) / "bench.json").read_text())["params"]
    root = data_root(workdir)
    parts = root / "warehouse"
    marker = root / "bench.json"  # written last, so a half-built warehouse is never reused
    want = {"testset": params, "generator": GENERATOR, "extra": [EXTRA_URL, EXTRA_RECORD]}
    if marker.exists() and json.loads(marker.read_text())["params"] == want:
        record_database(root)  # a warehouse generated before the database had a record
        return json.loads(marker.read_text())["figures"]
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    t0 = time.perf_counter()
    last_day = START + timedelta(days=days - 1)
    tmp = root / ".bench-tables.duckdb.tmp"  # the tables the warehouse files are written from
    with duckdb.connect(str(tmp)) as con:
        con.execute("SET enable_progress_bar = false")
        con.execute(UNIFORM)
        con.execute(f"ATTACH '{source}' AS src (READ_ONLY)")
        con.register("template", template_record())
        con.execute(
            EVENTS, {"extra_url": EXTRA_URL, "extra_record": EXTRA_RECORD, "first_id": FIRST_ID}
        )
        con.unregister("template")
        con.execute(QUADS)
        con.execute(NEWS)
        for name in ("quad_docs", "countries", "cameo_countries", "relations"):
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM src.{name}")
        first_slot = START - timedelta(days=URL_LOOKBACK_DAYS)
        slots = (
            con.sql(
                LEDGER,
                params={
                    "first": first_slot.isoformat(),
                    "missing": MISSING,
                    "last": f"{last_day.isoformat()} 23:45:00",
                },
            )
            .to_arrow_table()
            .cast(ledger.SCHEMA)
        )
        con.register("slots", slots)
        bronze = dict(
            con.execute(
                "SELECT CAST(partitions[1] AS DATE) AS day, sum(rows) FROM slots"
                " WHERE \"table\" = 'export' AND status = 'downloaded' AND day >= $1 GROUP BY day",
                [START],
            ).fetchall()
        )
        events = dict(con.execute("SELECT date, count(*) FROM events GROUP BY date").fetchall())
        funnel_type = pa.struct([("reason", pa.string()), ("rows", pa.int64())])
        funnel = pa.Table.from_pylist(
            funnel_rows(bronze, events),
            pa.schema(
                [
                    ("date", pa.date32()),
                    ("step", pa.int32()),
                    ("rule", pa.string()),
                    ("enabled", pa.bool_()),
                    ("rows_in", pa.int64()),
                    ("rows_out", pa.int64()),
                    ("removed", pa.int64()),
                    ("top_reasons", pa.list_(funnel_type)),
                ]
            ),
        )
        con.register("generated", funnel)
        con.execute("CREATE TABLE funnel AS SELECT * FROM generated ORDER BY date, step")
        con.execute("DETACH src")
        check_schema(con)
        counts = {
            name: con.execute(
                f"SELECT count(*) FROM {name} WHERE date BETWEEN ? AND ?", list(HISTORY)
            ).fetchone()[0]
            for name in DATABASE
        }
        for name in ("relations", "countries"):
            counts[name] = con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
        (per_quad,) = con.execute("SELECT avg(n_records) FROM quads").fetchone()
        # As `database` keeps them: a file per table and month, and views over them.
        duck.run(con, "warehouse/quad_urls.sql", "CREATE TABLE quad_urls AS")
        index = {"format": warehouse.FORMAT, "months": {MONTH: {
            "key": "generated", "days": days, "files": warehouse.write_month(con, MONTH, parts)
        }}}  # fmt: skip
    write_json(parts / months.INDEX, index)
    warehouse.write_views(load_config(REPO_DEFAULT, data_root=root), DataRoot(root), index)
    tmp.unlink()
    (root / "bronze").mkdir()
    pq.write_table(slots, root / "bronze" / "slots.parquet", compression="zstd")
    record_database(root)
    figures = {
        **{k: testset[k] for k in ("quads", "strict", "strict_pairs", "news_mib")},
        "rows": counts,
        "records_per_quad": per_quad,
        "ledger": slots.num_rows,
        "ledger_days": (last_day - first_slot).days + 1,
        "ledger_missing": slots.filter(pc.equal(slots["status"], "missing")).num_rows,
        "warehouse_mib": sum(p.stat().st_size for p in parts.rglob("*")) / 2**20,
        "generated_s": time.perf_counter() - t0,
    }
    marker.write_text(json.dumps({"params": want, "figures": figures}))
    return figures


def check_schema(con) -> None:
    """``events`` has silver's columns and types; ``quads`` and ``news`` the warehouse's."""
    import pyarrow as pa

    from gdelt_forecast.contract.documents import DOCS
    from gdelt_forecast.gdelt.schema import EXPORT

    silver = [
        *EXPORT,
        pa.field("_slot", pa.int64()),
        pa.field("_source_file", pa.string()),
        pa.field("date", pa.date32()),
        *(pa.field(c, pa.string()) for c in ("head", "relation", "tail", "quad_id")),
        pa.field("daily_mentions", pa.int64()),
    ]
    got = con.sql("SELECT * FROM events LIMIT 0").to_arrow_table().schema
    assert [(f.name, f.type) for f in got] == [(f.name, f.type) for f in silver], got
    got = con.sql("SELECT * FROM news LIMIT 0").to_arrow_table().schema
    assert [(f.name, f.type) for f in got] == [(f.name, f.type) for f in DOCS], got
    got = con.sql("SELECT * FROM quads LIMIT 0").to_arrow_table().schema.names
    assert got[6:] == ["n_records", "n_events", "n_urls", "n_docs"], got


# --- worker: runs in its own process and reports one JSON line -----------------------------


def peak_mib() -> float:
    """This process's peak RSS so far (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def record_database(root: Path) -> None:
    """The record ``database`` writes beside the warehouse it builds (the runner's), of this
    generated one."""
    from gdelt_forecast.ground.config import REPO_DEFAULT, load_config
    from gdelt_forecast.ground.data_root import DataRoot
    from gdelt_forecast.pipeline.runner import record_whole
    from gdelt_forecast.pipeline.stages import STAGES

    cfg, database = load_config(REPO_DEFAULT, data_root=root), STAGES["database"]
    record_whole(
        database, cfg, database.fingerprint(cfg, DataRoot(root), None), "bench_release", {}
    )


def work_release(workdir: Path) -> dict:
    """The month's stages, then the release, through the runner as the command line runs
    them; the seconds of each stage and of each of the release's steps (its summary's)."""
    from gdelt_forecast.ground.config import REPO_DEFAULT, load_config
    from gdelt_forecast.pipeline.runner import run
    from gdelt_forecast.release.build import releases_dir

    cfg = load_config(REPO_DEFAULT, data_root=data_root(workdir))
    assert cfg.release.history_start is None and not cfg.release.embedding_url
    n = 1
    while (releases_dir(cfg) / f"bench.{n}").exists():
        n += 1
    rss_before = peak_mib()
    phases: dict[str, float] = {}
    t0 = time.perf_counter()
    for stage in STAGES:
        s0 = time.perf_counter()
        run(stage, cfg, MONTH)
        phases[stage] = time.perf_counter() - s0
    r0 = time.perf_counter()
    summary = run("release", cfg, MONTH, f"bench.{n}")
    seconds = time.perf_counter() - t0
    phases.update({f"release: {k}": v for k, v in summary.phases.items()})
    return {
        "seconds": seconds,
        "release_seconds": time.perf_counter() - r0,
        "phases": phases,
        "rss_before_mib": rss_before,
        "summary": summary.to_dict(),
    }


def work_verify(workdir: Path) -> dict:
    from gdelt_forecast.release.verify import verify

    releases = data_root(workdir) / "releases"
    path = releases / (releases / "LATEST").read_text(encoding="utf-8").strip()
    t0 = time.perf_counter()
    problems = verify(path)
    return {"seconds": time.perf_counter() - t0, "problems": problems, "path": str(path)}


# --- parent: measure, check, report ----------------------------------------------------------


def inspect(release: Path) -> dict:
    """Own sha256 of every Parquet file, the manifest's of the other files that do not
    name the version, and the bytes per top-level folder."""
    files = [p for p in release.rglob("*") if p.is_file()]
    sizes: dict[str, int] = {}
    for p in files:
        top = p.relative_to(release).parts[0]
        sizes[top] = sizes.get(top, 0) + p.stat().st_size
    listed = json.loads((release / "manifest.json").read_text())["files"]
    return {
        "parquet": {
            p.relative_to(release).as_posix(): sha256(p) for p in sorted(release.rglob("*.parquet"))
        },
        "other": {
            f["path"]: f["sha256"]
            for f in listed
            if not f["path"].endswith(".parquet") and f["path"] not in VERSIONED
        },
        "sizes": dict(sorted(sizes.items(), key=lambda kv: -kv[1])),
    }


def report(runs: list[dict], checked: dict, figures: dict, verified: dict) -> bool:
    rows = figures["rows"]
    print(
        f"{'run':<5}{'version':<10}{'s':>8}{'release s':>11}{'peak RSS MiB':>14}{'files':>7}"
        f"{'MB':>9}"
    )
    for i, r in enumerate(runs, 1):
        s = r["summary"]
        print(
            f"{i:<5}{s['version']:<10}{r['seconds']:>8.2f}{r['release_seconds']:>11.2f}"
            f"{r['peak_rss_mib']:>14.0f}{s['files']:>7}{s['bytes'] / 1e6:>9.1f}"
        )
    median = statistics.median(r["seconds"] for r in runs)
    peak = max(r["peak_rss_mib"] for r in runs)
    print(f"{'median':<15}{median:>8.2f}{'max ' + format(peak, '.0f'):>14}\n")
    sizes = checked["sizes"]
    print(
        "release size by folder: "
        + ", ".join(
            f"{name} {size / 1e6:,.1f} MB" if size >= 1e5 else f"{name} {size / 1e3:,.0f} kB"
            for name, size in sizes.items()
        )
        + "\n"
    )

    labels = list(dict.fromkeys(k for r in runs for k in r["phases"])) + ["other"]
    print(
        f"{'phase (s, share)':<40}"
        + "".join(f"{'run ' + str(i):>14}" for i in range(1, len(runs) + 1))
    )
    for label in labels:
        cells = []
        for r in runs:
            spent = r["phases"].get(label, 0.0)
            if label == "other":
                spent = r["seconds"] - sum(r["phases"].values())
            cells.append(f"{spent:>7.2f} {spent / r['seconds']:>5.0%}")
        print(f"{label:<40}" + "".join(f"{c:>14}" for c in cells))
    before = runs[0]["rss_before_mib"]
    print(f"(peak RSS before the stages, interpreter and imports: {before:.0f} MiB)")
    print()

    ok = True
    got = runs[-1]["summary"]["rows"]
    same_rows = all(r["summary"]["rows"] == got for r in runs)
    ok &= same_rows
    print(f"row counts the same in every run {verdict(same_rows)}")
    want = {
        **rows,
        "queries": figures["strict_pairs"],
        "subset": min(SUBSET, figures["strict_pairs"]),
    }
    for name, n in want.items():
        same = got.get(name) == n
        ok &= same
        print(f"rows {name}: release {got.get(name, 0):,}, warehouse {n:,} {verdict(same)}")
    ledger_ok = got.get("gdelt_slots") == figures["ledger"]
    ok &= ledger_ok
    print(
        f"rows gdelt_slots: release {got.get('gdelt_slots', 0):,}, ledger {figures['ledger']:,}"
        f" {verdict(ledger_ok)}"
    )
    s = runs[-1]["summary"]
    window_ok = (s["history_start"], s["history_end"]) == tuple(d.isoformat() for d in HISTORY)
    ok &= window_ok
    print(f"history: {s['history_start']}..{s['history_end']} {verdict(window_ok)}")
    problems = verified["problems"]
    ok &= not problems
    print(
        f"verify: {len(problems)} problem(s) in {verified['seconds']:.2f} s, peak RSS"
        f" {verified['peak_rss_mib']:.0f} MiB {verdict(not problems)}"
        + "".join(f"\n  {p}" for p in problems[:10])
    )
    parquet = [c["parquet"] for c in checked["runs"]]
    other = [c["other"] for c in checked["runs"]]
    same_parquet = all(p == parquet[0] for p in parquet)
    same_other = all(o == other[0] for o in other)
    ok &= same_parquet
    differ = sorted({k for p in parquet for k in p if p.get(k) != parquet[0].get(k)})
    print(
        f"byte-identical Parquet files across the {len(runs)} runs (own sha256): "
        f"{len(parquet[0])} files {verdict(same_parquet)}"
        + (f" (differ: {', '.join(differ)})" if differ else "")
    )
    differ = sorted({k for o in other for k in o if o.get(k) != other[0].get(k)})
    print(
        f"other files but {', '.join(VERSIONED)} (manifest sha256): {len(other[0])} files, "
        + ("identical" if same_other else f"differ: {', '.join(differ)}")
    )
    wall_ok, rss_ok = median < WALL_TARGET_S, peak < RSS_TARGET_MIB
    ok &= wall_ok and rss_ok
    print(
        f"median wall {median:.2f} s (target < {WALL_TARGET_S:.0f} s) {verdict(wall_ok)}; "
        f"peak RSS {peak:.0f} MiB (target < {RSS_TARGET_MIB} MiB) {verdict(rss_ok)}"
    )
    print(f"overall: {verdict(ok)}")
    return ok


def main() -> int:
    parser = bench_parser(__doc__, ("release", "verify"), "release runs; the median counts")
    parser.add_argument("--days", type=int, default=30, help="days from 2025-08-01 (max 31)")
    args = parser.parse_args()
    if args.worker == "release":
        print_with_peak_rss(work_release(args.workdir))
        return 0
    if args.worker == "verify":
        print_with_peak_rss(work_verify(args.workdir))
        return 0
    if not 1 <= args.days <= 31:
        parser.error("--days must be 1 to 31: the quads must lie in 2025-08")
    if args.repeat < 2:
        parser.error("--repeat must be at least 2: the runs' files are compared")
    args.workdir.mkdir(parents=True, exist_ok=True)
    figures = build_warehouse(args.workdir, args.days)
    rows = figures["rows"]
    print(
        f"warehouse: {figures['quads']:,} quads over {args.days} day(s) from {START},"
        f" {rows['events']:,} events ({figures['records_per_quad']:.2f} a quad),"
        f" {rows['news']:,} documents ({figures['news_mib']:.0f} MiB of text and abstracts),"
        f" {rows['quad_docs']:,} quad-document links, {rows['funnel']:,} funnel rows;"
        f" {figures['warehouse_mib']:.0f} MiB (generated in {figures['generated_s']:.1f} s)"
        f"\nledger: {figures['ledger']:,} GDELT files over {figures['ledger_days']} days"
        f" ({figures['ledger_missing']} missing); release window {HISTORY[0]}..{HISTORY[1]}\n"
    )
    releases = data_root(args.workdir) / "releases"
    shutil.rmtree(releases, ignore_errors=True)
    runs, checked = [], {"runs": []}
    for i in range(args.repeat):
        print(f"release run {i + 1}/{args.repeat}", file=sys.stderr)
        runs.append(in_fresh_process(__spec__.name, "release", args.workdir, args.days))
        checked["runs"].append(inspect(Path(runs[-1]["summary"]["path"])))
    print("verify", file=sys.stderr)
    verified = in_fresh_process(__spec__.name, "verify", args.workdir, args.days)
    checked["sizes"] = checked["runs"][-1]["sizes"]
    for r in runs[:-1]:  # keep the last release to look at
        shutil.rmtree(r["summary"]["path"])
    return 0 if report(runs, checked, figures, verified) else 1


if __name__ == "__main__":
    sys.exit(main())
