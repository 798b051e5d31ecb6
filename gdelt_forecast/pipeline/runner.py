"""The one way a stage runs, from the command line and from Airflow: ``run("testset", cfg,
"2025-08")``.

From the stage's declaration (:mod:`gdelt_forecast.pipeline.stages`) the runner
1. stages the data root: for an s3:// one, a working copy with what the stage reads pulled
   first and what it wrote pushed after (:mod:`gdelt_forecast.storage.working_copy`), and the
   machine's warehouse rebuilt (the ``database`` stage) when the stage reads it and its
   record says it predates the bucket's silver;
2. takes the partition's lock (each day of a day stage's range, in order; a month stage's
   month; a round's, for each of its steps), so two runs of one partition take turns
   wherever they were started;
3. for a month stage, builds into a fresh hidden folder, writes the stage's record there
   (:mod:`gdelt_forecast.pipeline.stage_record`) and swaps it for the old output, so the month's
   folder always holds one whole build and the record that describes it; for a day stage,
   writes each day's record once the stage has written the days; for ``database``, the
   warehouse's record (its inputs fingerprinted before it read them);
4. for a bucket, has the stage's publisher put what it made in place (a release).

Its requests to a bucket carry ``app/gdelt-forecast.<stage>`` in their User-Agent, so a
bucket's access log tells which stage moved what.

No stage knows where the data root is: each is handed a local folder.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from gdelt_forecast.ground import dates
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import RECORD, WAREHOUSE, DataRoot
from gdelt_forecast.ground.files import entry, temporary_folder
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.pipeline import stage_record
from gdelt_forecast.pipeline.stages import STAGES, Stage
from gdelt_forecast.storage.locks import month_lock, partition_lock
from gdelt_forecast.storage.working_copy import staged

log = logging.getLogger(__name__)


def run(name: str, cfg: Config, *args: Any, run_id: str | None = None, **kwargs: Any) -> Any:
    """Stage ``name`` with ``(cfg, *args, **kwargs)``; returns what the stage returns. A month
    stage's keyword arguments are options its declaration turns into the parameters it runs
    with and records; ``run_id`` names the run in the record (Airflow's run id)."""
    stage = STAGES[name]
    run_id = run_id or f"cli-{uuid.uuid4().hex[:12]}"
    # botocore reads it whenever a client is made; the stage's bucket clients are its own.
    os.environ["AWS_SDK_UA_APP_ID"] = f"gdelt-forecast.{name}"
    reads = stage.pulls(cfg, *args) if cfg.remote else []  # a local root has everything
    with staged(cfg, [r for r in reads if r != WAREHOUSE]) as local:
        if WAREHOUSE in reads:
            _current_warehouse(local, run_id)
        with _locks(stage, local, args):
            if stage.recorded and stage.partition == "month":
                result = _recorded_month(stage, local, args[0], run_id, kwargs)
            elif stage.record:
                result = _recorded_whole(stage, local, args, kwargs, run_id)
            else:
                result = _timed(stage, local, *args, **kwargs)
                if stage.recorded:
                    _record_days(stage, local, args, kwargs, run_id, result)
        if cfg.remote and stage.publisher:
            result = stage.publisher(local, result)
        return result


def _timed(stage: Stage, *args: Any, **kwargs: Any) -> Any:
    """The stage's function on ``args``; a summary it returns gets the call's wall seconds,
    measured here for every stage alike (before its record is written)."""
    started = time.monotonic()
    result = stage.function(*args, **kwargs)
    if isinstance(result, StageSummary):
        result.seconds = time.monotonic() - started
    return result


def _locks(stage: Stage, cfg: Config, args: tuple) -> ExitStack:
    stack = ExitStack()
    if stage.partition == "month":
        dates.month_range(args[0])  # a bad month is refused before it names a lock file
        stack.enter_context(month_lock(cfg, stage.name, args[0]))
    elif stage.partition == "round":  # every step of a round, one at a time
        stack.enter_context(partition_lock(cfg, "round", args[0]))
    elif stage.partition == "day":
        first, last = args[0], args[1]
        for day in dates.days(first, last):  # ascending: two ranges never wait on each other
            stack.enter_context(partition_lock(cfg, stage.name, day.isoformat()))
    return stack


def _recorded_month(stage: Stage, cfg: Config, month: str, run_id: str, options: dict) -> Any:
    root = DataRoot(cfg.data_root)
    final = root.month(stage.name, month)
    previous = stage_record.read(root.month_record(stage.name, month))
    inputs = stage.fingerprint(cfg, root, month)
    params = stage.params(cfg, month, **options)
    with _fresh(final) as out:
        summary = _timed(stage, cfg, month, out, **params)
        stage_record.write(
            out / RECORD,
            files=stage_record.folder_files(out),
            stage=stage.name,
            partition=month,
            params={"month": month, **params},
            config=stage.config(cfg),
            inputs=inputs,
            run_id=run_id,
            runs=_runs(previous),
            summary=summary.to_dict(),
        )
    return summary


def _record_days(stage: Stage, cfg: Config, args: tuple, options: dict, run_id: str, summary):
    """Each day's record of a day stage run over ``(first, last)``: its own files and
    inputs; the parameters and summary are the run's, which covered the whole range."""
    root = DataRoot(cfg.data_root)
    first, last = args[0], args[1]
    params = {"first": first, "last": last, **options}
    for day in dates.days(first, last):
        path = root.day_record(stage.name, day)
        files = [
            entry(root.root, p)
            for rel in stage.writes(day)
            for p in stage_record.files_of(root.path(rel))
        ]
        stage_record.write(
            path,
            files=files,
            stage=stage.name,
            partition=day.isoformat(),
            params=params,
            config=stage.config(cfg),
            inputs=stage.fingerprint(cfg, root, day),
            run_id=run_id,
            runs=_runs(stage_record.read(path)),
            summary=summary.to_dict(),
        )


def _recorded_whole(stage: Stage, cfg: Config, args: tuple, options: dict, run_id: str):
    """An unpartitioned stage's run and its record."""
    inputs = stage.fingerprint(cfg, DataRoot(cfg.data_root), None)  # before the stage reads them
    summary = _timed(stage, cfg, *args, **options)
    record_whole(stage, cfg, inputs, run_id, summary.to_dict())
    return summary


def record_whole(stage: Stage, cfg: Config, inputs: dict, run_id: str, summary: dict) -> None:
    """An unpartitioned stage's record, at ``stage.record``. The warehouse is rebuilt, never
    copied: the record lists no file, and names the inputs it was built from."""
    path = DataRoot(cfg.data_root).path(stage.record)
    stage_record.write(
        path,
        files=[],
        stage=stage.name,
        partition="all",
        params={},
        config=stage.config(cfg),
        inputs=inputs,
        run_id=run_id,
        runs=_runs(stage_record.read(path)),
        summary=summary,
    )


def _current_warehouse(cfg: Config, run_id: str) -> None:
    """A working copy's warehouse is this machine's own: rebuilt before a stage reads it
    when it is missing or its record says the bucket's silver changed since it was built."""
    root = DataRoot(cfg.data_root)
    database = STAGES["database"]
    why = "there is none" if not root.warehouse.exists() else database.stale(cfg, root)
    if why:
        log.info("the warehouse is rebuilt first: %s", why)
        _recorded_whole(database, cfg, (), {}, run_id)


def _runs(previous: dict | None) -> int:
    return (previous["run"]["runs"] if previous else 0) + 1


@contextmanager
def _fresh(final) -> Iterator:
    """A new hidden folder beside ``final`` to build in, put in its place when the block ends
    without an error (the old output removed), removed in any case, with the parent folder
    when this made it (a failed first run leaves nothing behind)."""
    made = not final.parent.exists()
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_folder(final.parent, prefix=f".{final.name}.")
    try:
        yield tmp
        old = final.with_name(f".{final.name}.old-{uuid.uuid4().hex[:8]}")
        if final.exists():
            os.rename(final, old)
        os.rename(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if made and not any(final.parent.iterdir()):
            final.parent.rmdir()
