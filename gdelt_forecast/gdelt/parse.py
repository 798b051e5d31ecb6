"""Parse one zipped GDELT file exactly: typed rows, and every other line as a reject.

GDELT files are tab-separated with no header and no quoting (fields hold ``'`` and ``"``).
Each input line ends up either as a typed row or as a reject with its line number and a
reason; ``parse_bytes`` checks that the two add up to the file's line count (an empty file
has none).

Every string that comes out, a typed row's field or a reject's raw line, is well-formed
text (:mod:`gdelt_forecast.ground.wellformed`): a line is never rejected for its characters.
Bytes that are not UTF-8 become U+FFFD, as does a carriage return (the CSV reader would
split a field at it); a NUL, another control character or a byte-order mark in a field
becomes U+FFFD too (a byte-order mark that starts the file is dropped), and such a file is
counted once under the boundary ``gdelt field``. The
check is a few whole-buffer passes (numpy), so a clean file, the rule, costs a few
milliseconds; only a file that holds such a character is decoded and mended as text.
"""

from __future__ import annotations

import bisect
import logging
import struct
import zipfile
import zlib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from isal import isal_zlib

from gdelt_forecast.gdelt.schema import PARTITION_COLUMN, REJECTS, REQUIRED, SCHEMAS
from gdelt_forecast.ground.wellformed import wellformed

log = logging.getLogger(__name__)
_LOCAL_HEADER = struct.Struct("<4s5H3I2H")  # a zip member's local file header (APPNOTE 4.3.7)


@dataclass
class Parsed:
    rows: pa.Table  # typed, in file order
    rejects: pa.Table  # REJECTS schema
    lines: int


class ParseError(ValueError):
    """The file as a whole cannot be read (not a zip, several members, ...)."""


def read_member(path: str) -> bytes:
    """The one CSV inside a GDELT zip (deflated or stored), its size and CRC-32 checked."""
    try:
        with open(path, "rb") as f, zipfile.ZipFile(f) as zf:
            members = [i for i in zf.infolist() if not i.is_dir()]
            if len(members) != 1:
                raise ParseError(f"{path}: expected one CSV in the zip, found {len(members)}")
            info = members[0]
            if info.flag_bits & 0x1:
                raise ParseError(f"{path}: {info.filename} is encrypted")
            if info.compress_type not in (zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED):
                raise ParseError(f"{path}: {info.filename} is compressed by method "
                                 f"{info.compress_type}, not deflate")  # fmt: skip
            data = _member_bytes(f, info)
        if info.compress_type == zipfile.ZIP_DEFLATED:
            data = isal_zlib.decompress(data, wbits=-15)
    # zipfile meets a damaged directory with whatever its parsing raises (an empty name's
    # IndexError, a struct.error, ...), not only BadZipFile.
    except (zipfile.BadZipFile, zlib.error, isal_zlib.error, EOFError, ValueError, IndexError,
            struct.error, NotImplementedError) as exc:  # fmt: skip
        raise ParseError(f"{path}: {exc!r}") from None
    if len(data) != info.file_size or isal_zlib.crc32(data) != info.CRC:
        raise ParseError(f"{path}: {info.filename} fails its size or CRC-32 check")
    return data


def _member_bytes(f: BinaryIO, info: zipfile.ZipInfo) -> bytes:
    """The member's bytes as stored. Written here because zipfile inflates only with zlib,
    and ISA-L's inflate (isal) is twice as fast: on a year, unzipping is a sixth of ingest's
    CPU. The local header repeats the name and has its own extra field before the data."""
    if info.header_offset < 0:  # from a damaged central directory
        raise zipfile.BadZipFile(f"{info.filename}: local header at {info.header_offset}")
    f.seek(info.header_offset)
    header = f.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"{info.filename}: bad local file header")
    name_len, extra_len = _LOCAL_HEADER.unpack(header)[-2:]
    f.seek(info.header_offset + _LOCAL_HEADER.size + name_len + extra_len)
    data = f.read(info.compress_size)
    if len(data) != info.compress_size:
        raise EOFError(f"{info.filename}: {len(data)} of {info.compress_size} bytes")
    return data


