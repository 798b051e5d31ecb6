"""The demo month with its data root in a bucket of a real S3-compatible server (moto, on
127.0.0.1), through the CLI as a user runs it: ingested, normalized, its pages processed,
its test set, timelines and tasks built, released and verified; the release read back
with DuckDB and `datasets`, and compared with the same month built on a local disk."""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stdout
from pathlib import Path

import duckdb
import pytest

from gdelt_forecast.cli import main
from gdelt_forecast.pipeline.runner import run
from tests.conftest import new_bucket
from tests.release.conftest import DAYS, FIRST_DAY, LAST_DAY, MONTH, REPO, demo_month, sample_pages

DEMO = str(REPO / "configs" / "demo.yaml")


@pytest.fixture(scope="module")
def local_release(tmp_path_factory, demo_built) -> tuple[Path, Path, Path]:
    """The month built on a local disk: its release, the mirror it was built from (its slots
    name it) and the pages' archive."""
    base = tmp_path_factory.mktemp("local")
    cfg = demo_month(demo_built, base / "data", base / "mirror")
    release = Path(run("release", cfg, MONTH).path)
    return release, demo_built / "mirror", base / "data" / "pages.warc.gz"


def _cli(*args: str) -> None:
    code = main(list(args))
    assert code == 0, f"gdelt-forecast {' '.join(args)} exited {code}"


@pytest.fixture(scope="module")
def in_bucket(local_release, s3_endpoint, tmp_path_factory):
    """The demo month built with --data-root s3://<bucket>/demo from an empty working
    directory; returns the data root, the machine's local folder and the release's URL."""
    _, mirror, archive = local_release
    cwd = tmp_path_factory.mktemp("cwd")
    root, machine = f"{new_bucket()}/demo", tmp_path_factory.mktemp("machine")
    common = ["--config", DEMO, "--data-root", root, "--set", f"storage.local_dir={machine}"]
    span = ["--start-date", FIRST_DAY.isoformat(), "--end-date", LAST_DAY.isoformat()]
    pages = ["--set", f"articles.archives=[{archive}]"]
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(cwd)
        _cli(
            "ingest",
            "--start",
            "2025-07-22T21:45",
            "--end",
            "2025-08-12T23:45",
            *common,
            "--set",
            f"gdelt.base_url={mirror.as_uri()}",
        )
        for day in DAYS:  # as `make demo`: normalize wants bronze on every day of its range
            _cli(
                "normalize", "--start-date", day.isoformat(), "--end-date", day.isoformat(), *common
            )
        _cli("articles", "fetch", *span, *common, *pages)
        _cli("articles", "process", *span, *common, *pages)
        _cli("database", *common)
        for stage in ("testset", "timelines", "tasks", "reasoning"):
            _cli(stage, "--month", MONTH, *common)
        out = io.StringIO()
        with redirect_stdout(out):
            _cli("release", "--month", MONTH, "--json", *common)
    assert sorted(p.name for p in cwd.iterdir()) == []  # no "s3:" folder, nothing at all
    return root, machine, json.loads(out.getvalue())["path"]


