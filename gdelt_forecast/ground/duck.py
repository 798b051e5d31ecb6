"""DuckDB connections configured from the project config, and the SQL files in
``gdelt_forecast/sql/``."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import duckdb

from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.errors import StageError

SQL_DIR = Path(__file__).resolve().parents[1] / "sql"  # package data: installs carry it
_PARAM = re.compile(r"\$([A-Za-z_]\w*)")


def connect(cfg: Config, database: str | Path = ":memory:", read_only: bool = False):
    """A connection that spills to ``<data_root>/tmp/duckdb`` past the memory limit."""
    spill = DataRoot(cfg.data_root).scratch / "duckdb"
    spill.mkdir(parents=True, exist_ok=True)
    settings = {"memory_limit": cfg.duckdb.memory_limit, "temp_directory": str(spill)}
    if cfg.duckdb.threads:
        settings["threads"] = cfg.duckdb.threads
    return duckdb.connect(str(database), read_only=read_only, config=settings)


def open_warehouse(cfg: Config):
    """The data root's warehouse, read-only (only the ``database`` stage writes it)."""
    path = DataRoot(cfg.data_root).warehouse
    if not path.exists():
        raise StageError(f"no warehouse at {path}: run `gdelt-forecast database`")
    return connect(cfg, path, read_only=True)


def sql(name: str) -> str:
    return (SQL_DIR / name).read_text(encoding="utf-8")


def run(
    con: duckdb.DuckDBPyConnection, name: str, prefix: str = "", **params
) -> duckdb.DuckDBPyConnection:
    """Run ``sql/<name>`` (after ``prefix``, e.g. ``CREATE TABLE t AS``) with the named
    ``$parameters`` it uses, taken from ``params``; others in ``params`` are ignored."""
    text, bound = _bind(name, params)
    return con.execute(f"{prefix} {text}", bound)


def relation(con: duckdb.DuckDBPyConnection, name: str, **params) -> duckdb.DuckDBPyRelation:
    """``sql/<name>`` as a lazy relation, to stream its rows (``to_arrow_reader``)."""
    text, bound = _bind(name, params)
    return con.sql(text, params=bound)


def _bind(name: str, params: dict) -> tuple[str, dict]:
    text = sql(name)
    used = sorted(set(_PARAM.findall(text)))
    missing = [p for p in used if p not in params]
    if missing:
        raise KeyError(f"{name} needs parameters {missing}")
    return text, {p: params[p] for p in used}


def records(con: duckdb.DuckDBPyConnection, name: str, **params) -> list[dict]:
    """The rows ``sql/<name>`` returns, as dicts by column name."""
    cursor = run(con, name, **params)
    columns = [c[0] for c in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def literal(value: str | Path) -> str:
    """A path or string as a DuckDB string literal, for statements that take no parameters
    there (a view's files, an ENUM's values)."""
    return "'" + str(value).replace("'", "''") + "'"


def quoted_list(paths: Iterable[Path]) -> str:
    """Paths as a DuckDB list literal, for views over Parquet files (views take no parameters)."""
    return "[" + ", ".join(literal(p) for p in paths) + "]"
