"""An S3-compatible server for the month bench: moto's server on 127.0.0.1 that keeps its
buckets across a restart and counts what each stage moved.

moto keeps its buckets in memory only, so a restart would lose them, where a real S3
service keeps them: on SIGTERM this process pickles moto's S3 state to ``--state`` and on
start loads it back (moto's objects pickle; written here because moto has no persistence of
its own). A restart is then what the bench's fault asks for: the endpoint refuses
connections for a while and comes back with every object.

Each request is counted by the ``app/<id>`` part of its User-Agent (the stage, which
:mod:`gdelt_forecast.pipeline.runner` puts there through ``AWS_SDK_UA_APP_ID``) and by direction:
``objects``/``bytes`` sent to the bucket (PUT, POST) and read from it (GET), written as
JSON to ``--counts`` on SIGUSR1 and at the end (and read back by a restart).

Run: ``python -m bench.harness.s3_server --port P --state FILE --counts FILE``.
"""

from __future__ import annotations

import argparse
import json
import pickle
import re
import signal
import sys
import threading
from collections import defaultdict
from pathlib import Path

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from moto.s3 import models
from werkzeug.serving import make_server

_APP = re.compile(r"\bapp/([\w.-]+)")


class Counting:
    """WSGI middleware: objects and bytes per (app id, direction)."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
        self.counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))

    def __call__(self, environ, start_response):
        found = _APP.search(environ.get("HTTP_USER_AGENT", ""))
        who = found.group(1) if found else "other"
        method = environ["REQUEST_METHOD"]
        sent = int(environ.get("CONTENT_LENGTH") or 0)
        body = self.app(environ, start_response)
        received = 0
        for chunk in body:
            received += len(chunk)
            yield chunk
        with self.lock:
            counts = self.counts[who]
            counts["requests"] += 1
            if method in ("PUT", "POST") and sent:
                counts["objects_up"] += 1
                counts["bytes_up"] += sent
            elif method == "GET" and not environ.get("QUERY_STRING"):  # not a listing
                counts["objects_down"] += 1
                counts["bytes_down"] += received


def _load(state: Path) -> None:
    if state.exists():
        with state.open("rb") as f:
            saved = pickle.load(f)
        for account, regions in saved.items():
            for region, backend in regions.items():
                models.s3_backends[account][region] = backend


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--counts", type=Path, required=True)
    args = parser.parse_args()
    _load(args.state)
    app = Counting(DomainDispatcherApplication(create_backend_app))
    if args.counts.exists():  # a restart goes on counting
        for who, counts in json.loads(args.counts.read_text()).items():
            app.counts[who].update(counts)
    server = make_server("127.0.0.1", args.port, app, True, request_handler=MotoRequestHandler)

    def write_counts(*_) -> None:
        with app.lock:
            args.counts.write_text(json.dumps(app.counts, indent=1, sort_keys=True))

    def stop(*_) -> None:
        threading.Thread(target=server.shutdown).start()  # shutdown() waits for serve_forever

    signal.signal(signal.SIGUSR1, write_counts)
    signal.signal(signal.SIGTERM, stop)
    server.serve_forever()
    write_counts()
    partial = args.state.with_suffix(".partial")
    with partial.open("wb") as f:
        pickle.dump(models.s3_backends, f)
    partial.replace(args.state)
    sys.exit(0)


if __name__ == "__main__":
    main()
