"""The release's event graph for temporal-KG models (RE-Net, RE-GCN, TiRGN, TLogic): the
``tkg/`` folder in RE-Net's layout, which RE-GCN's ``RGCNLinkDataset.load`` reads.

- ``train.txt``, ``valid.txt``, ``test.txt``: one quadruple a line, tab-separated integers
  ``s r o t`` and a fifth column 0 (RE-Net's end time, unused), in (t, s, r, o) order;
- ``entity2id.txt``, ``relation2id.txt``: ``name<TAB>id``, ids from 0 without gaps;
- ``stat.txt``: the numbers of entities and relations, tab-separated.

Every quad of ``quads/`` is one line of exactly one split (``sql/release/tkg.sql`` says which
and what the ids and ``t`` are). The lists hold every reference country and second-level
CAMEO code, used or not, so an id means the same code in every release.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb

from gdelt_forecast.ground import duck
from gdelt_forecast.ground.errors import StageError

SPLITS = ("train", "valid", "test")


class TkgError(StageError):
    """A quad whose country or relation has no id: the reference lists lack its code."""


def write_tkg(release: Path, history_start: date, test_start: date, valid_days: int) -> dict:
    """Write ``release/tkg/`` from the release's quads and reference tables; the counts."""
    out = release / "tkg"
    out.mkdir(parents=True, exist_ok=True)
    with duckdb.connect() as con:
        for name, glob in (
            ("quads", "quads/*.parquet"),
            ("countries", "reference/countries.parquet"),
            ("relations", "reference/relations.parquet"),
        ):
            con.execute(
                f"CREATE VIEW {name} AS SELECT * FROM read_parquet({duck.literal(release / glob)})"
            )
        duck.run(
            con,
            "release/tkg.sql",
            "CREATE TABLE tkg AS",
            history_start=history_start,
            test_start=test_start,
            valid_days=valid_days,
        )
        unmapped = con.execute(
            "SELECT quad_id FROM tkg WHERE s IS NULL OR r IS NULL OR o IS NULL LIMIT 3"
        ).fetchall()
        if unmapped:
            raise TkgError(
                f"quads without a tkg id (a code missing from reference/): "
                f"{', '.join(q for (q,) in unmapped)}"
            )
        counts = {}
        for split in SPLITS:
            _copy(
                con,
                f"SELECT s, r, o, t, 0 FROM tkg WHERE split = '{split}' ORDER BY t, s, r, o",
                out / f"{split}.txt",
            )
            counts[split] = con.execute(
                "SELECT count(*) FROM tkg WHERE split = ?", [split]
            ).fetchone()[0]
        entities = "SELECT iso3, row_number() OVER (ORDER BY iso3) - 1 FROM countries"
        relations = (
            "SELECT code, row_number() OVER (ORDER BY code) - 1 FROM relations "
            "WHERE length(code) = 3"
        )
        _copy(con, f"{entities} ORDER BY 2", out / "entity2id.txt")
        _copy(con, f"{relations} ORDER BY 2", out / "relation2id.txt")
        n_entities = con.execute(f"SELECT count(*) FROM ({entities})").fetchone()[0]
        n_relations = con.execute(f"SELECT count(*) FROM ({relations})").fetchone()[0]
    (out / "stat.txt").write_text(f"{n_entities}\t{n_relations}\n", encoding="utf-8")
    return {
        "entities": n_entities,
        "relations": n_relations,
        **counts,
        "t": f"days since {history_start.isoformat()}",
    }


def _copy(con: duckdb.DuckDBPyConnection, query: str, path: Path) -> None:
    con.execute(
        f"COPY ({query}) TO {duck.literal(path)} (FORMAT csv, DELIMITER '\t', HEADER false)"
    )
