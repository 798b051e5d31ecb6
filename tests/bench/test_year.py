"""The year bench's small run, in CI (issue 51): bench/year/run.py on three months of two days
of 8 slots and a few dozen pages, the stages run inline on a local data root (Airflow's own
cost and the bucket's are the month bench's test's; a pull from a bucket is
tests/release/test_pull.py's): each month written once into the
warehouse and linked by every later release, the month's round opened and resolved in the
next, each release pulled by a consumer who fetches only what is new, the agent environment
timed on it, and the last release sound. The run stops after its first month and a second
process goes on with it (``--resume``), as a year at GDELT's volume must across sessions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MONTHS = ["2025-01", "2025-02", "2025-03"]


@pytest.mark.long(seconds=100)
def test_three_months_refresh_by_the_month_and_releases_share_their_history(tmp_path):
    report_path = tmp_path / "report.json"
    command = [
        sys.executable, "-m", "bench.year.run", "--months", "3", "--days-per-month", "2",
        "--slots-per-day", "8", "--pages", "30", "--hosts", "12", "--engine", "inline",
        "--storage", "local",
        "--calls", "2", "--workdir", str(tmp_path / "year"), "--report", str(report_path),
        "--set", "testset.min_daily_mentions=10", "--set", "testset.min_documents=1",
    ]  # fmt: skip
    first = subprocess.run([*command, "--stop-after-s", "0"], capture_output=True, text=True,
                           timeout=600, cwd=REPO)  # fmt: skip
    assert first.returncode == 1, (first.stdout + first.stderr)[-4000:]
    assert "stopped before 2025-02: 1 of 3 months done" in first.stdout
    stopped = json.loads(report_path.read_text())
    assert [m["month"] for m in stopped["months"]] == MONTHS[:1] and not stopped["ok"]

    # Going on with other data is refused, before anything is touched.
    other = [*command[:-4], "--set", "testset.min_documents=2", "--resume"]
    refused = subprocess.run(other, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert refused.returncode == 2 and "--set differ from the run's" in refused.stderr

    done = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=600,
                          cwd=REPO)  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert "mirror:" not in done.stdout  # the mirror the first part built, its URLs served again
    report = json.loads(report_path.read_text())
    months = report["months"]
    assert [m["month"] for m in months] == MONTHS and report["ok"]
    assert [m["part"] for m in months] == [1, 2, 2] and months[0] == stopped["months"][0]
    assert all(report["checks"].values()) and len(report["checks"]) == 9
    assert report["problems"] == []  # the last release verifies

    for n, month in enumerate(months):
        stages = month["stages"]
        assert set(stages) >= {"ingest", "normalize", "database", "testset", "release"}
        assert all(s["code"] == 0 and s["cpu_s"] > 0 for s in stages.values())
        assert stages["ingest"]["read_mb"] > 0 and stages["release"]["written_mb"] > 0
        # A past month's files are written once: the same inodes in every later month.
        for later in months[n + 1 :]:
            mine = {p: i for p, i in month["warehouse_files"].items() if month["month"] in p}
            assert mine and all(later["warehouse_files"][p] == i for p, i in mine.items())
        calls = month["environment"]["calls"]
        assert len(calls) == 15 and all(c["p50_ms"] > 0 for c in calls.values())
        assert month["site"]["bytes"] > 0
        if n:
            # The consumer holds the releases before: it fetches the new files only, and the
            # month's round opened a month ago resolves now.
            assert month["pull"]["linked"] > 0
            manifest = Path(month["release_path"]) / "manifest.json"
            assert month["pull"]["fetched_bytes"] <= (
                month["release_new_bytes"] + manifest.stat().st_size
            )
            assert month["release_new_bytes"] < month["release_bytes"]
            assert month["rounds"]["resolve"]["code"] == 0
    storage = report["storage"]
    assert storage["releases_together_bytes"] < sum(m["release_bytes"] for m in months)
    assert set(report["growth"]) == set(months[-1]["stages"])
