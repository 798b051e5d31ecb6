"""GDELT lines, property-tested: any bytes parse to typed rows and rejects (each with its
line number and reason) that add up to the line count, never an exception, and every string
that comes out (a typed row's field, a reject's raw line) is well-formed.

The lines are real ones (tests/fixtures/gdelt), mutated: text or bytes spliced into a
field, a field replaced, dropped or added, arbitrary lines put between them."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gdelt_forecast.gdelt.parse import parse_bytes
from gdelt_forecast.gdelt.schema import REJECTS, SCHEMAS
from tests.conftest import EXPORT_CSV, MENTIONS_CSV
from tests.fuzz.strategies import TEXT, assert_wellformed

pytestmark = pytest.mark.fuzz


REAL = {
    "export": EXPORT_CSV.read_bytes().split(b"\n")[:-1],
    "mentions": MENTIONS_CSV.read_bytes().split(b"\n")[:-1],
}
# Any text as UTF-8 (lone surrogates too, as a broken encoder writes them), or any bytes.
PAYLOAD = st.one_of(
    TEXT.map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.binary(max_size=30),
    st.sampled_from([b"\x00", b"\r", b"\t", b"\n", b"\xef\xbb\xbf", b"\xc2\x85", b"\xff"]),
)


@st.composite
def gdelt_files(draw) -> tuple[str, bytes, set[int]]:
    """A table name, a file of real lines some of which are mutated, and the numbers of the
    lines left as they were."""
    table = draw(st.sampled_from(sorted(REAL)))
    real = REAL[table]
    picks = draw(st.lists(st.integers(0, len(real) - 1), max_size=8))
    lines: list[tuple[bytes, bool]] = [(real[i], False) for i in picks]  # (line, mutated)
    for _ in range(draw(st.integers(0, 4))):
        where = draw(st.integers(0, len(lines)))
        payload = draw(PAYLOAD)
        action = draw(st.sampled_from(["splice", "replace", "drop", "add", "line"]))
        if action == "line" or where == len(lines):
            lines.insert(where, (payload, True))
            continue
        fields = lines[where][0].split(b"\t")
        at = draw(st.integers(0, len(fields) - 1))
        if action == "splice":
            cut = draw(st.integers(0, len(fields[at])))
            fields[at] = fields[at][:cut] + payload + fields[at][cut:]
        elif action == "replace":
            fields[at] = payload
        elif action == "drop":
            del fields[at]
        else:
            fields.insert(at, payload)
        lines[where] = (b"\t".join(fields), True)
    data = b"\n".join(line for line, _ in lines) + draw(st.sampled_from([b"\n", b""]))
    untouched, number = set(), 1
    for line, mutated in lines:
        if not mutated:
            untouched.add(number)
        number += line.count(b"\n") + 1
    return table, data, untouched


def line_count(data: bytes) -> int:
    data = data.removeprefix(b"\xef\xbb\xbf")  # a leading BOM says how, not what: no line
    if not data:
        return 0
    return len(data.split(b"\n")) - 1 if data.endswith(b"\n") else len(data.split(b"\n"))


def check(table: str, data: bytes, untouched: set[int] = frozenset()) -> None:
    parsed = parse_bytes(data, table, "x.CSV")
    lines = line_count(data)
    assert parsed.lines == lines
    assert parsed.rows.num_rows + parsed.rejects.num_rows == lines
    assert parsed.rows.schema == SCHEMAS[table]
    assert parsed.rejects.schema == REJECTS
    rejects = parsed.rejects.to_pylist()
    numbers = [r["line_no"] for r in rejects]
    assert numbers == sorted(set(numbers)) and all(1 <= n <= lines for n in numbers)
    assert not untouched & set(numbers)  # a real line is never lost to its neighbours
    for reject in rejects:
        assert reject["reason"] and reject["source_file"] == "x.CSV"
        assert_wellformed(reject["raw_line"])
        assert_wellformed(reject["reason"])
    for field in SCHEMAS[table]:
        if pa.types.is_string(field.type):
            for value in parsed.rows[field.name].to_pylist():
                assert_wellformed(value)


@given(case=gdelt_files())
@example(case=("export", b"\xef\xbb\xbf\n", set()))
@example(case=("export", b"\x00\n", set()))
@example(case=("export", b"", set()))
def test_mutated_real_lines_give_rows_and_rejects_that_add_up(case):
    check(*case)


@given(table=st.sampled_from(sorted(REAL)), data=st.binary(max_size=2_000))
@example(table="export", data=b"")
@example(table="mentions", data=b"\n")
@example(table="export", data=b"\x00\t\x1b")
@example(table="export", data=b"\xef\xbb\xbf")
@example(table="mentions", data=b"\xef\xbb\xbf\xef\xbb\xbf\xc2")
def test_any_bytes_give_rows_and_rejects_that_add_up(table, data):
    check(table, data)


def field_spliced(table: str, line: int, field: int, payload: bytes) -> bytes:
    fields = REAL[table][line].split(b"\t")
    fields[field] += payload
    return b"\t".join(fields) + b"\n"


@pytest.mark.parametrize(
    ("payload", "mended"),
    [
        (b"\x00", "\ufffd"),
        (b"\x1b[2J", "\ufffd[2J"),
        (b"\xc2\x85", "\ufffd"),  # U+0085, a C1 control
        (b"\xef\xbb\xbf", "\ufffd"),  # a BOM inside the text
        (b"\xed\xa0\x80", "\ufffd\ufffd\ufffd"),  # a UTF-8-encoded lone surrogate: not UTF-8
    ],
)
def test_a_bad_character_in_a_field_is_mended_and_the_row_kept(payload, mended):
    # Actor1Name (field 6) of export, MentionSourceName (field 4) of mentions
    for table, field, column in (("export", 6, "Actor1Name"), ("mentions", 4, "MentionSourceName")):
        data = field_spliced(table, 0, field, payload)
        parsed = parse_bytes(data, table, "x.CSV")
        assert parsed.rejects.num_rows == 0
        original = REAL[table][0].split(b"\t")[field].decode()
        assert parsed.rows[column][0].as_py() == original + mended
