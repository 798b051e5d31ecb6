"""What the tasks in ``dags/`` run: the run's config and partition, and a stage that fails fast.

Every task builds its config from the run's params (:func:`run_config`) and runs a stage by
its name through :mod:`gdelt_forecast.pipeline.runner` (:func:`run_stage`, :func:`run_day`),
as the command line does. An error no retry can mend (a bad config or param, a
:class:`StageError` such as "no warehouse at ...") becomes Airflow's ``AirflowFailException``:
the task fails at once with a one-line message that names the data root, instead of waiting
out its retries. Network and I/O errors propagate unchanged, so Airflow retries them. The
runner holds the partition's lock (:mod:`gdelt_forecast.storage.locks`), so two runs covering
one day or month take turns while other partitions run side by side.

Airflow is imported inside the functions only: the package imports without the
``[airflow]`` extra, and the DAG files import this module inside their tasks, so parsing
them stays light.
"""

from __future__ import annotations

import json
import logging
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from gdelt_forecast.ground.config import Config, ConfigError, from_dag_params
from gdelt_forecast.ground.data_root import BRONZE, LEDGER, bronze
from gdelt_forecast.ground.dates import days, month_range
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.pipeline.parameters import DAYS, Parameter, overrides
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.pipeline.stages import STAGES
from gdelt_forecast.storage.working_copy import listed, staged

log = logging.getLogger(__name__)


class ParamError(ValueError):
    """A run param that its JSON schema let through but that cannot be used."""


def _context() -> dict[str, Any]:
    from airflow.sdk import get_current_context

    return get_current_context()


@contextmanager
def fail_fast(cfg: Config | None = None) -> Iterator[None]:
    """Re-raise ConfigError, StageError and ParamError as AirflowFailException (no retry),
    naming ``cfg``'s data root; other exceptions propagate for Airflow to retry."""
    try:
        yield
    except (ConfigError, StageError, ParamError) as exc:
        if isinstance(exc, _network_errors()):
            raise
        from airflow.sdk.exceptions import AirflowFailException

        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if cfg is not None and str(cfg.data_root) not in message:
            message += f" (data root {cfg.data_root})"
        raise AirflowFailException(message) from None


def _network_errors() -> tuple[type[StageError], ...]:
    """The StageErrors a network failure raises (after the stage's own retries): a server
    or bucket that is down may be up at the next try, so Airflow retries these."""
    from gdelt_forecast.gdelt.masterfile import MasterfileError
    from gdelt_forecast.ground.embeddings import EmbeddingError
    from gdelt_forecast.storage.bucket import StorageError

    return MasterfileError, EmbeddingError, StorageError


def require_pools() -> None:
    """Fail at once, naming them, when pools this run's DAG uses were not made by
    ``gdelt-forecast airflow init`` (Airflow would leave their tasks waiting in ``scheduled``
    for ever): the DAGs run this first, in the default pool."""
    from airflow.sdk import Variable
    from airflow.sdk.exceptions import AirflowFailException

    from gdelt_forecast.orchestration.pools import MARK

    used = sorted({t.pool for t in _context()["dag"].tasks} - {"default_pool"})
    made = json.loads(Variable.get(MARK, default="[]"))
    if missing := [pool for pool in used if pool not in made]:
        raise AirflowFailException(
            f"the Airflow pool(s) {', '.join(missing)} were not made: run `gdelt-forecast "
            "airflow init` (without them this run's tasks would wait in 'scheduled' for ever)"
        )


def run_config(stage: str | None = None, taken: tuple[str, ...] = ()) -> Config:
    """The config the run's ``config``, ``data_root`` and ``set`` params ask for, with the
    config keys that the params ``taken`` of ``stage``'s parameters set; a relative data root
    is refused."""
    params = _context()["params"]
    own = [p for p in STAGES[stage].parameters if p.name in taken] if stage else []
    sets = overrides(own, params)
    with fail_fast():
        return from_dag_params({**params, "set": [*(params.get("set") or []), *sets]})


