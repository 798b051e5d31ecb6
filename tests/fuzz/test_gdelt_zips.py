"""GDELT zips, property-tested: a mirror's file is outside bytes, so any damage to a real zip
(bytes overwritten, cut short, grown) gives the member's exact bytes or a ParseError naming
the file, never another exception and never other bytes (the CRC-32 is checked)."""

from __future__ import annotations

import zipfile

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gdelt_forecast.gdelt.parse import ParseError, read_member
from tests.conftest import MENTIONS_CSV

pytestmark = pytest.mark.fuzz

DATA = MENTIONS_CSV.read_bytes()


def real_zip(method: int) -> bytes:
    from io import BytesIO

    out = BytesIO()
    with zipfile.ZipFile(out, "w", method) as zf:
        zf.writestr("20250807220000.mentions.CSV", DATA)
    return out.getvalue()


ZIPS = {m: real_zip(m) for m in (zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED)}
# Where damage goes: anywhere, or in the headers (the local one first, the central directory
# and its end last), which say how to read the rest.
WHERE = st.one_of(st.floats(0, 1), st.floats(0, 0.0001), st.floats(0.9995, 1))
# Where in the deflated zip a field of its central directory entry lies: the flags (8), the
# compression method (10) and the compressed size (20).
DEFLATED = ZIPS[zipfile.ZIP_DEFLATED]


def central(offset: int) -> float:
    return (DEFLATED.rfind(b"PK\x01\x02") + offset) / (len(DEFLATED) - 1)


@given(
    method=st.sampled_from(sorted(ZIPS)),
    writes=st.lists(st.tuples(WHERE, st.binary(min_size=1, max_size=8)), max_size=4),
    cut=st.one_of(st.none(), st.floats(0, 1)),
    tail=st.binary(max_size=16),
)
@example(method=zipfile.ZIP_DEFLATED, writes=[(0.5, b"\xff")], cut=None, tail=b"")
@example(method=zipfile.ZIP_DEFLATED, writes=[(0.0, b"PK\x03\x05")], cut=None, tail=b"")
@example(method=zipfile.ZIP_DEFLATED, writes=[], cut=0.99, tail=b"")
@example(method=zipfile.ZIP_DEFLATED, writes=[(central(10), b"\x63\x00")], cut=None, tail=b"")
@example(method=zipfile.ZIP_DEFLATED, writes=[(central(10), b"\x0c\x00")], cut=None, tail=b"")
@example(method=zipfile.ZIP_DEFLATED, writes=[(central(8), b"\x01\x00")], cut=None, tail=b"")
@example(method=zipfile.ZIP_DEFLATED, writes=[(central(10), b"\x00\x00")], cut=None, tail=b"")
@example(method=zipfile.ZIP_DEFLATED, writes=[(central(20), b"\x00\x00")], cut=None, tail=b"")
@example(method=zipfile.ZIP_DEFLATED, writes=[(0.9999749, b"\x00\x02")], cut=None, tail=b"")
@example(method=zipfile.ZIP_DEFLATED, writes=[(0.9996163, b"\x00")], cut=None, tail=b"")
def test_a_damaged_zip_gives_its_bytes_or_a_parse_error(tmp_path_factory, method, writes, cut,
                                                        tail):  # fmt: skip
    blob = bytearray(ZIPS[method])
    for where, payload in writes:
        at = int(where * (len(blob) - 1))
        blob[at : at + len(payload)] = payload
    if cut is not None:
        del blob[int(cut * len(blob)) :]
    path = tmp_path_factory.mktemp("zip") / "20250807220000.mentions.CSV.zip"
    path.write_bytes(bytes(blob) + tail)
    try:
        data = read_member(str(path))
    except ParseError as exc:
        assert path.name in str(exc)
        return
    assert data == DATA  # what was changed was not the member's data (a name, a comment)
