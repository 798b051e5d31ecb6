"""The audit of bench/month/run.py (issue 25): nothing a month's run was given is lost
without a count. Each check reads the data root's own files (and the mirror the run was
served) and says what it counted; ``audit`` gives every check and ``ok``.

- ``ingest``: every file the mirror served has its ledger row (``bronze/slots.parquet``),
  whose rows and rejects add up to the file's lines; listed files the mirror did not serve
  are ``missing``, those it served broken ``corrupt``;
- ``funnel``: each day's normalize funnel chains (a rule's rows in are the previous rule's
  rows out, less what it removed), starts at the day's bronze events and ends at its silver
  events;
- ``urls``: every source URL of the silver events is a kept document or an exclusion with
  its reason, and, where pages were fetched, has its row in the fetch ledger;
- ``pages``: every fetched page is a kept document or a document-level exclusion;
- ``chain`` (given a release): every silver event of the release's month is counted in one
  of its quads of that month (their ``n_records`` add up to the silver rows), each test
  query's answers are relations of the quads of its day and pair (those the test set's
  thresholds kept), and the queries are those the test set's record counted, out of its
  candidates.
"""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from datetime import date
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq


def _table(path: Path, columns: list[str]):
    # No hive partitioning: the partition key `date` is also a column of these tables.
    return ds.dataset(path, format="parquet").to_table(columns=columns)


def _rows_per_day(folder: Path) -> Counter:
    """Rows per ``date=<day>`` partition, from the files' footers."""
    rows: Counter = Counter()
    for part in folder.glob("date=*/*.parquet"):
        rows[date.fromisoformat(part.parent.name.removeprefix("date="))] += pq.read_metadata(
            part
        ).num_rows
    return rows


def _lines(path: Path) -> int:
    with zipfile.ZipFile(path) as zf:
        return sum(zf.read(name).count(b"\n") for name in zf.namelist())


def ingest(mirror: Path, root: Path, missing: list[str], corrupt: list[str]) -> dict:
    ledger = {Path(r["url"]).name: r for r in pq.read_table(root / "bronze/slots.parquet")
              .to_pylist()}  # fmt: skip
    listed = [line.split()[2].rsplit("/", 1)[1]
              for line in (mirror / "masterfilelist.txt").read_text().splitlines()]  # fmt: skip
    wrong = []
    for name in listed:
        row = ledger.get(name)
        want = "missing" if name in missing else "corrupt" if name in corrupt else "ok"
        if row is None:
            wrong.append(f"{name}: no ledger row")
        elif want != "ok" and row["status"] != want:
            wrong.append(f"{name}: {row['status']}, not {want}")
        elif want == "ok" and row["rows"] + row["rejected"] != _lines(mirror / name):
            wrong.append(f"{name}: {row['rows']} rows + {row['rejected']} rejects != its lines")
    served = [n for n in listed if n not in missing and n not in corrupt]
    return {"ok": not wrong, "files": len(listed), "served": len(served),
            "lines": sum(_lines(mirror / n) for n in served), "problems": wrong[:20]}  # fmt: skip


def funnel(root: Path) -> dict:
    steps = _table(root / "silver/funnel", ["date", "step", "rows_in", "rows_out", "removed"])
    bronze, silver = _rows_per_day(root / "bronze/events"), _rows_per_day(root / "silver/events")
    wrong = []
    days = sorted(set(steps["date"].to_pylist()))
    for day in days:
        rows = sorted((r for r in steps.filter(pc.equal(steps["date"], day)).to_pylist()),
                      key=lambda r: r["step"])  # fmt: skip
        for before, rule in zip(rows, rows[1:], strict=False):
            if rule["rows_in"] != before["rows_out"]:
                wrong.append(f"{day} step {rule['step']}: {rule['rows_in']} in, "
                             f"{before['rows_out']} out of the step before")  # fmt: skip
        for rule in rows:
            if rule["rows_in"] - rule["removed"] != rule["rows_out"]:
                wrong.append(f"{day} step {rule['step']}: in - removed != out")
        if rows[0]["rows_in"] != bronze[day] or rows[-1]["rows_out"] != silver[day]:
            says = f"{rows[0]['rows_in']} and {rows[-1]['rows_out']}"
            wrong.append(f"{day}: {bronze[day]} bronze, {silver[day]} silver; funnel: {says}")
    return {"ok": not wrong, "days": len(days), "bronze_events": sum(bronze.values()),
            "silver_events": sum(silver.values()), "problems": wrong[:20]}  # fmt: skip


