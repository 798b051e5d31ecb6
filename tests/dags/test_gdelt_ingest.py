"""The gdelt_ingest DAG: it parses cleanly and light, and a dag.test() run fills bronze."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import SLOT

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "dags"


@pytest.fixture
def airflow_env(tmp_path):
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(tmp_path / "airflow"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "PYTHONPATH": str(REPO),
    }
    return env


def python(code: str, env: dict, timeout: int = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_dagbag_imports_without_errors_or_heavy_imports(airflow_env):
    result = python(
        """
        import json, sys
        from airflow.dag_processing.dagbag import DagBag
        bag = DagBag()
        dag = bag.dags["gdelt_ingest"]
        print(json.dumps({
            "errors": {k: str(v) for k, v in bag.import_errors.items()},
            "tasks": sorted(dag.task_dict),
            "doc": dag.doc_md.strip().splitlines()[0],
            "retries": dag.task_dict["download"].retries,
            "backoff": bool(dag.task_dict["download"].retry_exponential_backoff),
            "pipeline_loaded": sorted(m for m in sys.modules if m.startswith("pipeline")),
        }))
        """,
        airflow_env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    info = json.loads(result.stdout.strip().splitlines()[-1])
    assert info["errors"] == {}
    assert info["tasks"] == ["download", "mark_day", "to_bronze"]
    assert info["doc"] == "### GDELT ingest"
    assert info["retries"] >= 3 and info["backoff"]
    assert info["pipeline_loaded"] == []


def test_dag_test_run_ingests_its_interval_from_a_local_mirror(airflow_env, file_mirror, tmp_path):
    file_mirror.add_real_slot()
    data_root = tmp_path / "data"
    migrate = subprocess.run(
        [str(Path(sys.executable).with_name("airflow")), "db", "migrate"],
        env=airflow_env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert migrate.returncode == 0, migrate.stderr[-3000:]
    result = python(
        f"""
        from datetime import datetime, UTC
        from airflow.dag_processing.dagbag import DagBag
        dag = DagBag().dags["gdelt_ingest"]
        run = dag.test(
            # The run after 22:15 covers the interval [22:00, 22:15): slot {SLOT}.
            logical_date=datetime(2025, 8, 7, 22, 15, tzinfo=UTC),
            run_conf={{"data_root": {str(data_root)!r},
                       "set": ["gdelt.base_url={file_mirror.url}", "download.backoff_s=0"]}},
        )
        print("STATE", run.state)
        """,
        airflow_env,
    )
    assert "STATE success" in result.stdout, (result.stdout + result.stderr)[-5000:]
    events = pq.read_table(data_root / "bronze/events/date=2025-08-07" / f"{SLOT}.parquet")
    assert events.num_rows == 909
    ledger = pq.read_table(data_root / "bronze/slots.parquet").to_pylist()
    assert sorted((r["table"], r["status"], r["rows"]) for r in ledger) == [
        ("export", "downloaded", 909),
        ("mentions", "downloaded", 3366),
    ]
