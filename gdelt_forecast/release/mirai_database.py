"""MIRAI's database files, ``mirai/MIRAI/data_kg.csv`` and ``data_news.csv``, built from a
release's own Parquet (``quads``, ``quad_docs``, ``news`` and ``reference/``) by
``gdelt-forecast release mirai DIR``, not shipped in it.

MIRAI's form repeats a quad's whole document list on each of the quad's rows, so
``data_kg.csv`` grows with the square of a quad's documents: 3.46 GB of a month's 3.7 GB
release at GDELT's volume (docs/benchmarks.md), all of it derived from tables the release
already holds. The release build runs the same function on the release it packages and
records each file's size and sha256 in the manifest (``built``); the command checks that what
it built is those bytes, and ``release verify`` builds them (or reads the ones present) and
holds them to the same hashes and to the release's tables.

Written as MIRAI's dataset_construction scripts write them: tab-separated, lists as Python
literals (MIRAI reads them back with ``eval``).
"""

from __future__ import annotations

import csv
import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from itertools import chain, groupby
from operator import itemgetter
from pathlib import Path

import duckdb

from gdelt_forecast.contract.layout import TABLES
from gdelt_forecast.contract.names import MANIFEST
from gdelt_forecast.ground import duck
from gdelt_forecast.ground.config import ReleaseConfig
from gdelt_forecast.ground.files import entry, replacing

FILES = {"data_kg": "mirai/MIRAI/data_kg.csv", "data_news": "mirai/MIRAI/data_news.csv"}
SOURCES = ("quads", "quad_docs", "news", "countries", "relations")  # the tables they come from
COMMAND = "gdelt-forecast release mirai DIR"
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


def measure(release: Path, first: date, last: date, memory_limit: str) -> list[dict]:
    """The manifest's ``built``: each file's path, bytes and sha256 as :func:`write` makes
    them from ``release``, built in a temporary folder and dropped."""
    with tempfile.TemporaryDirectory(prefix="gdelt-mirai-") as tmp:
        write(release, Path(tmp), first, last, memory_limit)
        return [{**entry(Path(tmp), Path(tmp) / p), "command": COMMAND} for p in FILES.values()]


def differences(folder: Path, built: list[dict]) -> list[str]:
    """Each file under ``folder`` whose bytes are not the manifest's ``built`` entry's."""
    problems = []
    for item in built:
        got = entry(folder, folder / item["path"])
        if (got["bytes"], got["sha256"]) != (item["bytes"], item["sha256"]):
            problems.append(
                f"{item['path']}: {got['bytes']} bytes, sha256 {got['sha256'][:12]}..., the "
                f"manifest says {item['bytes']} bytes, {item['sha256'][:12]}... (`{COMMAND}` "
                "builds it from the release's Parquet)"
            )
    return problems


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
