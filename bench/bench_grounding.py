"""Rule 6's threshold from measurement: how much of a model-written event's wording its own
document holds, against how much another document of the month holds.

Reads a data root whose timelines were written by a model (``make demo-llm`` leaves one in
``demo-data-llm``): every answered event of ``timelines/<month>/llm_calls.parquet`` (from
the answer cache), the document it was written from (the step's document of its complex
event) and, as the events a threshold must turn down, the same texts against every other
document of the month. Prints, per threshold, the share of events their own document
grounds and the share another document would (the false support), and the events whose
own document holds the least of them.

    python bench/bench_grounding.py demo-data-llm 2025-08
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from gdelt_forecast.timelines.grounding import Document, support  # noqa: E402
from gdelt_forecast.timelines.written import scaffolding  # noqa: E402

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_root", type=Path)
    parser.add_argument("month")
    args = parser.parse_args()
    with duckdb.connect(str(args.data_root / "warehouse.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT doc_id, date, title, text FROM news").fetchall()
    documents = {d: Document(title, text, seen) for d, seen, title, text in rows}
    scaffold = scaffolding()
    written = events(args.data_root, args.month)
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
