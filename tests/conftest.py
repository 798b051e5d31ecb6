"""Shared fixtures: real GDELT files, GDELT-shaped mirrors, and a mirror server on 127.0.0.1."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import threading
import uuid
from collections import Counter, defaultdict
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from filelock import FileLock

# A TCP port free on 127.0.0.1 now, for a server a test starts: the benches' helper.
from bench.harness.servers import free_port  # noqa: F401
from gdelt_forecast.gdelt import bronze, mirror
from gdelt_forecast.gdelt.masterfile import SlotFile
from gdelt_forecast.gdelt.parse import parse_bytes
from gdelt_forecast.ground.config import Config, load_config

FIXTURES = Path(__file__).parent / "fixtures" / "gdelt"
SLOT = "20250807220000"
EXPORT_CSV = FIXTURES / f"{SLOT}.export.CSV"
MENTIONS_CSV = FIXTURES / f"{SLOT}.mentions.CSV"
# Demo-only days derived from the real slot (fixtures/gdelt/demo-days/README.md).
DEMO_DAYS_CSV = sorted((FIXTURES / "demo-days").glob("*.CSV"))


def copy_worktree(folder: Path) -> None:
    """This checkout's files as they stand, tracked and new (not ignored), into ``folder``:
    what a test of the code as it is, not as last committed, starts from."""
    repo = Path(__file__).resolve().parents[1]
    listed = subprocess.run(["git", "-C", str(repo), "ls-files", "-co", "--exclude-standard"],
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    for name in listed.splitlines():
        if (repo / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(repo / name, folder / name)


def line_count(path: Path) -> int:
    return path.read_bytes().count(b"\n")


class Mirror:
    """A folder laid out like GDELT's: slot zips plus masterfilelist.txt."""

    def __init__(self, root: Path):
        self.root = root
        self.entries: list[tuple[int, str, str]] = []

    def add(self, csv_name: str, data: bytes, md5: str | None = None, listed_only=False):
        size, real_md5, name = mirror.add_file(self.root, csv_name, data)
        if listed_only:
            (self.root / name).unlink()
        self.entries.append((size, md5 or real_md5, name))
        mirror.write_masterfile(self.root, self.entries)
        return self

    def add_real_slot(self):
        self.add(EXPORT_CSV.name, EXPORT_CSV.read_bytes())
        return self.add(MENTIONS_CSV.name, MENTIONS_CSV.read_bytes())

    def add_demo_slots(self):
        """The demo's five slots, as `make demo` mirrors them: the real one and the four
        demo-only days derived from it."""
        for path in DEMO_DAYS_CSV:
            self.add(path.name, path.read_bytes())
        return self.add_real_slot()


class _Handler(SimpleHTTPRequestHandler):
    def __init__(self, *args, server_state, **kwargs):
        self.state = server_state
        super().__init__(*args, **kwargs)

    def do_GET(self):  # noqa: N802 (http.server's naming)
        name = self.path.rsplit("/", 1)[-1]
        self.state["requests"][name] += 1
        faults = self.state["faults"].get(name)
        if faults and faults[0] == "truncate":
            faults.pop(0)
            body = (Path(self.directory) / name).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.close_connection = True
            return
        if faults:
            self.send_error(faults.pop(0))
            return
        super().do_GET()

    def log_message(self, *args):
        pass


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``long(seconds)`` (mostly waiting on servers and Airflow) run first,
    the longest first, so that the workers start them at once and the short tests fill in
    beside them instead of one long test ending the run alone. `make test` hands out whole
    files in this order, each to the next free worker (``--dist loadscope
    --no-loadscope-reorder``), so a file's fixtures are made once (xdist's default, ``load``,
    sends each worker a block of consecutive tests first: every long test went to one)."""

    def seconds(item: pytest.Item) -> float:
        long = item.get_closest_marker("long")
        return long.kwargs.get("seconds", 60) if long else 0

    items.sort(key=seconds, reverse=True)


def made_once(tmp_path_factory, name: str, make) -> Path:
    """The folder ``name``, made by ``make(folder)`` once for the whole test run: by the
    first xdist worker to ask, under a lock, the others waiting and then reading it. Its
    users must not change it. Where ``$TESTS_MADE_ONCE`` names a folder, it is made there,
    once for several runs: `make test`'s two (the `alone` tests' run reads the demo month the
    first one made)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, above the worker's own (popen-gwN)
    base = Path(os.environ.get("TESTS_MADE_ONCE") or base)
    folder = base / name
    with FileLock(f"{folder}.lock"):
        if not (folder / ".made").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (folder / ".made").touch()
    return folder


