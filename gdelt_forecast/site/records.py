"""A release's records: MIRAI's queries per split (filtered by country pair, relation and
horizon in the page), and one page per story (complex event) with its timeline, the documents
behind it and every OpenForecast and EV2 record built on it; lists of the records per task,
a page at a time, so that a month of real volume opens fast."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from gdelt_forecast.contract.names import REASONING, SPLITS
from gdelt_forecast.contract.names import TASKS as OPENFORECAST
from gdelt_forecast.ground.parquet_io import read_rows
from gdelt_forecast.site import graph
from gdelt_forecast.site.render import Pages, slug

QUERY_SPLITS = {"test": "testset/queries.parquet", "subset": "testset/subset.parquet"}
NEWS_COLUMNS = ["doc_id", "url", "date", "title"]  # not the text: a month's is gigabytes


def story_page(version: str, complex_event_id: str) -> str:
    return f"{version}/stories/{slug(complex_event_id)}.html"


def write(pages: Pages, release, page_size: int) -> int:
    """Every record page of ``release``; the number of stories."""
    folder, version = release.folder, release.version
    relations = {
        r["code"]: r["name"]
        for r in pq.read_table(folder / "reference/relations.parquet").to_pylist()
    }
    for split, path in QUERY_SPLITS.items():
        _write_queries(pages, version, split, read_rows(folder / path), relations, page_size)
    stories = read_rows(folder / "timelines/complex_events.parquet")
    wanted = pa.array(sorted({d for story in stories for d in story["doc_ids"]}), pa.string())
    news = {
        d["doc_id"]: d
        for d in ds.dataset(sorted(folder.glob("news/*.parquet")))
        .to_table(columns=NEWS_COLUMNS, filter=pc.field("doc_id").isin(wanted))
        .to_pylist()
    }  # the stories' documents only, of the history's months
    events = defaultdict(list)
    for event in read_rows(folder / "timelines/timelines.parquet"):
        events[event["complex_event_id"]].append(event)
    lists = _task_records(folder)
    records = defaultdict(list)  # complex event -> its records, OpenForecast's then EV2's
    for rows in lists.values():
        for row in rows:
            records[row["complex_event_id"]].append(row)
    for story in stories:
        ce = story["complex_event_id"]
        unknown = {"title": None, "url": None, "date": None}
        pages.write(
            story_page(version, ce), "story.html", release=release, story=story,
            events=sorted(events[ce], key=lambda e: e["seq"]), records=records[ce],
            documents=[news.get(d, {"doc_id": d, **unknown}) for d in story["doc_ids"]],
            options=options,
        )  # fmt: skip
    _write_lists(pages, release, stories, lists, page_size)
    return len(stories)


def _task_records(folder: Path) -> dict[str, list[dict]]:
    """Each list's records: OpenForecast's per task and split, EV2's per task (each with its
    graph laid out)."""
    lists = {
        f"{task}-{split}": read_rows(folder / f"tasks/{task}/{split}.parquet")
        for task in OPENFORECAST
        for split in SPLITS
    }
    for task in REASONING:
        parts = sorted((folder / "reasoning" / task).glob("*.parquet"))
        lists[task] = [r | {"graph": graph.layout(r)} for p in parts for r in read_rows(p)]
    return lists


def _write_queries(pages: Pages, version, split, rows, relations, page_size: int) -> None:
    """A split's page shows its first ``page_size`` queries; its script filters and pages
    through all of them, from a data file beside it (a month has thousands: one table of
    them all would open too slowly)."""
    for row in rows:
        row["relations"] = [(code, relations.get(code, "?")) for code in row["answer_list"]]
    pages.data(f"{version}/queries/{split}.js", {
        "page_size": page_size,
        "relations": {c: name for c, name in relations.items()
                      if any(c in r["answer_list"] for r in rows)},
        "rows": [[r["query_id"], r["date"], r["horizon"], r["cutoff"], r["subject"],
                  r["subject_name"], r["object"], r["object_name"], r["answer_list"],
                  r["daily_mentions"]] for r in rows],
    })  # fmt: skip
    pages.write(
        f"{version}/queries/{split}.html", "queries.html", version=version, split=split,
        queries=rows[:page_size], total=len(rows), horizons=sorted({r["horizon"] for r in rows}),
        countries=sorted({r[k] for r in rows for k in ("subject", "object")}),
    )  # fmt: skip


def _write_lists(pages: Pages, release, stories, lists, page_size: int) -> None:
    """The records index, the stories a page at a time, each task's records a page at a
    time; every row links to its story's page, at the record."""
    version = release.version
    base = f"{version}/records"
    named = {"stories": stories, **lists}
    counts = {name: len(rows) for name, rows in named.items()}
    pages.write(f"{base}/index.html", "records.html", release=release, counts=counts,
                openforecast=OPENFORECAST, splits=SPLITS, reasoning=REASONING)  # fmt: skip
    for name, rows in named.items():
        chunks = [rows[i : i + page_size] for i in range(0, len(rows), page_size)] or [[]]
        for n, chunk in enumerate(chunks, 1):
            pager = {
                "n": n,
                "of": len(chunks),
                "prev": f"{name}-{n - 1}.html" if n > 1 else None,
                "next": f"{name}-{n + 1}.html" if n < len(chunks) else None,
            }
            pages.write(
                f"{base}/{name}-{n}.html", "record_list.html", release=release, name=name,
                rows=chunk, page=pager, total=len(rows), first=(n - 1) * page_size,
                story=lambda ce: f"../stories/{slug(ce)}.html",
            )  # fmt: skip


def options(record: dict) -> list[tuple[str, str]]:
    """A multiple-choice record's options as (letter, text), an EV2 event named with its text;
    VQA's one statement as ('', text)."""
    candidates = record.get("candidates") or []
    if record["task"] in REASONING:
        texts = {e["event_id"]: e["text"] for e in record["events"]}
        candidates = [f"{c}: {texts[c]}" if c in texts else c for c in candidates]
    elif record["task"] not in ("MCNC", "MCAC"):
        return [("", c) for c in candidates]
    return [(chr(ord("A") + i), c) for i, c in enumerate(candidates)]