def _scan(data: bytes) -> tuple[int, bool]:
    """The number of lines of ``data`` (valid UTF-8 without CR), and whether it holds a
    character :func:`wellformed` replaces. Whole-array passes over the bytes (numpy, a few
    milliseconds for a file of tens of MB), never a loop over lines or fields."""
    codes = np.frombuffer(data, np.uint8)
    newlines = int(np.count_nonzero(codes == 0x0A))
    lines = newlines + (1 if data and not data.endswith(b"\n") else 0)
    # C0 controls and DEL are one byte each in UTF-8; tab and LF are the only ones allowed.
    if np.count_nonzero(codes < 0x20) != np.count_nonzero(codes == 0x09) + newlines:
        return lines, True
    if b"\x7f" in data:
        return lines, True
    if data.isascii():
        return lines, False
    # C1 controls (U+0080-U+009F) are 0xC2 then a byte below 0xA0 (a continuation byte,
    # 0x80-0xBF); a byte-order mark is 0xEF 0xBB 0xBF. Valid UTF-8 never ends on a lead byte.
    after_c2 = codes[np.flatnonzero(codes == 0xC2) + 1]
    ef = np.flatnonzero(codes == 0xEF)
    bom = (codes[ef + 1] == 0xBB) & (codes[ef + 2] == 0xBF)
    return lines, bool(np.any(after_c2 < 0xA0) or np.any(bom))


def _bad_values(column: pa.ChunkedArray, typ: pa.DataType) -> set[str]:
    """Values of a string column that do not cast to ``typ`` (only run when a cast failed)."""
    bad = set()
    for value in pc.unique(column).to_pylist():
        if value is None:
            continue
        try:
            pc.cast(pa.array([value]), typ)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            bad.add(value)
    return bad


def _valid_day(yyyymmdd: int) -> bool:
    try:
        datetime.strptime(str(yyyymmdd), "%Y%m%d")
    except ValueError:
        return False
    return True


def _read(data: bytes, schema: pa.Schema, types: dict[str, pa.DataType]) -> tuple[pa.Table, list]:
    """Read with the given column types; lines with the wrong field count come back apart."""
    invalid: list[tuple[int, str, str]] = []

    def on_invalid(row: pacsv.InvalidRow) -> str:
        reason = f"{row.actual_columns} fields, expected {row.expected_columns}"
        invalid.append((row.number, row.text, reason))
        return "skip"

    table = pacsv.read_csv(
        pa.py_buffer(data),
        # One thread per file: the stage parses several files at once, and the reader
        # only knows line numbers of bad lines when it reads serially.
        read_options=pacsv.ReadOptions(column_names=schema.names, use_threads=False),
        parse_options=pacsv.ParseOptions(
            delimiter="\t",
            quote_char=False,
            escape_char=False,
            ignore_empty_lines=False,
            invalid_row_handler=on_invalid,
        ),
        convert_options=pacsv.ConvertOptions(
            column_types=types, null_values=[""], strings_can_be_null=True
        ),
    )
    return table, invalid


def _cast(strings: pa.Table, schema: pa.Schema, reasons: dict[int, str]) -> pa.Table:
    """Cast each column; a value that does not cast nulls its row and records why."""
    columns = []
    for field in schema:
        col = strings[field.name]
        try:
            columns.append(pc.cast(col, field.type))
            continue
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        mask = pc.is_in(col, pa.array(sorted(_bad_values(col, field.type)), pa.string()))
        for i in pc.indices_nonzero(mask).to_pylist():
            reasons.setdefault(i, f"{field.name}: {col[i].as_py()!r} is not {field.type}")
        columns.append(pc.cast(pc.if_else(mask, pa.scalar(None, pa.string()), col), field.type))
    return pa.table(columns, schema=schema)


