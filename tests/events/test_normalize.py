"""MIRAI normalization on the real 2025-08-07 22:00 slot: each rule, the funnel, re-runs.

Rows the real slot lacks (a ROM actor, a root-only code, a URL published again the next
day) are made by changing one field of a real row.
"""

from collections import defaultdict
from datetime import date

import pyarrow.parquet as pq
import pytest

from gdelt_forecast.events.normalize import RULES, NormalizeError, kept_events, normalize
from gdelt_forecast.ground.config import load_config
from tests.conftest import EXPORT_CSV, MENTIONS_CSV, SLOT, write_bronze

DAY = date(2025, 8, 7)


def run(root, *overrides, first=DAY, last=DAY):
    return normalize(load_config(None, list(overrides), root), first, last)


def silver(root, day=DAY):
    return pq.read_table(root / f"silver/events/date={day}/part-0.parquet")


def funnel(root, day=DAY):
    return pq.read_table(root / f"silver/funnel/date={day}/part-0.parquet").to_pylist()


def kept_ids(root, day=DAY):
    return set(silver(root, day)["GLOBALEVENTID"].to_pylist())


def export_lines():
    return EXPORT_CSV.read_bytes().split(b"\n")[:-1]


def edited(lines, event_id: int, field: int, value: bytes) -> list[bytes]:
    """The real lines with one field (0-based) of one event changed."""
    out = []
    for line in lines:
        fields = line.split(b"\t")
        if fields[0] == str(event_id).encode():
            fields[field] = value
        out.append(b"\t".join(fields))
    return out


def test_funnel_adds_up_and_ends_in_silver(real_day):
    summary = run(real_day)
    rows = funnel(real_day)
    assert [r["rule"] for r in rows] == ["bronze", *(rule for rule, _, _ in RULES)]
    assert rows[0]["rows_in"] == rows[0]["rows_out"] == 909
    for before, after in zip(rows, rows[1:], strict=False):
        assert after["rows_in"] == before["rows_out"]
    for row in rows:
        assert row["rows_in"] - row["rows_out"] == row["removed"]
        assert sum(r["rows"] for r in row["top_reasons"]) <= row["removed"]
    assert rows[-1]["rows_out"] == silver(real_day).num_rows == summary.records_kept
    assert summary.records_in == 909
    assert sum(summary.removed.values()) + summary.records_kept == 909
    same_day = rows[1]
    assert same_day["removed"] == 14
    assert {"reason": "SQLDATE 7 day(s) before the publish day", "rows": 8} in same_day[
        "top_reasons"
    ]


def test_each_rule_on_hand_checked_rows(tmp_path):
    root = tmp_path / "data"
    lines = edited(export_lines(), 1256323241, 7, b"ROM")  # GRC -> ROM (Romania's CAMEO code)
    lines = edited(lines, 1256323242, 27, b"19")  # EventBaseCode 193 -> root-only 19
    write_bronze(root, SLOT, "export", b"\n".join(lines) + b"\n")
    write_bronze(root, SLOT, "mentions", MENTIONS_CSV.read_bytes())

    run(root, "events.min_daily_mentions=0")
    rows = {r["GLOBALEVENTID"]: r for r in silver(root).to_pylist()}
    romania = rows[1256323241]
    assert (romania["head"], romania["relation"], romania["tail"]) == ("ROU", "046", "USA")
    assert romania["quad_id"] == "2025-08-07_ROU_046_USA"
    assert romania["Actor1CountryCode"] == "ROM"  # the GDELT row itself is kept as it was
    assert 1256323242 not in rows  # root-only code
    assert 1256322778 not in rows  # SQLDATE 2025-07-31, published 2025-08-07
    assert 1256323136 not in rows  # FRA -> FRA, domestic
    assert 1256322863 not in rows  # AFR (a region) -> TUR
    reasons = {r["rule"]: r["top_reasons"] for r in funnel(root)}
    assert {"reason": "EventBaseCode 19 is not a second-level CAMEO code", "rows": 1} in reasons[
        "relation"
    ]
    assert {"reason": "Actor1CountryCode AFR is a region", "rows": 3} in reasons["countries"]
    assert {"reason": "domestic (FRA)", "rows": 2} in reasons["international_only"]

    run(root, "events.min_daily_mentions=0", "events.same_day=false")
    assert 1256322778 in kept_ids(root)
    run(root, "events.min_daily_mentions=0", "events.international_only=false")
    domestic = {r["GLOBALEVENTID"]: r for r in silver(root).to_pylist()}[1256323136]
    assert domestic["quad_id"] == "2025-08-07_FRA_190_FRA"
    off = {r["rule"]: r for r in funnel(root)}["international_only"]
    assert (off["enabled"], off["removed"]) == (False, 0)


def expected_mentions():
    """Both metrics per quad, computed here in Python straight from the CSV files."""
    by_event = defaultdict(set)
    for line in MENTIONS_CSV.read_bytes().decode().splitlines():
        f = line.split("\t")
        if f[2].startswith("20250807"):
            by_event[int(f[0])].add(f[4])
    return by_event


