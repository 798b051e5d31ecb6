"""Benchmark: build a month's test set and balanced subset from a synthetic warehouse.

It writes <workdir>/testset/warehouse.duckdb with the tables ``build_testset`` reads (as
tests/testset/test_build.py's ``warehouse()`` does): ``countries``, ``cameo_countries`` and
``relations`` from ``gdelt_forecast.reference.tables``; ``quads(date, head, relation, tail,
quad_id, daily_mentions, n_docs)`` with 2,000 distinct quads a day from 2025-08-01 (30
days: 60,000); ``news`` (the kept documents) and ``quad_docs`` (which documents are behind
which quad, n_docs of them). A seeded ``random.Random`` draws the quads with GDELT's skew:
head and tail from the 250 ISO codes with Zipf weights (1 / rank) in an order that puts
the big actors first (USA, CHN, RUS, UKR, ISR, ...), so a few pairs such as USA-CHN recur
every day; the relation from the 149 second-level CAMEO codes of ``tables.relations()``,
also Zipf, common ones first (010, 042, 043, 036, ...). Daily mentions are log-normal
(median 13, more for bigger pairs), kept documents one per 5 to 40 mentions, so about 7%
of the quads pass the strict thresholds (100 mentions, 5 documents). Each day has a pool
of documents, a third as many as its quad-document links, that its quads draw from; a
document's text is a slice (log-normal length, median 3,000 characters) of seeded
made-up words, its abstract the title and the first 300 characters. The warehouse is
reused while its marker (written last) matches the days, seed and generator version.

Each run is ``gdelt_forecast.testset.build.build_testset(cfg, "2025-08")`` with the default
config (configs/default.yaml: subset 100, 50 attempts a pick, duckdb 3GB and all cores),
in a fresh subprocess: wall seconds of the call, and peak RSS as that child's ru_maxrss
(DuckDB allocates in the same process, so it is counted). Runs: horizons [1] (the
default) and horizons [1, 7, 30]; each figure is the median-time run of --repeat (default
3). In the same run, the steps the builder calls are timed by wrapping them: the SQL
(``duck.run`` and ``duck.records``), the query rows (``_rows``), the leakage check, the
subset draw (``balanced_subset``), the balance report (``balance``), the Parquet/JSON
writes and MIRAI's relation_query.csv files (MIRAI's data_kg.csv and data_news.csv are
built from a release, not by the test set); "other" is the rest (opening the warehouse, the subset
items, the Arrow tables).

Target: wall < 10 s for each run ("seconds, not minutes"). The exit status is 1 when it
fails, or when the candidates and queries differ from the strict quads and pairs the
generator wrote.

Run: ``python -m bench.stages.testset [--days 30] [--workdir bench-data] [--repeat 3]``.
The warehouse (250 MB) takes about 5 s to generate the first time; each run writes about
a few MB under <workdir>/testset/testset/2025-08 and takes a few seconds.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
import statistics
import sys
import time
from datetime import date, timedelta
from pathlib import Path

from bench.harness import bench_parser, in_fresh_process, print_with_peak_rss, verdict

MONTH, START = "2025-08", date(2025, 8, 1)
QUADS_PER_DAY, SEED = 2_000, 20250801
MIN_MENTIONS, MIN_DOCUMENTS = 100, 5  # configs/default.yaml testset, checked by the worker
WALL_TARGET_S = 10.0
# The most reported actors first; every other ISO code follows in alphabetical order.
BIG_COUNTRIES = [
    "USA", "CHN", "RUS", "UKR", "ISR", "GBR", "IND", "IRN", "PSE", "FRA", "DEU", "JPN",
    "TUR", "PAK", "KOR", "CAN", "AUS", "SYR", "SAU", "MEX", "PRK", "EGY", "QAT", "VEN",
    "BRA", "ITA", "AFG", "LBN", "YEM", "NGA", "ZAF", "PHL", "TWN", "IRQ", "POL",
]  # fmt: skip
COMMON_RELATIONS = [  # second-level CAMEO codes
    "010", "042", "043", "036", "040", "020", "051", "046", "057", "190", "111", "112",
    "173", "061", "030", "013", "012", "041", "084", "045", "172", "193", "070", "031",
    "071", "120", "128", "130", "138", "160", "163", "175", "180", "183", "195",
]  # fmt: skip
RUNS = {"h1": [], "h1_7_30": ["testset.horizons=[1, 7, 30]"]}
PHASES = (  # (label, module, attribute) of what build_testset calls
    ("sql", "gdelt_forecast.ground.duck", "run"),
    ("sql", "gdelt_forecast.ground.duck", "records"),
    ("query rows", "gdelt_forecast.testset.build", "_rows"),
    ("leakage check", "gdelt_forecast.testset.build", "check_leakage"),
    ("subset draw", "gdelt_forecast.testset.build", "balanced_subset"),
    ("balance report", "gdelt_forecast.testset.build", "balance"),
    ("parquet/json writes", "gdelt_forecast.testset.build", "write_parquet"),
    ("parquet/json writes", "gdelt_forecast.testset.build", "_write_json"),
    ("mirai_compat queries", "gdelt_forecast.testset.mirai_compat", "write_queries"),
)


def data_root(workdir: Path) -> Path:
    return workdir / "testset"


def zipf(codes: list[str], first: list[str], s: float) -> tuple[list[str], list[float]]:
    """``codes`` with ``first`` leading (those of it present), then the rest sorted, and
    cumulative weights 1 / rank ** s."""
    ordered = [c for c in first if c in codes] + sorted(set(codes) - set(first))
    return ordered, list(_cumulative([1 / (rank + 1) ** s for rank in range(len(ordered))]))


def _cumulative(weights: list[float]):
    total = 0.0
    for w in weights:
        total += w
        yield total


def draw_month(days: int) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """``QUADS_PER_DAY`` distinct skewed quads a day with their mentions, and the day's
    documents: (quads, quad_docs, news) rows."""
    import pyarrow.compute as pc

    from gdelt_forecast.reference import tables

    countries, country_w = zipf(tables.countries()["iso3"].to_pylist(), BIG_COUNTRIES, 1.0)
    level2 = tables.relations().filter(pc.equal(tables.relations()["level"], 2))
    relations, relation_w = zipf(level2["code"].to_pylist(), COMMON_RELATIONS, 1.1)
    rank = {c: i for i, c in enumerate(countries)}
    rng = random.Random(SEED)
    vocabulary = [
        "".join(rng.choices("etaoinshrdlucmfwypvbgk", k=rng.randint(2, 9))) for _ in range(3_000)
    ]
    words = rng.choices(vocabulary, k=300_000)
    # Paragraphs of 40 to 120 words; a document's text is a slice of this.
    blob, at = [], 0
    while at < len(words):
        step = rng.randint(40, 120)
        blob.append(" ".join(words[at : at + step]).capitalize() + ".")
        at += step
    blob = "\n".join(blob)
    quads, quad_docs, news = [], [], []
    for d in range(days):
        day, drawn = START + timedelta(days=d), {}
        while len(drawn) < QUADS_PER_DAY:
            head, tail = rng.choices(countries, cum_weights=country_w, k=2)
            relation = rng.choices(relations, cum_weights=relation_w)[0]
            if head == tail or (head, relation, tail) in drawn:
                continue
            # Bigger pairs draw more mentions: the median falls from ~60 for USA-CHN to 13.
            boost = 1.5 * math.exp(-(rank[head] + rank[tail]) / 10)
            mentions = max(1, round(rng.lognormvariate(math.log(13) + boost, 1.3)))
            drawn[head, relation, tail] = (mentions, max(1, round(mentions / rng.uniform(5, 40))))
        # The day's documents, each behind 3 of its quads on average.
        pool = max(max(n for _, n in drawn.values()), sum(n for _, n in drawn.values()) // 3)
        ids = [f"{rng.getrandbits(80):020x}" for _ in range(pool)]
        for doc_id in ids:
            length = min(int(rng.lognormvariate(math.log(3_000), 0.6)), 30_000)
            start = rng.randrange(len(blob) - length)
            text, title = blob[start : start + length], " ".join(rng.choices(vocabulary, k=8))
            url = f"https://news{rng.randrange(500)}.example.org/{day}/{doc_id}"
            md5 = hashlib.md5(url.encode()).hexdigest()
            news.append((doc_id, url, md5, day, title, text, f"{title}\n{text[:300]}"))
        for (head, relation, tail), (mentions, n_docs) in drawn.items():
            quad_id = f"{day}_{head}_{relation}_{tail}"
            quads.append((day, head, relation, tail, quad_id, mentions, n_docs))
            quad_docs.extend((quad_id, day, ids[i]) for i in rng.sample(range(pool), n_docs))
    return quads, quad_docs, news


def build_warehouse(workdir: Path, days: int) -> dict:
    """Write the warehouse unless one for these days and seed exists; return its figures."""
    import duckdb
    import pyarrow as pa

    from gdelt_forecast.reference import tables

    root = data_root(workdir)
    marker = root / "bench.json"  # written last, so a half-built warehouse is never reused
    want = {"days": days, "quads_per_day": QUADS_PER_DAY, "seed": SEED, "generator": 2}
    if marker.exists() and json.loads(marker.read_text())["params"] == want:
        return json.loads(marker.read_text())["figures"]
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    quads, quad_docs, news = draw_month(days)
    date, text = pa.date32(), pa.string()
    schemas = {
        "quads": [
            ("date", date),
            ("head", text),
            ("relation", text),
            ("tail", text),
            ("quad_id", text),
            ("daily_mentions", pa.int64()),
            ("n_docs", pa.int64()),
        ],
        "quad_docs": [("quad_id", text), ("date", date), ("doc_id", text)],
        "news": [
            ("doc_id", text),
            ("url", text),
            ("url_md5", text),
            ("date", date),
            ("title", text),
            ("text", text),
            ("abstract", text),
        ],
    }
    with duckdb.connect(str(root / "warehouse.duckdb")) as con:
        for name, rows in (("quads", quads), ("quad_docs", quad_docs), ("news", news)):
            names, types = zip(*schemas[name], strict=True)
            columns = zip(*rows, strict=True)
            arrays = [pa.array(c, t) for c, t in zip(columns, types, strict=True)]
            con.register("generated", pa.Table.from_arrays(arrays, names=list(names)))
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM generated ORDER BY date")
            con.unregister("generated")
        for name in ("countries", "cameo_countries", "relations"):
            con.register("reference", getattr(tables, name)())
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM reference")
            con.unregister("reference")
    strict = [q for q in quads if q[5] >= MIN_MENTIONS and q[6] >= MIN_DOCUMENTS]
    top = {}
    for q in quads:
        top[f"{q[1]}-{q[3]}"] = top.get(f"{q[1]}-{q[3]}", 0) + 1
    figures = {
        "quads": len(quads),
        "pair_days": len({(q[0], q[1], q[3]) for q in quads}),
        "strict": len(strict),
        "strict_pairs": len({(q[0], q[1], q[3]) for q in strict}),
        "quad_docs": len(quad_docs),
        "news": len(news),
        "news_mib": sum(len(n[5]) + len(n[6]) for n in news) / 2**20,
        "top_pairs": sorted(top.items(), key=lambda kv: -kv[1])[:5],
        "warehouse_mib": (root / "warehouse.duckdb").stat().st_size / 2**20,
    }
    marker.write_text(json.dumps({"params": want, "figures": figures}))
    return figures


# --- worker: runs in its own process and reports one JSON line -----------------------------


def timed(phases: dict[str, float], label: str, fn, active: set[str] = set()):  # noqa: B006
    """``fn`` adding its time to ``phases[label]``, once when calls nest (``duck.records``
    calls ``duck.run``)."""

    def wrapper(*args, **kwargs):
        if label in active:
            return fn(*args, **kwargs)
        active.add(label)
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            phases[label] = phases.get(label, 0.0) + time.perf_counter() - t0
            active.discard(label)

    return wrapper


def work(workdir: Path, run: str) -> dict:
    import importlib

    from gdelt_forecast.ground.config import REPO_DEFAULT, load_config
    from gdelt_forecast.testset.build import build_testset

    cfg = load_config(REPO_DEFAULT, overrides=RUNS[run], data_root=data_root(workdir))
    assert (cfg.testset.min_daily_mentions, cfg.testset.min_documents) == (
        MIN_MENTIONS,
        MIN_DOCUMENTS,
    ), "the default thresholds changed: update MIN_MENTIONS / MIN_DOCUMENTS"
    phases: dict[str, float] = {}
    for label, module, name in PHASES:
        mod = importlib.import_module(module)
        setattr(mod, name, timed(phases, label, getattr(mod, name)))
    t0 = time.perf_counter()
    summary = build_testset(cfg, MONTH)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "phases": phases, "summary": summary.to_dict()}


# --- report ----------------------------------------------------------------------------------


def report(results: dict[str, dict], figures: dict) -> bool:
    print(
        f"{'run':<10}{'horizons':<12}{'candidates':>11}{'queries':>9}{'rows':>8}{'subset':>8}"
        f"{'s':>7}{'peak RSS MiB':>14}"
    )
    for run, r in results.items():
        s = r["summary"]
        horizons = ",".join(map(str, s["horizons"]))
        print(
            f"{run:<10}{horizons:<12}{s['candidates']:>11,}{s['queries']:>9,}{s['rows']:>8,}"
            f"{s['subset']:>8}{r['seconds']:>7.2f}{r['peak_rss_mib']:>14.0f}"
        )
    print()
    labels = list(dict.fromkeys(label for label, _, _ in PHASES)) + ["other"]
    print(f"{'step (s, share)':<22}" + "".join(f"{run:>16}" for run in results))
    for label in labels:
        cells = []
        for r in results.values():
            spent = r["phases"].get(label, 0.0)
            if label == "other":
                spent = r["seconds"] - sum(r["phases"].values())
            cells.append(f"{spent:>9.2f} {spent / r['seconds']:>5.0%}")
        print(f"{label:<22}" + "".join(f"{c:>16}" for c in cells))
    print()
    ok = True
    for run, r in results.items():
        s = r["summary"]
        count_ok = s["candidates"] == figures["strict"] and s["queries"] == figures["strict_pairs"]
        wall_ok = r["seconds"] < WALL_TARGET_S
        ok &= count_ok and wall_ok
        print(
            f"{run}: candidates and queries = strict quads and pairs written"
            f" ({figures['strict']:,}, {figures['strict_pairs']:,}) {verdict(count_ok)};"
            f" wall {r['seconds']:.2f} s (target < {WALL_TARGET_S:.0f} s) {verdict(wall_ok)}"
        )
    print(f"overall: {verdict(ok)}")
    return ok


def main() -> int:
    parser = bench_parser(__doc__, RUNS, "runs per case; the median counts")
    parser.add_argument("--days", type=int, default=30, help="days from 2025-08-01 (max 31)")
    args = parser.parse_args()
    if args.worker:
        print_with_peak_rss(work(args.workdir, args.worker))
        return 0
    if not 1 <= args.days <= 31:
        parser.error("--days must be 1 to 31: the quads must lie in 2025-08")
    args.workdir.mkdir(parents=True, exist_ok=True)
    figures = build_warehouse(args.workdir, args.days)
    top = ", ".join(f"{pair} {n}" for pair, n in figures["top_pairs"])
    print(
        f"warehouse: {figures['quads']:,} quads over {args.days} day(s) from {START},"
        f" {figures['pair_days']:,} (date, head, tail); strict (>= {MIN_MENTIONS} mentions,"
        f" >= {MIN_DOCUMENTS} documents): {figures['strict']:,} quads"
        f" ({figures['strict'] / figures['quads']:.1%}) in {figures['strict_pairs']:,} pairs;"
        f" {figures['news']:,} documents ({figures['news_mib']:.0f} MiB of text and abstracts),"
        f" {figures['quad_docs']:,} quad-document links; {figures['warehouse_mib']:.0f} MiB"
        f"\nmost quads: {top}\n"
    )
    results = {}
    for run in RUNS:
        runs = []
        for i in range(args.repeat):
            print(f"measuring {run}, run {i + 1}/{args.repeat}", file=sys.stderr)
            runs.append(in_fresh_process(__spec__.name, run, args.workdir, args.days))
        median = statistics.median_low([r["seconds"] for r in runs])
        results[run] = next(r for r in runs if r["seconds"] == median)
    return 0 if report(results, figures) else 1


if __name__ == "__main__":
    sys.exit(main())