def param(declared: Parameter) -> Any:
    """The run's param of ``declared``'s name as the stage takes it (a day as a date)."""
    with fail_fast():
        try:
            return declared.check(_context()["params"].get(declared.name, declared.default))
        except ValueError as exc:
            raise ParamError(f"{declared.name}: {exc}") from None


def run_declared(name: str, taken: tuple[str, ...]) -> dict:
    """Stage ``name`` on the run's month (a month stage) with the run's params ``taken`` of
    its own: those that set config keys in its config, the others passed by name."""
    stage = STAGES[name]
    options = {p.name: param(p) for p in stage.options if p.name in taken}
    args = (run_month(),) if stage.partition == "month" else ()
    return run_stage(name, *args, taken=taken, **options)


def run_stage(name: str, *args: Any, taken: tuple[str, ...] = (), **kwargs: Any) -> dict:
    """Stage ``name`` with ``(cfg, *args, **kwargs)`` for the run's config, its record naming
    the Airflow run: prints its summary line and returns its dict (the task's XCom)."""
    cfg = run_config(name, taken)
    with fail_fast(cfg), _usage():
        summary = run(name, cfg, *args, run_id=_context()["run_id"], **kwargs)
    print(summary.line())
    return summary.to_dict()


def run_day(name: str, day: str) -> str:
    """Day stage ``name`` on ``day``; returns ``day`` for the next mapped task."""
    cfg = run_config()
    with fail_fast(cfg), _usage():
        first = date.fromisoformat(day)  # a day of the run's own list
        summary = run(name, cfg, first, first, run_id=_context()["run_id"])
    print(summary.line())
    return day


@contextmanager
def _usage() -> Iterator[None]:
    """The stage's wall seconds and bytes read and written, and its task process's CPU seconds
    and peak RSS, as the XCom ``usage``: what a task cost, beside the worker Airflow records
    it ran on."""
    start, (read, written) = time.perf_counter(), io_bytes()
    yield
    used = resource.getrusage(resource.RUSAGE_SELF)
    now = io_bytes()
    _context()["ti"].xcom_push(key="usage", value={
        "wall_s": round(time.perf_counter() - start, 3),
        "cpu_s": round(used.ru_utime + used.ru_stime, 3),
        "peak_rss_mb": round(used.ru_maxrss / 1024, 1),
        "read_bytes": now[0] - read,
        "written_bytes": now[1] - written,
    })  # fmt: skip


def io_bytes() -> tuple[int, int]:
    """The bytes this process has read and written through system calls (files, pipes and
    sockets, so a bucket's traffic too: Linux's ``rchar`` and ``wchar``); zeros where /proc
    has no ``io`` file."""
    try:
        fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
        return int(fields["rchar"]), int(fields["wchar"])
    except (OSError, KeyError, ValueError):
        return 0, 0


def requested_days(asset: Any) -> list[str]:
    """The days a build_days run covers: the ``start_date``..``end_date`` params, else
    the ``day`` of each triggering event of ``asset``."""
    ctx = _context()
    first = param(DAYS[0])
    if not first:
        events = ctx["triggering_asset_events"].get(asset, [])
        return sorted({event.extra["day"] for event in events})
    last = param(DAYS[1]) or first
    with fail_fast():
        if last < first:
            raise ParamError(f"end_date {last} is before start_date {first}")
    return [day.isoformat() for day in days(first, last)]


def run_month() -> str:
    """The ``month`` param, else the month before the run's logical date (or, for a manual
    run without one, before the time it was triggered)."""
    ctx = _context()
    if ctx["params"]["month"]:
        return ctx["params"]["month"]
    when = ctx.get("logical_date") or ctx["dag_run"].run_after
    return (when.replace(day=1) - timedelta(days=1)).strftime("%Y-%m")


def history_built() -> bool:
    """Whether every day before the run's month with bronze events has its silver events and
    documents: a month's warehouse chains every earlier month's, so a month run beside an
    earlier one (a backfill) waits here for that one's days, and says which."""
    from gdelt_forecast.warehouse.build import unbuilt_days

    cfg, month = run_config(), run_month()
    with fail_fast(cfg):
        waiting = unbuilt_days(cfg, month_range(month)[0] - timedelta(days=1))
    if waiting:
        log.info("%s waits for %d earlier days to be built: %s%s", month, len(waiting),
                 ", ".join(waiting[:3]), ", ..." if len(waiting) > 3 else "")  # fmt: skip
    return not waiting


