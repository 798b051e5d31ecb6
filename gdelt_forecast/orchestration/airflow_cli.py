"""Airflow's own command line, run in this process: ``gdelt-forecast airflow init`` and
``airflow wait`` each run a series of Airflow commands, and a fresh ``airflow`` process spends
4 s of CPU importing Airflow before it reads a row. Here Airflow is imported once, and each
command is parsed and run as its console script would run it, against whatever metadata
database the environment configures; what it prints, and what it logs, is captured.

Written by hand: Airflow's CLI has no entry point that runs one command and returns its
output (``airflow.__main__.main`` reads ``sys.argv``, prints, and exits).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import sys
from functools import cache

from gdelt_forecast.ground.errors import StageError

NOT_INSTALLED = (
    "Airflow (not installed: `make airflow`, or pip install '.[airflow]' -c constraints.txt "
    "in a checkout)"
)


@cache
def _parser():
    try:
        from airflow.cli import cli_parser
        from airflow.configuration import write_default_airflow_configuration_if_needed
    except ImportError as exc:  # Airflow's own, or one its configuration needs (a driver)
        missing = NOT_INSTALLED if (exc.name or "").split(".")[0] == "airflow" else "Airflow"
        raise StageError(f"{missing} cannot start: {exc}") from None
    # As airflow.__main__ does before any command: a new home gets its airflow.cfg.
    write_default_airflow_configuration_if_needed()
    return cli_parser.get_parser()


def airflow(*args: str) -> str:
    """What ``airflow ARGS`` prints on stdout, or StageError naming the command and the last
    line it printed or logged when it fails."""
    parser = _parser()
    out, err = io.StringIO(), io.StringIO()
    # Airflow's console log handler holds the process's own stdout, which redirect_stdout
    # leaves alone.
    handlers = [
        h
        for h in logging.getLogger().handlers
        if getattr(h, "stream", None) in (sys.stdout, sys.stderr)
    ]
    streams = [h.setStream(err) for h in handlers]
    failure = None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            parsed = parser.parse_args(list(args))
            parsed.func(parsed)
    except SystemExit as exc:  # the CLI's way to refuse, with a message or a status
        if exc.code not in (0, None):
            failure = exc.code if isinstance(exc.code, str) else ""
    except Exception as exc:
        failure = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}"
    finally:
        for handler, stream in zip(handlers, streams, strict=True):
            handler.setStream(stream)
    if failure is not None:
        last = failure or (err.getvalue().strip().splitlines() or ["no message"])[-1]
        raise StageError(f"airflow {' '.join(args[:3])} failed: {last}")
    return out.getvalue()


def airflow_json(*args: str) -> list[dict]:
    """The rows ``airflow ARGS -o json`` prints."""
    printed = airflow(*args, "-o", "json")
    # Airflow may print warnings before the JSON.
    text = printed if printed.startswith("[") else printed[printed.find("\n[") + 1 :]
    return json.loads(text) if text.strip() else []
