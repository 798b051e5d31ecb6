"""The month bench's small run, in CI (issue 25): bench/bench_month.py on one simulated day of
8 slots and a few dozen pages, through ``monthly_refresh`` on Airflow's CeleryExecutor with
Redis as broker, PostgreSQL as metadata database and result backend, two Celery workers and
the data root in the S3 server's bucket, all started by the bench on 127.0.0.1 and stopped
after. One worker is SIGKILLed in the middle of its ``fetch_day`` task: Airflow notices,
retries the task, the fetch resumes, and the run still ends with a verified release and an
audit that holds. The report says which workers ran what.

Skipped, saying why, only where Redis or PostgreSQL is not installed (``.ci/run`` installs
both).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import local_servers  # noqa: E402 (bench/ is a folder of scripts, not a package)

pytestmark = [
    pytest.mark.skipif(shutil.which("redis-server") is None,
                       reason="redis-server not found: apt-get install redis-server"),
    pytest.mark.skipif(local_servers.postgres_bin() is None,
                       reason="PostgreSQL not found: apt-get install postgresql"),
]  # fmt: skip


def test_a_day_on_celery_survives_a_killed_worker(tmp_path):
    report_path = tmp_path / "report.json"
    command = [
        sys.executable, str(REPO / "bench/bench_month.py"), "--days", "1",
        "--slots-per-day", "8", "--pages", "30", "--hosts", "12", "--storage", "s3",
        "--workers", "2", "--faults", "kill-fetch", "--no-reference",
        "--workdir", str(tmp_path / "month"), "--report", str(report_path),
        "--set", "testset.min_daily_mentions=10", "--set", "testset.min_documents=1",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=420)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    report = json.loads(report_path.read_text())

    assert report["workers"] == ["worker1", "worker2"]  # tasks ran on both
    (kill,) = report["faults"]["events"]
    assert kill["fault"] == "worker SIGKILLed" and kill["task"] == "fetch_day"
    assert kill["running_s"] >= 3.0  # in the middle of it, not before it began
    fetch = [t for t in report["tasks"] if t["task_id"] == "fetch_day"]
    states = {t["try_number"]: t["state"] for t in fetch}
    assert states[1] != "success" and states[max(states)] == "success", fetch
    assert any(t["hostname"] == kill["worker"] and t["try_number"] == 1 for t in fetch)

    audit = report["audit"]
    assert audit["ok"] and audit["release"]["problems"] == [] and audit["run"]["state"] == "success"
    # The fetch that was cut short lost no URL: every one has its ledger row and outcome.
    assert audit["urls"]["urls"] > 20 and audit["urls"]["lost"] == []
    assert audit["urls"]["not_in_ledger"] == [] and audit["pages"]["lost"] == []
    assert audit["ingest"]["served"] == 13 and audit["ingest"]["problems"] == []
    assert Path(report["release"], "manifest.json").exists()
    stages = {s["name"]: s for s in report["stages"]}
    assert stages["fetch"]["tries"] >= 2 and stages["release"]["bucket"]["objects_up"] > 0
    assert all(s["peak_rss_mb"] > 0 for n, s in stages.items() if n not in ("pools", "days"))
