"""The servers a distributed Airflow needs, started on 127.0.0.1 for a bench or a test and
stopped after: PostgreSQL (Debian's, the metadata database and Celery's result backend),
Redis (Debian's, the Celery broker) and an S3-compatible server (bench/harness/s3_server.py: moto's,
which keeps its buckets across a restart). Each runs in a session of its own, logging into
its folder, and binds 127.0.0.1 only. Also a static-file server for a folder (the site), and
how to start Debian's Chromium for it.

PostgreSQL refuses to run as root, so as root it runs as the ``postgres`` user the Debian
package creates.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent


# Debian's Chromium, headless under Playwright: as root (CI) its own sandbox refuses to start,
# and every host name but 127.0.0.1 resolves to nothing, so it reaches no other machine.
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


def chromium_path() -> str | None:
    """The Chromium to drive: $CHROMIUM, else Debian's ``chromium`` on the PATH."""
    return os.environ.get("CHROMIUM") or shutil.which("chromium")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def static_files(folder: Path) -> Iterator[str]:
    """``python -m http.server`` for ``folder`` on 127.0.0.1, in a thread: its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=folder))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now, for a server about to start."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, what: str, process: subprocess.Popen | None = None,
                  timeout_s: float = 60.0) -> None:  # fmt: skip
    """Return once 127.0.0.1:``port`` accepts connections; RuntimeError naming ``what``
    when ``process`` exits first or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            pass
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode} before listening")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} in {timeout_s:.0f} s")
        time.sleep(0.2)


def postgres_bin() -> Path | None:
    """The folder of Debian's PostgreSQL server programs, or None where none is installed."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(os.path.realpath(found)).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(versions[-1]).parent if versions else None


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@contextmanager
def postgres() -> Iterator[str]:
    """A PostgreSQL server with an empty database ``airflow`` (user ``airflow``, trust on
    127.0.0.1); yields its SQLAlchemy URL (psycopg2)."""
    bin_dir = postgres_bin()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL server programs not found: apt-get install postgresql")
    # Its own folder in /tmp: a pytest folder is private to root, whom the server may not be.
    base = Path(tempfile.mkdtemp(prefix="gdelt-forecast-postgres-"))
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    if os.geteuid() == 0:
        for path in (base, sock):
            shutil.chown(path, "postgres")
    port = free_port()

    def run(*command: str) -> None:
        subprocess.run(_as_server_user([str(bin_dir / command[0]), *command[1:]]),
                       check=True, capture_output=True, timeout=120)  # fmt: skip

    run("initdb", "-D", str(data), "-U", "airflow", "--auth=trust", "-E", "UTF8")
    options = f"-h 127.0.0.1 -p {port} -k {sock} -c max_connections=200"
    run("pg_ctl", "-D", str(data), "-o", options, "-l", str(base / "server.log"), "-w", "start")
    try:
        run("createdb", "-h", "127.0.0.1", "-p", str(port), "-U", "airflow", "airflow")
        yield f"postgresql+psycopg2://airflow@127.0.0.1:{port}/airflow"
    finally:
        run("pg_ctl", "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(base, ignore_errors=True)


def _start(command: list[str], log: Path, env: dict | None = None) -> subprocess.Popen:
    with log.open("ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)  # fmt: skip


def stop(*processes: subprocess.Popen, sig: int = signal.SIGTERM, timeout_s: float = 60) -> None:
    """Send ``sig`` to each process's session at once (a cluster's services stop side by side,
    not one after the other), then SIGKILL the sessions still there after ``timeout_s``."""
    for process in processes:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
    deadline = time.monotonic() + timeout_s
    for process in processes:
        try:
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextmanager
def redis(base: Path) -> Iterator[str]:
    """Debian's Redis server, in memory only; yields its ``redis://`` URL (database 0)."""
    server = shutil.which("redis-server")
    if server is None:
        raise RuntimeError("redis-server not found: apt-get install redis-server")
    base.mkdir(parents=True, exist_ok=True)
    port = free_port()
    process = _start([server, "--bind", "127.0.0.1", "--port", str(port), "--save", "",
                      "--appendonly", "no", "--dir", str(base)], base / "redis.log")  # fmt: skip
    try:
        wait_for_port(port, "redis-server", process)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(process)


class S3Server:
    """bench/harness/s3_server.py on 127.0.0.1 (``url``), its state and counts in ``base``;
    :meth:`restart` stops it, waits, and starts it again with every object."""

    def __init__(self, base: Path):
        base.mkdir(parents=True, exist_ok=True)
        self.base, self.port = base, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.counts_file = base / "counts.json"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = [sys.executable, str(HERE / "s3_server.py"), "--port", str(self.port),
                   "--state", str(self.base / "state.pickle"),
                   "--counts", str(self.counts_file)]  # fmt: skip
        self.process = _start(command, self.base / "s3.log")
        wait_for_port(self.port, "the S3 server", self.process)

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process, timeout_s=600)  # pickling a large bucket takes a while
            self.process = None

    def restart(self, down_s: float = 5.0) -> float:
        """Stop, stay down ``down_s``, start; returns the seconds the endpoint was away."""
        t0 = time.perf_counter()
        self.stop()
        time.sleep(down_s)
        self.start()
        return time.perf_counter() - t0

    def counts(self) -> dict:
        """Objects and bytes moved per stage so far (the server writes them on SIGUSR1)."""
        if self.process is not None:
            before = self.counts_file.stat().st_mtime_ns if self.counts_file.exists() else 0
            os.kill(self.process.pid, signal.SIGUSR1)
            for _ in range(50):
                if self.counts_file.exists() and self.counts_file.stat().st_mtime_ns != before:
                    break
                time.sleep(0.1)
        return json.loads(self.counts_file.read_text()) if self.counts_file.exists() else {}

    def __enter__(self) -> S3Server:
        self.start()
        return self

    def __exit__(self, *_) -> None:
        self.stop()
