"""GDELT's master file list (read by ingest, and by ``round resolve`` to name a round's
files), property-tested: any lines give a listing, never an exception; every line is either a
listed file or counted as malformed or out of range; every file listed names a real moment
in the range asked for, so a day can always be read off its slot."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gdelt_forecast.gdelt.masterfile import parse_lines
from tests.fuzz.strategies import TEXT

pytestmark = pytest.mark.fuzz

REAL = "374956 7dc9b24c145245f23bbc3981a95dca1f http://data.gdeltproject.org/gdeltv2/20250807220000.export.CSV.zip"
START, END = datetime(2025, 7, 9), datetime(2025, 8, 12, 23, 59, 59)
SLOTS = st.text("0123456789", min_size=14, max_size=14).map(lambda d: "2025" + d[4:])
LINES = st.one_of(
    TEXT,
    st.just(REAL),
    SLOTS.map(lambda s: REAL.replace("20250807220000", s)),
    st.builds(lambda a, b: a + REAL + b, TEXT, TEXT),
)


@given(st.lists(LINES, max_size=12))
@example([REAL.replace("20250807220000", "20250732000000"), REAL])
def test_any_lines_give_a_listing_of_real_moments_in_range(lines):
    listing = parse_lines(lines, "http://x", "english", START, END, ["export", "mentions"])
    assert listing.lines == sum(bool(line.strip()) for line in lines)
    assert len(listing.files) + listing.malformed <= listing.lines
    for f in listing.files:
        assert START <= datetime.strptime(f.slot, "%Y%m%d%H%M%S") <= END
        assert f.table in ("export", "mentions") and f.name.endswith(".CSV.zip")
