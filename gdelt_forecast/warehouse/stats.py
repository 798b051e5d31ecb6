"""``gdelt-forecast stats``: where a date range's data went, and what it holds, at a glance."""

from __future__ import annotations

from datetime import date

from gdelt_forecast.ground import duck
from gdelt_forecast.ground.config import Config


def stats(cfg: Config, first: date, last: date, top: int = 10) -> dict:
    params = {"first_date": first, "last_date": last, "top": top}
    with duck.open_warehouse(cfg) as con:
        return {
            "first_day": first.isoformat(),
            "last_day": last.isoformat(),
            "funnel": duck.records(con, "stats/funnel.sql", **params),
            "relations": duck.records(con, "stats/top_relations.sql", **params),
            "pairs": duck.records(con, "stats/top_pairs.sql", **params),
        }


def render(report: dict) -> str:
    lines = [f"funnel {report['first_day']}..{report['last_day']}"]
    lines.append(f"  {'step':<20}{'in':>12}{'out':>12}{'removed':>12}  top reasons")
    for row in report["funnel"]:
        rule = row["rule"] if row["enabled"] else f"{row['rule']} (off)"
        reasons = "; ".join(f"{r['reason']} ({r['rows']:,})" for r in row["top_reasons"][:3])
        lines.append(
            f"  {rule:<20}{row['rows_in']:>12,}{row['rows_out']:>12,}{row['removed']:>12,}"
            f"  {reasons}"
        )
    lines.append("top relations (quads, records)")
    for row in report["relations"]:
        lines.append(
            f"  {row['relation']} {row['name'] or '':<45}{row['quads']:>8,}{row['records']:>10,}"
        )
    lines.append("top country pairs (quads, relations, records)")
    for row in report["pairs"]:
        pair = f"{row['head']} -> {row['tail']}"
        lines.append(f"  {pair:<12}{row['quads']:>8,}{row['relations']:>6,}{row['records']:>10,}")
    return "\n".join(lines)
