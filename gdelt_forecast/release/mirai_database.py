"""MIRAI's database files, ``mirai/MIRAI/data_kg.csv`` and ``data_news.csv``, built from a
release's own Parquet (``quads``, ``quad_docs``, ``news`` and ``reference/``) by
``gdelt-forecast release mirai DIR``, not shipped in it.

MIRAI's form repeats a quad's whole document list on each of the quad's rows, so
``data_kg.csv`` grows with the square of a quad's documents: 3.46 GB of a month's 3.7 GB
release at GDELT's volume (docs/benchmarks.md), all of it derived from tables the release
already holds. The release build runs the same function on the release it packages and
records each file's size in the manifest (``built``) with its parts: the header line, then the
rows of each month of the history (both files are sorted by date first, so a file is its
months' rows one after the other), each with its bytes and sha256. The command checks that
what it built is those bytes, and ``release verify`` builds them (or reads the ones present)
and holds them to the same hashes and to the release's tables. A month's part depends only
on that month's tables, so a release measures the months it shares with the last one from a
cache (``<data_root>/tmp/mirai-parts``, by the month's warehouse key and everything else that
shapes the bytes) instead of writing its whole history again: at GDELT's volume 3.5 GB a
month.

Written as MIRAI's dataset_construction scripts write them: tab-separated, lists as Python
literals (MIRAI reads them back with ``eval``).
"""

from __future__ import annotations

import csv
import hashlib
import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from itertools import chain, groupby
from operator import itemgetter
from pathlib import Path

import duckdb

from gdelt_forecast.contract.layout import TABLES
from gdelt_forecast.contract.names import MANIFEST
from gdelt_forecast.ground import dates, duck
from gdelt_forecast.ground.config import ReleaseConfig
from gdelt_forecast.ground.files import replacing, sha256, write_json
from gdelt_forecast.pipeline.stage_record import digest

FILES = {"data_kg": "mirai/MIRAI/data_kg.csv", "data_news": "mirai/MIRAI/data_news.csv"}
SOURCES = ("quads", "quad_docs", "news", "countries", "relations")  # the tables they come from
COMMAND = "gdelt-forecast release mirai DIR"
_HOW = f"`{COMMAND}` builds it from the release's Parquet"
# A change to how the files are written that no SQL file shows: raise it, and every month's
# cached part is measured again.
FORMAT = 1
# verify builds them without a config: under the config's default limit
MEMORY_LIMIT = ReleaseConfig.model_fields["memory_limit"].default


class MiraiDatabaseError(RuntimeError):
    """What was built is not what the release's manifest says."""


def write(
    release: Path, out: Path, first: date, last: date, memory_limit: str = MEMORY_LIMIT
) -> None:
    """data_kg.csv and data_news.csv of the days first..last into ``out`` (a release folder,
    or any folder: the files go to their places under it), from ``release``'s Parquet; DuckDB
    spills its sort past ``memory_limit`` (``release.memory_limit``)."""
    globs = {t.name: t.glob for t in TABLES}
    kg, news = out / FILES["data_kg"], out / FILES["data_news"]
    kg.parent.mkdir(parents=True, exist_ok=True)
    days = {"first_date": first, "last_date": last}
    with duckdb.connect() as con, tempfile.TemporaryDirectory(prefix="gdelt-mirai-") as spill:
        con.execute(f"SET temp_directory = {duck.literal(spill)}")
        con.execute(f"SET memory_limit = {duck.literal(memory_limit)}")
        for name in SOURCES:
            con.execute(
                f"CREATE VIEW {name} AS SELECT * FROM "
                f"read_parquet({duck.literal(release / globs[name])})"
            )
        with replacing(news) as tmp:
            con.execute(
                f"COPY ({duck.sql('release/mirai_news.sql')}) TO {duck.literal(tmp)} "
                "(FORMAT csv, DELIMITER '\\t', HEADER)",
                days,
            )
        with replacing(kg) as tmp:
            _write_kg(con.execute(duck.sql("release/mirai_kg.sql"), days), tmp)


