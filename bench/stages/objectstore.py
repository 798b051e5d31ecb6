"""Benchmark: the data root in a bucket of a local S3 server versus on the local disk.

Measured, each through the CLI (``gdelt_forecast.cli.main``) as a user runs it, with the data root
a fresh folder or a fresh prefix of one bucket:

- ``ingest demo``: the demo month's ingest (the real 2025-08-07 22:00 slot, export and
  mentions, from a file:// mirror);
- ``release``: the demo month's ``testset``, ``timelines`` and ``tasks`` and its
  ``release`` (tables, MIRAI files, the stages' files, embeddings, card, manifest; on S3
  also the upload under a temporary prefix, the copy into place and LATEST), after an
  untimed normalize, article pages and database;
- ``ingest day``: the ingest bench's synthetic day (96 slots x export and mentions, 192 files)
  from its file:// mirror, where the per-file costs of the bucket show.

The S3 server is moto's (``moto_server``) on 127.0.0.1, in its own process so that it does
not share the pipeline's interpreter; the working copy (storage.local_dir) is a fresh
folder for every run, so every run pulls what it reads. Each measurement is the median
of ``--repeat`` runs after one untimed warm-up (imports, the embedding model), disk and S3
alternating. The ratio is S3 over disk: what moving the data root into a bucket costs on
one machine, transfers included (on a real network add its latency per request).

Run: ``python -m bench.stages.objectstore [--workdir bench-data] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

from bench.harness import REPO
from bench.harness import servers as local_servers
from bench.stages.ingest import build_mirror, slots

DEMO = str(REPO / "configs" / "demo.yaml")
DAY = "2025-08-07"


def start_server() -> tuple[subprocess.Popen, str]:
    port = local_servers.free_port()
    moto = Path(sys.executable).with_name("moto_server")
    server = subprocess.Popen(
        [str(moto), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        local_servers.wait_for_port(port, "moto_server", server, timeout_s=10)
    except RuntimeError as exc:
        server.kill()
        sys.exit(str(exc))
    return server, f"http://127.0.0.1:{port}"


def cli(*args: str) -> float:
    from gdelt_forecast.cli import main

    t0 = time.perf_counter()
    code = main(list(args))
    if code:
        sys.exit(f"gdelt-forecast {' '.join(args)} exited {code}")
    return time.perf_counter() - t0


def one_run(root: str, machine: Path, mirrors: dict[str, Path], archive: Path) -> dict:
    common = ["--config", DEMO, "--data-root", root, "--set", f"storage.local_dir={machine}"]
    day = ["--start-date", DAY, "--end-date", DAY]
    pages = ["--set", f"articles.archives=[{archive}]"]
    out = {
        "ingest demo": cli(
            "ingest",
            "--start",
            f"{DAY}T21:45",
            "--end",
            f"{DAY}T23:45",
            *common,
            "--set",
            f"gdelt.base_url={mirrors['demo'].as_uri()}",
        )
    }
    cli("normalize", *day, *common)
    cli("articles", "process", *day, *common, *pages)
    cli("database", *common)
    month = ["--month", "2025-08"]
    out["release"] = sum(
        cli(stage, *month, *common) for stage in ("testset", "timelines", "tasks", "reasoning")
    )
    out["release"] += cli("release", *month, "--version", "bench", *common)
    first, last = slots(1)[0], slots(1)[-1]
    when = [f"{s[:4]}-{s[4:6]}-{s[6:8]}T{s[8:10]}:{s[10:12]}" for s in (first, last)]
    out["ingest day"] = cli(
        "ingest",
        "--start",
        when[0],
        "--end",
        when[1],
        *common,
        "--set",
        f"gdelt.base_url={mirrors['day'].as_uri()}",
    )
    return out


def prepare(work: Path) -> tuple[dict[str, Path], Path]:
    """The demo's mirror and its pages' web archive (made from a local build), and
    the ingest bench's one-day mirror."""
    from gdelt_forecast.gdelt import mirror

    demo = work / "demo-mirror"
    fixtures = sorted((REPO / "tests/fixtures/gdelt").glob("20250807220000.*.CSV"))
    mirror.write_masterfile(demo, [mirror.add_file(demo, p.name, p.read_bytes()) for p in fixtures])
    build_mirror(work / "day", 1)
    seed, archive = work / "seed", work / "pages.warc.gz"
    if not archive.exists():
        common = ["--config", DEMO, "--data-root", str(seed)]
        cli(
            "ingest",
            "--start",
            f"{DAY}T21:45",
            "--end",
            f"{DAY}T23:45",
            *common,
            "--set",
            f"gdelt.base_url={demo.as_uri()}",
        )
        cli("normalize", "--start-date", DAY, "--end-date", DAY, *common)
        day = ["--start-date", DAY, "--end-date", DAY]
        subprocess.run(
            [sys.executable, "demo/sample_pages.py", *common, *day, "--out", str(archive)],
            cwd=REPO,
            check=True,
        )
    return {"demo": demo, "day": work / "day" / "mirror"}, archive


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=REPO / "bench-data")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = (args.workdir / "objectstore").resolve()
    work.mkdir(parents=True, exist_ok=True)
    server, endpoint = start_server()
    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_EC2_METADATA_DISABLED": "true",
            "HF_HUB_OFFLINE": "1",
        }
    )
    try:
        import s3fs

        s3fs.S3FileSystem().mkdir("bench")
        mirrors, archive = prepare(work)
        runs: dict[str, list[dict]] = {"disk": [], "s3": []}
        for n in range(args.repeat + 1):
            for kind in ("disk", "s3"):
                scratch = work / "runs" / f"{kind}-{n}"
                shutil.rmtree(scratch, ignore_errors=True)
                root = f"s3://bench/{uuid.uuid4().hex}" if kind == "s3" else str(scratch / "data")
                result = one_run(root, scratch / "machine", mirrors, archive)
                print(
                    f"run {n}{' (warm-up)' if n == 0 else ''} {kind}: "
                    + ", ".join(f"{k} {v:.2f} s" for k, v in result.items()),
                    file=sys.stderr,
                )
                if n:
                    runs[kind].append(result)
                shutil.rmtree(scratch, ignore_errors=True)
    finally:
        server.terminate()
        server.wait()
    print(
        f"\nmedian of {args.repeat} runs, data root on disk vs in a bucket of moto_server "
        "on 127.0.0.1"
    )
    print(f"{'step':<12} {'disk s':>8} {'S3 s':>8} {'S3/disk':>8}")
    for step in runs["disk"][0]:
        disk = statistics.median(r[step] for r in runs["disk"])
        s3 = statistics.median(r[step] for r in runs["s3"])
        print(f"{step:<12} {disk:>8.2f} {s3:>8.2f} {s3 / disk:>7.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