def month_days() -> list[str]:
    """The days of the run's month that have bronze events, for the mapped per-day tasks.
    A month without any fails, and so does one missing some unless the ``partial`` param
    is true (then the missing days are logged and left out)."""
    from gdelt_forecast.events.normalize import NormalizeError

    cfg, month = run_config(), run_month()
    folder = f"{cfg.data_root}/{BRONZE}/events"  # a bucket's URL or a folder
    with fail_fast(cfg):
        first, last = month_range(month)
        wanted = days(first, last)
        present = [d.isoformat() for d in wanted if listed(cfg, bronze("events", d))]
        missing = [d.isoformat() for d in wanted if d.isoformat() not in present]
        if not present:
            raise NormalizeError(f"no bronze events for any day of {month} under {folder}")
        if missing and not _context()["params"].get("partial"):
            raise NormalizeError(
                f"no bronze events for {len(missing)} of the {len(wanted)} days of {month} under "
                f"{folder} ({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}): "
                "ingest them, or set the param partial to true to use the days there are"
            )
    if missing:
        log.warning("%s: leaving out %d days without bronze: %s", month, len(missing), missing)
    return present


# --- gdelt_ingest ------------------------------------------------------------------------------


def ingest_interval() -> tuple[datetime, datetime]:
    """The run's data interval as the ingest stage's inclusive range, naive UTC."""
    ctx = _context()
    start = datetime.fromtimestamp(ctx["data_interval_start"].timestamp(), UTC)
    end = datetime.fromtimestamp(ctx["data_interval_end"].timestamp(), UTC)
    # The stage takes an inclusive range; the interval excludes its end.
    return start.replace(tzinfo=None), end.replace(tzinfo=None) - timedelta(seconds=1)


def ingest_download() -> dict:
    """List the interval's files and fetch them; raise (to be retried) while GDELT has not
    listed the slot yet or a download failed."""
    from dataclasses import asdict

    from gdelt_forecast.gdelt.ingest import fetch_files, list_slot_files, new_summary

    cfg = run_config()
    start, end = ingest_interval()
    with fail_fast(cfg), staged(cfg, [LEDGER]) as local:  # the raw files go to the bucket
        listing = list_slot_files(local, start, end, local.gdelt.tables)
        if not listing.files:
            raise RuntimeError(f"no slot listed yet for {start:%Y-%m-%dT%H:%M}..{end:%H:%M}")
        fetched = fetch_files(local, listing)
    failed = [f"{f.file.name}: {f.detail}" for f in fetched if f.status == "failed"]
    if failed:
        raise RuntimeError(f"{len(failed)} downloads failed: {'; '.join(failed)}")
    return {
        "summary": asdict(new_summary(start, end, listing)),
        "fetched": [f.to_dict() for f in fetched],
    }


def ingest_to_bronze(downloaded: dict) -> dict:
    """Parse the downloaded files into bronze and the ledger."""
    from gdelt_forecast.gdelt.download import Fetched
    from gdelt_forecast.gdelt.ingest import Summary

    fetched = [Fetched.from_dict(item) for item in downloaded["fetched"]]
    return run_stage("bronze", fetched, Summary(**downloaded["summary"]))


def ingest_mark_day(asset: Any) -> dict:
    """On a day's last interval, emit ``asset`` (extra ``day``) once the day is complete;
    skip on other intervals, raise (to be retried) while the day is incomplete."""
    from dataclasses import asdict

    from airflow.sdk.exceptions import AirflowSkipException

    cfg = run_config()
    start, end = ingest_interval()
    if start.date() == (end + timedelta(seconds=1)).date():
        raise AirflowSkipException("not the day's last interval")
    with fail_fast(cfg):
        status = run("day_status", cfg, start.date())
    if not status.complete:
        raise RuntimeError(f"{status.day} not complete yet: {status.statuses}")
    _context()["outlet_events"][asset].extra = {"day": status.day}
    return asdict(status)