def _write_kg(result, path: Path) -> None:
    """data_kg.csv from its sorted rows, adding to each the Docids of its quad. DuckDB sorting
    rows that carry their lists ran out of memory at GDELT's volume (786 MB for a simulated
    week), so the rows come sorted without them and each quad's list is made here from its
    rows, one quad at a time. Written with the csv module as DuckDB's COPY writes a
    tab-separated file (minimal quoting, NULL empty)."""
    columns = [c[0] for c in result.description]
    rows = chain.from_iterable(iter(lambda: result.fetchmany(10_000), []))
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t", lineterminator="\n")
        writer.writerow([*columns, "Docids"])
        for _, group in groupby(rows, key=itemgetter(columns.index("QuadEventCode"))):
            quad = list(group)
            docids = "[" + ", ".join(f"'{row[-1]}'" for row in quad) + "]"
            writer.writerows((*row, docids) for row in quad)


def measure(
    release: Path,
    first: date,
    last: date,
    memory_limit: str,
    keys: dict[str, str] | None = None,
    cache: Path | None = None,
) -> list[dict]:
    """The manifest's ``built``: each file's path, bytes and parts as :func:`write` makes
    them from ``release``. A month wholly in first..last whose key ``keys`` gives (the
    warehouse's, for the month's files the release links) is read from ``cache`` when it holds
    it; any other month is written in a temporary folder, measured and dropped."""
    shape = _shape(release)
    measured = {}
    for month, (start, end) in _months(first, last).items():
        whole = (start, end) == dates.month_range(month)
        key = digest([keys[month], shape]) if whole and keys and month in keys else None
        path = cache / f"{month}-{key[:16]}.json" if cache and key else None
        if path and path.is_file():
            measured[month] = json.loads(path.read_text(encoding="utf-8"))
            continue
        measured[month] = _month_parts(release, start, end, memory_limit)
        if path:
            write_json(path, measured[month])
    if not measured:  # an empty window: the headers alone
        measured[""] = _month_parts(release, first, last, memory_limit)
    built = []
    for name, rel in FILES.items():
        heads = {m[name]["header"]["sha256"] for m in measured.values()}
        header = next(iter(measured.values()))[name]["header"]
        if len(heads) != 1:  # another shape than the cached months': cannot be
            raise MiraiDatabaseError(f"{rel}: the months' headers differ: clear {cache}")
        parts = [{"part": "header", **header}]
        parts += [{"part": m, **measured[m][name]["rows"]} for m in sorted(measured) if m]
        built.append({"path": rel, "bytes": sum(p["bytes"] for p in parts), "parts": parts,
                      "command": COMMAND})  # fmt: skip
    return built


def _months(first: date, last: date) -> dict[str, tuple[date, date]]:
    """Each month of first..last with the days of it in the window."""
    found = {}
    day = first
    while day <= last:
        month = day.strftime("%Y-%m")
        end = min(dates.month_range(month)[1], last)
        found[month] = (day, end)
        day = end + timedelta(days=1)
    return found


def _shape(release: Path) -> str:
    """What shapes a month's part besides the month's tables: this module's SQL, its
    ``FORMAT``, DuckDB's version (its CSV writer) and the release's reference tables."""
    sources = [duck.SQL_DIR / "release" / f for f in ("mirai_kg.sql", "mirai_news.sql")]
    reference = sorted((release / "reference").glob("*.parquet"))
    return digest([FORMAT, duckdb.__version__, *(sha256(p) for p in [*sources, *reference])])


def _month_parts(release: Path, start: date, end: date, memory_limit: str) -> dict:
    """Each file's header line and rows of start..end, their bytes and sha256."""
    with tempfile.TemporaryDirectory(prefix="gdelt-mirai-") as tmp:
        write(release, Path(tmp), start, end, memory_limit)
        found = {}
        for name, rel in FILES.items():
            with (Path(tmp) / rel).open("rb") as fh:
                head = fh.readline()
                rows = hashlib.file_digest(fh, "sha256")
                size = fh.tell() - len(head)
            found[name] = {
                "header": {"bytes": len(head), "sha256": hashlib.sha256(head).hexdigest()},
                "rows": {"bytes": size, "sha256": rows.hexdigest()},
            }
        return found


