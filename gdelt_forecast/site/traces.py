"""Agent traces, as MIRAI's site shows its trajectories: a run's page lists its queries with
their end state and score, a query's page its steps (thought, tool and arguments, observation,
state, tokens) sample by sample, beside the query and its answer."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from gdelt_forecast.ground.parquet_io import read_rows
from gdelt_forecast.scoring.answers import parse_prediction
from gdelt_forecast.scoring.mirai import score_query
from gdelt_forecast.site.records import QUERY_SPLITS
from gdelt_forecast.site.render import Pages, slug


def runs(agents: Path) -> list[Path]:
    """The run folders of a release under ``agents/<release>/`` that hold their steps."""
    if not agents.is_dir():
        return []
    return sorted(p for p in agents.iterdir() if (p / "run.json").is_file())


def write(pages: Pages, release, folder: Path) -> None:
    meta = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    base = f"{release.version}/runs/{slug(meta['run'])}"
    gold = {
        q["query_id"]: q
        for q in pq.read_table(release.folder / QUERY_SPLITS[meta["split"]]).to_pylist()
    }
    queries = read_rows(folder / "queries.parquet")
    steps = defaultdict(list)
    for step in read_rows(folder / "steps.parquet"):
        steps[step["query_id"], step["sample"]].append(step)
    for q in queries:
        q["page"] = f"{slug(q['query_id'])}.html"
        q["scores"] = score_query(json.loads(gold[q["query_id"]]["answer"]),
                                  parse_prediction(q["answer"]) or {})  # fmt: skip
    pages.write(f"{base}/index.html", "run.html", release=release, run=meta, queries=queries)
    by_query = defaultdict(list)
    for q in queries:
        by_query[q["query_id"]].append(q)
    for query_id, samples in by_query.items():
        pages.write(
            f"{base}/{samples[0]['page']}", "trace.html", release=release, run=meta,
            query=gold[query_id],
            samples=[(s, [_step(x) for x in steps[query_id, s["sample"]]]) for s in samples],
        )  # fmt: skip


def _step(step: dict) -> dict:
    """A step with its arguments pretty where they are JSON, and a code action's code apart."""
    text = step["arguments"]
    try:
        args = json.loads(text) if text else None
    except (ValueError, RecursionError):  # a model's arguments, as it wrote them
        return {**step, "code": None, "pretty": text}
    if isinstance(args, dict) and set(args) == {"code"} and isinstance(args["code"], str):
        return {**step, "code": args["code"], "pretty": None}
    pretty = json.dumps(args, indent=2, ensure_ascii=False) if args is not None else None
    return {**step, "code": None, "pretty": pretty}