def _check_keys(typed: pa.Table, table: str, reasons: dict[int, str]) -> None:
    """Rows without an ID or a valid partition time cannot be placed or joined."""
    for name in REQUIRED[table]:
        for i in pc.indices_nonzero(pc.is_null(typed[name])).to_pylist():
            reasons.setdefault(i, f"{name} is empty")
    col = PARTITION_COLUMN[table]
    days = pc.divide(typed[col], pa.scalar(1_000_000, pa.int64()))
    invalid = [d for d in pc.unique(days).to_pylist() if d is not None and not _valid_day(d)]
    if invalid:
        for i in pc.indices_nonzero(pc.is_in(days, pa.array(invalid, pa.int64()))).to_pylist():
            reasons.setdefault(i, f"{col} {typed[col][i].as_py()} is not YYYYMMDDHHMMSS")


def _line_numbers(rows: list[int], skipped: list[int]) -> list[int]:
    """Physical line of each parsed row index, stepping over lines the reader set apart."""
    numbers = []
    for index in rows:
        line = index + 1
        while (shifted := index + 1 + bisect.bisect_right(skipped, line)) != line:
            line = shifted
        numbers.append(line)
    return numbers


def parse_bytes(data: bytes, table: str, source_file: str) -> Parsed:
    schema = SCHEMAS[table]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        # A row is never lost for its encoding: bad bytes become U+FFFD.
        data = data.decode("utf-8", errors="replace").encode("utf-8")
    if b"\r" in data:
        # Lines end in LF; the CSV reader would also split at a stray CR inside a field.
        log.warning("%s: %d carriage returns replaced by U+FFFD", source_file, data.count(b"\r"))
        data = data.replace(b"\r", "\ufffd".encode())
    lines, bad = _scan(data)
    if bad:
        # NUL, controls, a BOM: none is a GDELT value, and none may reach a Parquet file, the
        # answer cache or a terminal as it is (tab and LF are the file's own structure).
        log.warning("%s: control characters or byte-order marks replaced by U+FFFD", source_file)
        data = wellformed(data.decode("utf-8"), "gdelt field").encode("utf-8")
        lines = 0 if not data else lines  # a file of nothing but a BOM holds no line
    if not lines:  # pyarrow refuses an empty file
        return Parsed(schema.empty_table(), REJECTS.empty_table(), 0)

    reasons: dict[int, str] = {}
    try:
        typed, invalid = _read(data, schema, {f.name: f.type for f in schema})
    except pa.ArrowInvalid:
        # Some value does not convert: read as text and find the rows that hold it.
        strings, invalid = _read(data, schema, {name: pa.string() for name in schema.names})
        typed = _cast(strings, schema, reasons)
    _check_keys(typed, table, reasons)

    reject_rows = [(number, text, reason) for number, text, reason in invalid]
    if reasons:
        bad = sorted(reasons)
        numbers = _line_numbers(bad, sorted(number for number, _, _ in invalid))
        raw_lines = data.split(b"\n")
        for index, number in zip(bad, numbers, strict=True):
            reject_rows.append((number, raw_lines[number - 1].decode("utf-8"), reasons[index]))
        keep = pc.invert(pc.is_in(pa.array(range(typed.num_rows)), pa.array(bad, pa.int64())))
        typed = typed.filter(keep)
    reject_rows.sort()
    rejects = pa.table(
        {
            "source_file": [source_file] * len(reject_rows),
            "line_no": [r[0] for r in reject_rows],
            "raw_line": [r[1] for r in reject_rows],
            "reason": [r[2] for r in reject_rows],
        },
        schema=REJECTS,
    )
    if typed.num_rows + rejects.num_rows != lines:
        raise AssertionError(
            f"{source_file}: {lines} lines but {typed.num_rows} rows + {rejects.num_rows} rejects"
        )
    return Parsed(typed, rejects, lines)


def parse_zip(path: str, table: str) -> Parsed:
    return parse_bytes(read_member(path), table, Path(path).name)
