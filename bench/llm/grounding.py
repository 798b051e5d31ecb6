"""Rule 6's threshold from measurement: how much of a model-written event's wording its own
document holds, against how much another document of the month holds.

Reads a data root whose timelines were written by a model (``make demo-llm`` leaves one in
``demo-data-llm``): every answered event of ``timelines/<month>/llm_calls.parquet`` (from
the answer cache), the document it was written from (the step's document of its complex
event) and, as the events a threshold must turn down, the same texts against every other
document of the month. Prints, per threshold, the share of events their own document
grounds and the share another document would (the false support), and the events whose
own document holds the least of them.

    python -m bench.llm.grounding demo-data-llm 2025-08

The demo's month has 13 documents, so the model writes only a handful of events there.
``--pages DIR --smollm2 MODEL`` measures on more: it serves the model of ``make llm-model``
on 127.0.0.1 (vLLM's CPU build, as ``make demo-llm`` does), asks the timelines' extract
prompt (``written.extract_request``) of each of the first ``--articles`` (default 60) news
pages of scrapinghub's article-extraction-benchmark (``ground-truth.json``'s hand-checked
bodies; a checkout of that repository, not in this one), and scores every event
against its own article and against every other one. The pages carry no date, so only the
text is scored, as rule 6's first check does; their other pages are unrelated stories, so
the false support there is a floor, where the demo's month (one story's documents beside
each other) is the hard case.

    .venv-vllm/bin/python -m bench.llm.grounding \
        --pages ../article-extraction-benchmark \
        --smollm2 .venv-vllm/models/SmolLM2-135M-Instruct
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from datetime import date
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from bench.harness import REPO
from gdelt_forecast.contract.grounding import Document, support
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.timelines.complex_events import ComplexEvent
from gdelt_forecast.timelines.written import extract_request, scaffolding

THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def events(root: Path, month: str) -> list[tuple[str, str]]:
    """(doc_id, text) of every event the model answered, from its cached answers."""
    folder = root / "timelines" / month
    stories = {
        r["complex_event_id"]: r["doc_ids"]
        for r in pq.read_table(folder / "complex_events.parquet").to_pylist()
    }
    found = []
    for call in pq.read_table(folder / "llm_calls.parquet").to_pylist():
        step = call["step"]
        if call["status"] == "failed" or step == "adjust":
            continue
        cached = root / "llm_cache" / call["hash"][:2] / f"{call['hash']}.json"
        answer = json.loads(cached.read_text())["answer"]
        n = 0 if step == "extract" else int(step.split(":")[1])
        doc_id = stories[call["key"]][n]
        found += [(doc_id, e["text"]) for e in answer["events"] if e["text"].strip()]
    return found


def demo_month(root: Path, month: str) -> tuple[list[tuple[str, str]], dict[str, Document]]:
    """The events the model wrote in ``root``'s month, and the month's documents."""
    with duckdb.connect(str(root / "warehouse.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT doc_id, date, title, text FROM news").fetchall()
    return events(root, month), {d: Document(t, x, seen) for d, seen, t, x in rows}


def pages_extracted(
    pages: Path, model: Path, articles: int
) -> tuple[list[tuple[str, str]], dict[str, Document]]:
    """The events the model writes from the first ``articles`` pages' bodies, and the
    bodies. The prompt gets a body cut to ``timelines.article_chars``, as the stage's does;
    grounding reads the whole body, as the stage's does."""
    from gdelt_forecast.llm import run, smollm2
    from gdelt_forecast.llm.vllm_server import serving

    truth = json.loads((pages / "ground-truth.json").read_text(encoding="utf-8"))
    ids = sorted(truth)[:articles]
    undated = date(2025, 8, 1)  # the prompt asks for a date; nothing here scores it
    built = smollm2.build(model)
    with tempfile.TemporaryDirectory() as root:
        server_args = ("--enforce-eager", *smollm2.STRUCTURED_OUTPUTS)
        with serving(model, Path(root) / "vllm.log", built["name"], 8192, server_args) as server:
            cfg = load_config(
                REPO / "configs/demo.yaml",
                [f"llm.base_url={server.base_url}", f"llm.model={server.model}",
                 "llm.max_tokens=512", "llm.timeout_s=600", "llm.max_retries=1"],
                data_root=root,
            )  # fmt: skip
            cut = cfg.timelines.article_chars
            requests = [
                extract_request(
                    ComplexEvent(i, "", "", "", undated, undated, [
                        {"doc_id": i, "title": "", "date": undated,
                         "article": truth[i]["articleBody"][:cut]}
                    ])
                )
                for i in ids
            ]  # fmt: skip
            results = run(cfg, requests)
    failed = sum(r.answer is None for r in results)
    print(f"{len(ids)} pages asked, {failed} calls failed")
    found = [
        (r.key, e["text"]) for r in results if r.answer for e in r.answer["events"]
        if e["text"].strip()
    ]  # fmt: skip
    return found, {i: Document(None, truth[i]["articleBody"], undated) for i in ids}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_root", type=Path, nargs="?", help="a demo-llm data root")
    parser.add_argument("month", nargs="?", help="its month, YYYY-MM")
    parser.add_argument("--pages", type=Path, help="article-extraction-benchmark's folder")
    parser.add_argument("--smollm2", type=Path, help="the model folder of make llm-model")
    parser.add_argument("--articles", type=int, default=60, help="pages to ask (default 60)")
    args = parser.parse_args()
    if args.pages and args.smollm2:
        written, documents = pages_extracted(args.pages, args.smollm2, args.articles)
    elif args.data_root and args.month:
        written, documents = demo_month(args.data_root, args.month)
    else:
        parser.error("give DATA_ROOT MONTH, or --pages DIR --smollm2 MODEL")
    scaffold = scaffolding()
    own, other, echoes = [], [], 0
    for doc_id, text in written:
        score = support(text, documents[doc_id], scaffold)
        if score is None:
            echoes += 1
            continue
        own.append((score, text))
        other += [support(text, d, scaffold) for i, d in documents.items() if i != doc_id]
    print(
        f"{len(written)} model-written events, {echoes} echoes of the prompt, {len(own)} "
        f"scored against their own document and {len(other)} against another"
    )
    print(f"containment in its own document: median {statistics.median(s for s, _ in own):.2f}")
    print("threshold  own document grounds  another document would")
    for t in THRESHOLDS:
        mine = sum(s >= t for s, _ in own) / len(own)
        theirs = sum(s >= t for s in other) / len(other)
        print(f"{t:9.1f}  {mine:20.1%}  {theirs:23.1%}")
    print("least held by their own document:")
    for score, text in sorted(own)[:8]:
        print(f"  {score:.2f}  {text[:100]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
