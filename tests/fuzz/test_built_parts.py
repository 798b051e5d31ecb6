"""The parts a manifest lists for MIRAI's built files (``built``: a header and each month's
rows, with bytes and sha256) are read from a release's manifest, which may come from
elsewhere: property-tested, any parts give a list of problems, never an exception, and the
true parts give none."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gdelt_forecast.release.mirai_database import differences
from tests.fuzz.strategies import JSON, TEXT

pytestmark = pytest.mark.fuzz

DATA = b"DateStr\tDocid\n2025-07-22\ta\n2025-08-01\tb\n"
HEAD, JULY, AUGUST = DATA[:14], DATA[14:27], DATA[27:]
TRUE = [
    {"part": name, "bytes": len(chunk), "sha256": hashlib.sha256(chunk).hexdigest()}
    for name, chunk in (("header", HEAD), ("2025-07", JULY), ("2025-08", AUGUST))
]
PART = st.one_of(
    JSON,
    st.fixed_dictionaries({
        "part": st.one_of(TEXT, st.just("2025-07")),
        "bytes": st.one_of(st.integers(), st.just(13), JSON),
        "sha256": st.one_of(TEXT, st.just(TRUE[1]["sha256"])),
    }),
)  # fmt: skip


def test_the_true_parts_hold_and_a_changed_month_is_named(tmp_path):
    (tmp_path / "kg.csv").write_bytes(DATA)
    item = {"path": "kg.csv", "bytes": len(DATA), "parts": TRUE}
    assert differences(tmp_path, [item]) == []
    (tmp_path / "kg.csv").write_bytes(DATA.replace(b"\tb", b"\tc"))
    (problem,) = differences(tmp_path, [item])
    assert problem.startswith("kg.csv: the rows of 2025-08 (13 bytes) has sha256 ")


@given(parts=st.one_of(JSON, st.lists(PART, max_size=5)), size=st.one_of(st.integers(), JSON))
@example(parts=5, size=len(DATA))
@example(parts=[{"part": "header", "bytes": "14", "sha256": "a"}], size=len(DATA))
@example(parts=[{"part": "header", "bytes": -1, "sha256": "a"}], size=-1)
@example(parts=[{"part": "header", "bytes": 10**12, "sha256": "a"}], size=len(DATA))
def test_any_parts_give_problems_or_none_never_an_exception(tmp_path_factory, parts, size):
    folder = tmp_path_factory.mktemp("built")
    (folder / "kg.csv").write_bytes(DATA)
    problems = differences(folder, [{"path": "kg.csv", "bytes": size, "parts": parts}])
    assert isinstance(problems, list)
    if problems == []:  # only parts that add up to the file, each its bytes' digest
        assert size == len(DATA)