def urls(root: Path) -> dict:
    """Every source URL kept or excluded with its reason, and in the fetch ledger; each fetch
    outcome counted (``fetch``), and each URL of a host cut short (``host_down``) excluded
    for that reason, not lost."""
    wanted = set(_table(root / "silver/events", ["SOURCEURL"])["SOURCEURL"].to_pylist())
    kept = set(_table(root / "articles/docs", ["url"])["url"].to_pylist())
    excl = _table(root / "articles/exclusions", ["url", "filter", "value"]).to_pylist()
    excluded = {e["url"] for e in excl}
    ledger_path = root / "articles/fetch_ledger.parquet"
    ledger = None
    if ledger_path.exists():
        rows = pq.read_table(ledger_path, columns=["url", "status"]).to_pylist()
        ledger = {r["url"]: r["status"] for r in rows}
    lost = sorted(wanted - kept - excluded)
    unledgered = sorted(wanted - set(ledger)) if ledger is not None else []
    down = {u for u in wanted if (ledger or {}).get(u) == "host_down"}
    down_excluded = {e["url"] for e in excl if e["filter"] == "fetch" and e["value"] == "host_down"}
    return {"ok": not lost and not unledgered and down == down_excluded, "urls": len(wanted),
            "kept": len(wanted & kept), "excluded": len((wanted & excluded) - kept),
            "fetch": dict(Counter(ledger[u] for u in wanted if u in (ledger or {}))),
            "host_down": len(down), "host_down_not_excluded": sorted(down - down_excluded)[:20],
            "lost": lost[:20], "not_in_ledger": unledgered[:20]}  # fmt: skip


def pages(root: Path) -> dict:
    ledger_path = root / "articles/fetch_ledger.parquet"
    if not ledger_path.exists():  # pages read from a web archive: `urls` covers them
        return {"ok": True, "fetched": 0}
    ledger = pq.read_table(ledger_path, columns=["url", "status"])
    fetched = set(ledger.filter(pc.equal(ledger["status"], "fetched"))["url"].to_pylist())
    kept = set(_table(root / "articles/docs", ["url"])["url"].to_pylist())
    excl = _table(root / "articles/exclusions", ["url", "level"])
    documents = set(excl.filter(pc.equal(excl["level"], "document"))["url"].to_pylist())
    lost = sorted(fetched - kept - documents)
    return {"ok": not lost, "fetched": len(fetched), "lost": lost[:20]}


def chain(root: Path, release: Path, month: str) -> dict:
    events = _table(root / "silver/events", ["date"])
    in_month = pc.starts_with(pc.cast(events["date"], "string"), month)
    silver = pc.sum(pc.cast(in_month, "int64")).as_py()
    quads = pq.read_table(release / "quads").to_pylist()
    relations: dict = {}
    for q in quads:
        relations.setdefault((q["date"], q["head"], q["tail"]), set()).add(q["relation"])
    queries = pq.read_table(release / "testset/queries.parquet").to_pylist()
    wrong = [f"{q['query_id']}: answers {q['answer_list']}, quads {sorted(relations.get(k, []))}"
             for q in queries
             if not q["answer_list"] or not set(q["answer_list"]) <= relations.get(
                 k := (q["date"], q["subject"], q["object"]), set())]  # fmt: skip
    record = json.loads((root / "testset" / month / "_record.json").read_text())["summary"]
    in_quads = sum(q["n_records"] for q in quads if q["date"].isoformat().startswith(month))
    if in_quads != silver:
        wrong.append(f"{silver} silver events of {month}, {in_quads} counted in quads")
    if len(queries) != record["queries"] or record["queries"] > record["candidates"]:
        wrong.append(f"{len(queries)} queries released, the record says {record['queries']} "
                     f"of {record['candidates']} candidates")  # fmt: skip
    return {"ok": not wrong, "silver_events": silver, "quads": len(quads),
            "pairs": len(relations), "candidates": record["candidates"],
            "queries": len(queries), "problems": wrong[:20]}  # fmt: skip


def audit(mirror: Path, root: Path, missing: list[str], corrupt: list[str],
          release: Path | None = None, month: str | None = None) -> dict:  # fmt: skip
    checks = {
        "ingest": ingest(mirror, root, missing, corrupt),
        "funnel": funnel(root),
        "urls": urls(root),
        "pages": pages(root),
    }
    if release is not None and month is not None:
        checks["chain"] = chain(root, release, month)
    return {"ok": all(c["ok"] for c in checks.values()), **checks}