def differences(folder: Path, built: list[dict]) -> list[str]:
    """Each file under ``folder`` whose bytes are not the manifest's ``built`` entry's: read
    once, part by part (a release of before its parts lists the whole file's sha256)."""
    problems = []
    for item in built:
        path = folder / item["path"]
        size = path.stat().st_size
        if size != item["bytes"]:
            problems.append(
                f"{item['path']}: {size} bytes, the manifest says {item['bytes']} bytes ({_HOW})"
            )
            continue
        parts = item.get("parts") or [{"part": "the file", **item}]
        if not _well_formed(parts, item["bytes"]):
            problems.append(f"{item['path']}: the manifest's parts of it are malformed")
            continue
        with path.open("rb") as fh:
            for part in parts:
                got = _digest_next(fh, part["bytes"])
                if got != part["sha256"]:
                    label = part["part"] if part["part"] in ("header", "the file") else (
                        f"the rows of {part['part']}"
                    )  # fmt: skip
                    problems.append(
                        f"{item['path']}: {label} ({part['bytes']} bytes) has sha256 "
                        f"{got[:12]}..., the manifest says {part['sha256'][:12]}... ({_HOW})"
                    )
                    break
    return problems


def _well_formed(parts: object, size: object) -> bool:
    """Whether ``parts`` (read from a manifest: outside text) are byte counts and digests
    that add up to ``size``."""
    return (
        isinstance(parts, list)
        and all(
            isinstance(p, dict)
            and isinstance(p.get("part"), str)
            and type(p.get("bytes")) is int
            and p["bytes"] >= 0
            and isinstance(p.get("sha256"), str)
            for p in parts
        )
        and sum(p["bytes"] for p in parts) == size
    )


def _digest_next(fh, size: int) -> str:
    """The sha256 of the next ``size`` bytes of ``fh``, read a mebibyte at a time (a month's
    rows of data_kg.csv are gigabytes at GDELT's volume)."""
    found = hashlib.sha256()
    while size > 0:
        chunk = fh.read(min(size, 1 << 20))
        if not chunk:
            break
        found.update(chunk)
        size -= len(chunk)
    return found.hexdigest()


def build(release: Path, out: Path | None = None, memory_limit: str = MEMORY_LIMIT) -> list[dict]:
    """``release mirai``: the files into ``out`` (default: the release itself), each checked
    against the manifest's ``built``; their entries."""
    manifest = json.loads((release / MANIFEST).read_text(encoding="utf-8"))
    if "built" not in manifest:
        raise MiraiDatabaseError(
            f"{release}: its manifest lists no built files (a release of before they were "
            "built on demand ships mirai/MIRAI/ as it is)"
        )
    out = out or release
    write(release, out, *_history(manifest), memory_limit)
    problems = differences(out, manifest["built"])
    if problems:
        raise MiraiDatabaseError("; ".join(problems))
    return manifest["built"]


def _history(manifest: dict) -> tuple[date, date]:
    history = manifest["history"]
    return date.fromisoformat(history["start"]), date.fromisoformat(history["end"])


@contextmanager
def built(release: Path, manifest: dict) -> Iterator[tuple[Path, list[str]]]:
    """The folder that holds the release's MIRAI database files and their differences from
    the manifest: the release itself where they were built into it, else a temporary folder
    they are built into for the caller's use (and the one built file there is, if any, is
    held to the manifest as well)."""
    present = [item for item in manifest["built"] if (release / item["path"]).exists()]
    if len(present) == len(manifest["built"]):
        yield release, differences(release, present)
        return
    with tempfile.TemporaryDirectory(prefix="gdelt-mirai-") as tmp:
        write(release, Path(tmp), *_history(manifest))
        yield Path(tmp), differences(release, present) + differences(Path(tmp), manifest["built"])
