"""An EV2 record's context graph, laid out for an SVG: its events in their order along a line,
each context relation an arc from head to tail with the relation's name, the queried events
marked and, for a relation question, a dashed arc with "?" between them.

Written by hand: the graphs are chains of a few events read left to right, which a line and
arcs draw better than a general graph-layout library would, and the page must not load one.
"""

from __future__ import annotations

STEP, MARGIN, BASE = 130, 60, 40  # px between events, at the sides, below the tallest arc


def layout(record: dict) -> dict:
    """Positions for ``record``'s events in its context and question, and the arcs between
    them; ``label`` says the same in words (the drawing's text alternative)."""
    order = [e["event_id"] for e in record["events"]]
    queried = list(record["queried"])
    shown = [e for e in order if e in set(record["context"]) | set(queried)]
    x = {event: MARGIN + i * STEP for i, event in enumerate(shown)}
    arcs = [(r["head"], r["tail"], r["relation"], False) for r in record["context_relations"]]
    if record["task"].endswith("CRR") and len(queried) == 2:
        arcs.append((queried[0], queried[1], "?", True))
    arcs = [a for a in arcs if a[0] in x and a[1] in x]
    top = max((abs(x[h] - x[t]) // 4 for h, t, _, _ in arcs), default=0) + BASE
    y = top + 20
    drawn = []
    for head, tail, relation, asked in arcs:
        left, right = sorted((x[head], x[tail]))
        lift = (right - left) // 4 + 12
        mid = (left + right) // 2
        drawn.append({
            "d": f"M{left},{y - 14} Q{mid},{y - 14 - 2 * lift} {right},{y - 14}",
            "label": relation, "lx": mid, "ly": y - 18 - lift, "asked": asked,
        })  # fmt: skip
    words = [f"{h} {rel} {t}" for h, t, rel, asked in arcs if not asked]
    if queried:
        words.append(f"queried: {', '.join(queried)}")
    return {
        "width": 2 * MARGIN + STEP * max(len(shown) - 1, 0),
        "height": y + 40,
        "nodes": [{"id": e, "x": x[e], "y": y, "queried": e in queried} for e in shown],
        "arcs": drawn,
        "label": "Context graph: " + ("; ".join(words) or "no relations"),
    }