@pytest.mark.long(seconds=35)  # with its fixtures' build of the month
def test_the_demo_month_is_released_into_the_bucket_and_verifies(
    in_bucket, local_release, s3fs_client, capsys
):
    root, machine, url = in_bucket
    bucket_root = root.removeprefix("s3://")
    assert url == f"{root}/releases/2025.08.0"
    keys = {k.removeprefix(bucket_root + "/") for k in s3fs_client.find(bucket_root)}
    assert {
        "bronze/slots.parquet",
        "silver/events/date=2025-08-07/part-0.parquet",
        "articles/docs/date=2025-08-07/part-0.parquet",
        "testset/2025-08/queries.parquet",
        "testset/2025-08/_record.json",
        "tasks/2025-08/MCNC/test.parquet",
        "releases/LATEST",
        "releases/2025.08.0/manifest.json",
    } <= keys
    # The warehouse, the locks, scratch and the staging copy never reach the bucket.
    assert not [k for k in keys if k.startswith(("warehouse", "locks/", "tmp/", ".sync"))]
    assert not [k for k in keys if "/." in f"/{k}"]
    assert s3fs_client.cat_file(f"{bucket_root}/releases/LATEST") == b"2025.08.0\n"
    assert (machine / "s3" / bucket_root / "warehouse.duckdb").exists()

    assert main(["release", "verify", url]) == 0
    assert capsys.readouterr().out.strip() == f"release verify {url}: sound"

    # Every Parquet file of the release equals the local build's, byte for byte.
    local, _, _ = local_release
    released = json.loads(s3fs_client.cat_file(f"{url}/manifest.json"))
    mine = json.loads((local / "manifest.json").read_text())
    parquet = {f["path"]: f["sha256"] for f in mine["files"] if f["path"].endswith(".parquet")}
    assert parquet and parquet == {
        f["path"]: f["sha256"] for f in released["files"] if f["path"].endswith(".parquet")
    }
    assert released["config"]["data_root"] == root  # the bucket, not the working copy
    assert released["testset"] == mine["testset"] and released["tasks"] == mine["tasks"]

    # The day stages' records reached the bucket, naming the same files as the local ones
    # (the local month has no fetch run: its pages come from the archive).
    assert {f"records/fetch/date={day}.json" for day in DAYS} <= keys
    for stage in ("normalize", "process"):
        for day in DAYS:
            rel = f"records/{stage}/date={day}.json"
            there = json.loads(s3fs_client.cat_file(f"{bucket_root}/{rel}"))
            here = json.loads((local.parents[1] / rel).read_text())
            assert there["files"] == here["files"] and there["partition"] == str(day)


def test_the_release_in_the_bucket_reads_with_duckdb_and_datasets(
    in_bucket, local_release, s3fs_client, s3_endpoint, tmp_path, monkeypatch
):
    _, _, url = in_bucket
    local, _, _ = local_release
    with duckdb.connect() as con:
        con.register_filesystem(s3fs_client)
        remote = con.execute(f"SELECT count(*), sum(daily_mentions) FROM '{url}/quads/*.parquet'")
        remote = remote.fetchone()
        here = con.execute(f"SELECT count(*), sum(daily_mentions) FROM '{local}/quads/*.parquet'")
        assert remote == here.fetchone() and remote[0] > 0

    import datasets
    from datasets import load_dataset

    # The embedding model set the hub offline; the bucket is on 127.0.0.1, and datasets
    # refuses every remote URL while offline.
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)

    queries = load_dataset(
        "parquet",
        data_files={"test": f"{url}/testset/queries.parquet"},
        storage_options={"client_kwargs": {"endpoint_url": s3_endpoint}},
        cache_dir=str(tmp_path / "hf"),
        split="test",
    )
    expected = duckdb.execute(f"SELECT count(*) FROM '{local}/testset/queries.parquet'").fetchone()
    assert queries.num_rows == expected[0] > 0
    assert set(queries.column_names) >= {"query_id", "date", "answer"}


def test_a_second_machine_builds_its_warehouse_from_the_bucket(in_bucket, tmp_path):
    """Another machine (its own local folder) has no silver Parquet and no warehouse: its
    test set of the month is built on a warehouse read from the bucket, equal to the first's."""
    root, first, _ = in_bucket
    other = tmp_path / "other-machine"
    code = main(
        [
            "testset",
            "--month",
            MONTH,
            "--config",
            DEMO,
            "--data-root",
            root,
            "--set",
            f"storage.local_dir={other}",
        ]
    )
    assert code == 0
    copy = other / "s3" / root.removeprefix("s3://")
    assert (copy / "warehouse.duckdb").exists() and not (copy / "silver").exists()
    mine = first / "s3" / root.removeprefix("s3://") / "testset" / MONTH / "queries.parquet"
    assert (copy / "testset" / MONTH / "queries.parquet").read_bytes() == mine.read_bytes()


def test_the_demo_pages_script_reads_a_bucket(in_bucket, tmp_path):
    root, machine, _ = in_bucket
    out = tmp_path / "pages.warc.gz"
    done = sample_pages(root, out, env={**os.environ, "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 0 and "sample pages archived" in done.stdout
    # Its working copy went to the default local folder (under HOME), with no silver in it.
    assert (tmp_path / ".cache/gdelt-forecast/s3" / root.removeprefix("s3://")).is_dir()
