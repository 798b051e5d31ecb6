"""A stage's record: what a partition of a stage was built from and what it holds, so that a
later stage or the release can tell whether it is still current. A month stage's record is
``_record.json`` in the folder it wrote; a day stage writes into tables that other days
share, so its day's record is ``records/<stage>/date=<day>.json``
(:class:`gdelt_forecast.ground.data_root.DataRoot`).

It holds the stage and partition, the parameters, the sha256 of the config it used, the
fingerprint of its inputs, the code version, the run (its id, when it finished, how many
times this folder was built), the stage's summary and every file's path, bytes, sha256 and
rows. :mod:`gdelt_forecast.pipeline.runner` writes it; the release checks it (:func:`stale`)
and copies the files it lists.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

from gdelt_forecast.ground.data_root import RECORD
from gdelt_forecast.ground.files import entry, write_json
from gdelt_forecast.ground.version import code_version


def digest(value: object) -> str:
    """The sha256 of ``value`` as canonical JSON (sorted keys; dates and paths as text)."""
    text = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _as_json(value: object) -> object:
    """``value`` as a record holds it once read back: dates and paths as text."""
    return json.loads(json.dumps(value, default=str))


def files_of(folder: Path) -> list[Path]:
    """The files a record lists: all under ``folder`` but the record and hidden files."""
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.name != RECORD
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def folder_files(folder: Path) -> list[dict]:
    """The entries of every file a month stage's folder holds, relative to it."""
    return [entry(folder, p) for p in files_of(folder)]


def write(
    path: Path,
    *,
    files: list[dict],
    stage: str,
    partition: str,
    params: dict,
    config: dict,
    inputs: dict,
    run_id: str,
    runs: int,
    summary: dict,
) -> dict:
    record = {
        "stage": stage,
        "partition": partition,
        "params": params,
        "config_sha256": digest(config),
        "inputs": inputs,
        "code_version": code_version(),
        "run": {
            "id": run_id,
            "finished": datetime.now(UTC).replace(microsecond=0).isoformat(),
            "runs": runs,
        },
        "summary": summary,
        "files": files,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, _as_json(record))
    return record


def read(path: Path) -> dict | None:
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def fingerprint(record: dict) -> str:
    """What a later stage that reads this one's files records as its input."""
    return digest(record["files"])


def stale(record: dict | None, *, params: dict, config: dict, inputs: dict) -> str | None:
    """Why ``record`` does not describe a build from ``params``, ``config`` and ``inputs``
    now (None when it does): no record, other parameters, another config, other inputs."""
    if record is None:
        return "it has no record (never built, or built by an older version)"
    wanted = _as_json(params)
    if record["params"] != wanted:
        diff = {k: v for k, v in wanted.items() if record["params"].get(k) != v}
        built = {k: record["params"].get(k) for k in diff}
        return f"it was built with {built}, this run asks {diff}"
    if record["config_sha256"] != digest(config):
        return "it was built with another config"
    changed = sorted(
        k for k in {*record["inputs"], *inputs} if record["inputs"].get(k) != inputs.get(k)
    )
    if changed:
        return f"its input changed since it ran ({', '.join(changed)})"
    return None