@pytest.fixture(scope="session")
def demo_built(tmp_path_factory) -> Path:
    """The demo month, built once for the run (tests/release/conftest.py): ``data/`` and
    ``mirror/``. Tests take copies (``demo_month``)."""
    from tests.release.conftest import build_demo_month

    def build(folder: Path) -> None:
        build_demo_month(folder / "data", Mirror(folder / "mirror").add_demo_slots().root)

    return made_once(tmp_path_factory, "demo-month", build)


@pytest.fixture
def http_mirror(tmp_path):
    """Serve ``Mirror`` from 127.0.0.1; ``faults[name]`` lists what to answer before serving
    the file (an HTTP error code, or "truncate": half the body, then close), and
    ``requests[name]`` counts GETs."""
    root = tmp_path / "mirror"
    root.mkdir()
    state = {"faults": defaultdict(list), "requests": Counter()}
    handler = partial(_Handler, directory=str(root), server_state=state)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    served = Mirror(root)
    served.url = f"http://127.0.0.1:{server.server_address[1]}"
    served.faults = state["faults"]
    served.requests = state["requests"]
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def file_mirror(tmp_path):
    served = Mirror(tmp_path / "file-mirror")
    served.url = (tmp_path / "file-mirror").as_uri()
    return served


@pytest.fixture
def make_config(tmp_path):
    def make(base_url: str, *overrides: str) -> Config:
        return load_config(
            None,
            [f"gdelt.base_url={base_url}", "download.backoff_s=0", *overrides],
            tmp_path / "data",
        )

    return make


def write_bronze(data_root: Path, slot: str, table: str, data: bytes) -> None:
    """Put CSV rows into bronze the way ingest does, without a mirror."""
    name = f"{slot}.{table}.CSV.zip"
    file = SlotFile(slot, "english", table, len(data), "", name, name)
    parsed = parse_bytes(data, table, name)
    bronze.write_slot(data_root / "bronze", file, parsed, "zstd", previous=())


@pytest.fixture
def real_day(tmp_path) -> Path:
    """A data root whose bronze holds the real 2025-08-07 22:00 slot."""
    root = tmp_path / "data"
    write_bronze(root, SLOT, "export", EXPORT_CSV.read_bytes())
    write_bronze(root, SLOT, "mentions", MENTIONS_CSV.read_bytes())
    return root


# --- a real S3-compatible server: moto's server mode on 127.0.0.1, with the credentials and
# endpoint in the standard AWS environment variables. Nothing reaches beyond loopback: the
# AWS config files point at an empty file and the instance metadata service is off.


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory) -> str:
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # a line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    empty = tmp_path_factory.mktemp("aws") / "none"
    empty.write_text("")
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": url,
        "AWS_CONFIG_FILE": str(empty),
        "AWS_SHARED_CREDENTIALS_FILE": str(empty),
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    yield url
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    server.stop()


def new_bucket() -> str:
    """A new, empty bucket on the server (``s3_endpoint`` must be up): ``s3://<name>``."""
    import s3fs

    name = f"test-{uuid.uuid4().hex[:12]}"
    s3fs.S3FileSystem(skip_instance_cache=True).mkdir(name)
    return f"s3://{name}"


@pytest.fixture
def s3fs_client(s3_endpoint):
    import s3fs

    return s3fs.S3FileSystem(skip_instance_cache=True)


@pytest.fixture
def bucket_url(s3_endpoint) -> str:
    return new_bucket()