def test_daily_mentions_both_metrics(real_day):
    run(real_day, "events.min_daily_mentions=0")
    table = silver(real_day).to_pylist()
    assert table, "the real slot has international quads"
    sources, events = expected_mentions(), defaultdict(set)
    num_mentions = defaultdict(int)
    for row in table:
        events[row["quad_id"]].add(row["GLOBALEVENTID"])
        num_mentions[row["quad_id"]] += row["NumMentions"]
    for row in table:
        expected = set().union(*(sources[e] for e in events[row["quad_id"]]))
        assert row["daily_mentions"] == len(expected), row["quad_id"]
    aze_usa = {r["quad_id"]: r["daily_mentions"] for r in table}["2025-08-07_AZE_057_USA"]
    assert aze_usa == 1  # three records, all mentioned by en.apa.az alone that day

    run(real_day, "events.min_daily_mentions=0", "events.mentions_metric=sum_num_mentions")
    summed = {r["quad_id"]: r["daily_mentions"] for r in silver(real_day).to_pylist()}
    assert summed == dict(num_mentions)
    assert summed["2025-08-07_AZE_057_USA"] == 10 + 2 + 8

    run(real_day, "events.min_daily_mentions=10", "events.mentions_metric=sum_num_mentions")
    assert {r["quad_id"] for r in silver(real_day).to_pylist()} == {
        q for q, n in num_mentions.items() if n >= 10
    }


def next_day_lines() -> list[bytes]:
    """The real rows published again on 2025-08-08 under the same URLs."""
    out = []
    for line in export_lines():
        fields = line.split(b"\t")
        if fields[1] == b"20250807":
            fields[1] = b"20250808"
        fields[59] = b"20250808220000"
        out.append(b"\t".join(fields))
    return out


def test_a_url_keeps_only_its_earliest_day(real_day):
    write_bronze(real_day, "20250808220000", "export", b"\n".join(next_day_lines()) + b"\n")
    metric = "events.mentions_metric=sum_num_mentions"
    run(real_day, metric, "events.min_daily_mentions=0", last=date(2025, 8, 8))
    second = {r["rule"]: r for r in funnel(real_day, date(2025, 8, 8))}
    assert second["earliest_url_date"]["rows_in"] == 895
    assert second["earliest_url_date"]["removed"] == 895
    assert second["earliest_url_date"]["top_reasons"] == [
        {"reason": "URL already published 1 day(s) earlier", "rows": 895}
    ]
    first = {r["rule"]: r for r in funnel(real_day)}
    assert first["earliest_url_date"]["removed"] == 0

    alone = run(
        real_day,
        metric,
        "events.min_daily_mentions=0",
        first=date(2025, 8, 8),
        last=date(2025, 8, 8),
    )
    assert alone.removed["earliest_url_date"] == 895  # the look-back does not depend on the range
    run(
        real_day,
        metric,
        "events.min_daily_mentions=0",
        "events.earliest_url_date=false",
        first=date(2025, 8, 8),
        last=date(2025, 8, 8),
    )
    assert silver(real_day, date(2025, 8, 8)).num_rows == silver(real_day).num_rows


def test_rerunning_a_day_changes_nothing(real_day):
    run(real_day, "events.min_daily_mentions=0")
    events = (real_day / "silver/events/date=2025-08-07/part-0.parquet").read_bytes()
    funnel_bytes = (real_day / "silver/funnel/date=2025-08-07/part-0.parquet").read_bytes()
    run(real_day, "events.min_daily_mentions=0")
    assert (real_day / "silver/events/date=2025-08-07/part-0.parquet").read_bytes() == events
    assert (real_day / "silver/funnel/date=2025-08-07/part-0.parquet").read_bytes() == funnel_bytes
    assert sorted(p.name for p in (real_day / "silver/events/date=2025-08-07").iterdir()) == [
        "part-0.parquet"
    ]


def test_days_without_bronze_are_refused(real_day, tmp_path):
    with pytest.raises(NormalizeError, match="no bronze events for 2025-08-08"):
        run(real_day, first=DAY, last=date(2025, 8, 8))
    only_export = tmp_path / "export-only"
    write_bronze(only_export, SLOT, "export", EXPORT_CSV.read_bytes())
    with pytest.raises(NormalizeError, match="no bronze mentions for 2025-08-07"):
        run(only_export)
    summary = run(only_export, "events.mentions_metric=sum_num_mentions")
    assert summary.records_in == 909


def test_kept_events_refuses_variants_that_change_an_earlier_rule(tmp_path):
    """A round's variants share the rules before the daily mentions: one that changes an
    earlier rule would be answered under the pinned rule's, so it is refused."""
    cfg = load_config(None, [], tmp_path)
    other = cfg.events.model_copy(update={"url_lookback_days": 7})
    with pytest.raises(ValueError, match="url_lookback_days"):
        kept_events(cfg, [date(2025, 8, 5)], {"pinned": cfg.events, "other": other})
