"""The command line: exit codes, one-line errors, the summary line and --json."""

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from gdelt_forecast import cli
from gdelt_forecast.cli import main
from gdelt_forecast.ground.version import code_version
from gdelt_forecast.pipeline.parameters import moment
from tests.conftest import SLOT

RANGE = ["--start", "2025-08-07T22:00", "--end", "2025-08-07T23:45"]


def run(*args):
    """Through the installed entry point, as a user types it."""
    return subprocess.run(
        [sys.executable, "-m", "gdelt_forecast.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_ingest_prints_a_summary_and_json(file_mirror, tmp_path):
    file_mirror.add_real_slot()
    common = [
        *RANGE,
        "--data-root",
        str(tmp_path / "d"),
        "--set",
        f"gdelt.base_url={file_mirror.url}",
    ]
    first = run("ingest", *common)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("ingest 2025-08-07T22:00..2025-08-07T23:45: 1 slots (2 files)")
    assert (
        "2 downloaded, 0 cached, 0 missing, 0 corrupt, 0 failed; 4,275 rows written" in first.stdout
    )
    second = run("ingest", *common, "--json", "--tables", "export")
    summary = json.loads(second.stdout)
    assert (summary["cached"], summary["rows_written"], summary["files"]) == (1, 909, 1)


def test_failed_download_exits_1(http_mirror, tmp_path, capsys):
    http_mirror.add_real_slot()
    http_mirror.faults[f"{SLOT}.mentions.CSV.zip"] += [403]
    code = main(
        [
            "ingest",
            *RANGE,
            "--data-root",
            str(tmp_path),
            "--set",
            f"gdelt.base_url={http_mirror.url}",
        ]
    )
    assert code == 1
    assert "1 failed" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, message",
    [
        (["ingest", *RANGE, "--set", "download.parallelism=x"], "download.parallelism"),
        (["ingest", *RANGE, "--set", "gdelt.nope=1"], "unknown key 'gdelt.nope'"),
        (["ingest", "--start", "yesterday", "--end", "2025-08-07"], "'yesterday' is not"),
        (
            ["ingest", *RANGE, "--tables", "export", "gkg"],
            "argument --tables: 'gkg' is not one of ['export', 'mentions']",
        ),
        (["ingest", "--start", "2025-08-08", "--end", "2025-08-07"], "in the wrong order"),
        (["ingest", *RANGE, "--config", "/nonexistent.yaml"], "cannot read /nonexistent.yaml"),
        # refused before Airflow is asked anything
        (["airflow", "run", "monthly_refresh", "--conf", "{month: 1}"], "--conf is not JSON"),
        (["airflow", "run", "monthly_refresh", "--conf", "[1]"], "--conf must be a JSON object"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    result = run(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_unreachable_mirror_exits_1(tmp_path):
    result = run(
        "ingest",
        *RANGE,
        "--data-root",
        str(tmp_path),
        "--set",
        f"gdelt.base_url={(tmp_path / 'none').as_uri()}",
    )
    assert result.returncode == 1
    assert "masterfilelist.txt: HTTP 404" in result.stderr


def test_moments():
    assert moment("2025-08-07", end=True).isoformat() == "2025-08-07T23:59:59"
    assert moment("2025-08-07T22:00+02:00").isoformat() == "2025-08-07T20:00:00"


def test_normalize_database_stats(real_day, capsys):
    days = ["--start-date", "2025-08-07", "--end-date", "2025-08-07"]
    root = ["--data-root", str(real_day), "--set", "events.min_daily_mentions=1"]
    assert main(["normalize", *days, *root]) == 0
    line = capsys.readouterr().out
    assert line.startswith("normalize 2025-08-07..2025-08-07: 1 days, 909 records in")
    assert main(["database", *root, "--json"]) == 0
    built = json.loads(capsys.readouterr().out)
    assert built["days"] == 1 and built["quads"] > 0
    assert main(["stats", *days, *root, "--top", "2"]) == 0
    report = capsys.readouterr().out
    assert report.startswith("funnel 2025-08-07..2025-08-07")
    assert "top relations" in report and "top country pairs" in report


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["normalize", "--start-date", "2025-08-07", "--end-date", "2025-08-07"], 1,
         "no bronze events for 2025-08-07: ingest them first"),
        (["stats", "--start-date", "2025-08-07", "--end-date", "2025-08-07"], 1,
         "no warehouse at"),
        (["database"], 1, "no silver events"),
        (["normalize", "--start-date", "2025-08-7x", "--end-date", "2025-08-07"], 2,
         "argument --start-date: '2025-08-7x' is not a 'date'"),
        (["stats", "--start-date", "2025-08-08", "--end-date", "2025-08-07"], 2,
         "in the wrong order"),
        (["evaluate", "--queries", "/nonexistent.parquet", "--predictions", "p.jsonl"], 1,
         "cannot read"),
        (["articles", "process", "--start-date", "2025-08-07", "--end-date", "2025-08-07"], 1,
         "no silver events for 2025-08-07..2025-08-07"),
        (["articles", "fetch", "--start-date", "2025-08-07", "--end-date", "2025-08-07"], 1,
         "run `gdelt-forecast normalize` first"),
    ],
)  # fmt: skip
def test_later_stages_fail_in_one_line(tmp_path, args, code, message):
    result = run(*args, "--data-root", str(tmp_path))
    assert result.returncode == code
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_testset_and_evaluate(tmp_path, capsys):
    from tests.testset.test_build import QUADS, warehouse

    root = warehouse(tmp_path / "data", QUADS)
    assert main(["testset", "--month", "2025-08", "--data-root", str(root)]) == 0
    assert capsys.readouterr().out.startswith("testset 2025-08: 3 strict quads, 2 queries")
    predictions = tmp_path / "predictions.jsonl"
    lines = [
        {"query_id": "2025-08-07_AZE_USA_h1", "prediction": {"05": ["057"]}},
        {"query_id": "2025-08-08_KOR_CHN_h1", "prediction": 'Final Answer: {"03": ["036"]}'},
    ]
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    queries = root / "testset/2025-08/queries.parquet"
    args = ["evaluate", "--queries", str(queries), "--predictions", str(predictions), "--json"]
    assert main(args) == 0
    scores = json.loads(capsys.readouterr().out)
    # Query 1 exact (100); query 2: first level {03} of {03, 04}: P 100, R 50.
    assert scores["n"] == 2
    assert scores["first_level"]["recall"] == pytest.approx(75.0)
    assert scores["second_level"]["precision"] == pytest.approx(100.0)
    with pytest.raises(SystemExit) as bad_month:
        main(["testset", "--month", "2025-13", "--data-root", str(root)])
    assert bad_month.value.code == 2


@pytest.mark.parametrize("stage", ["timelines", "tasks"])
def test_method_flag_sets_the_timelines_method(stage, tmp_path, monkeypatch):
    seen = []
    record = replace(cli.COMMANDS[stage], run=lambda args, cfg: seen.append(cfg) or 0)
    monkeypatch.setitem(cli.COMMANDS, stage, record)
    base = [stage, "--month", "2025-08", "--data-root", str(tmp_path)]
    assert main(base) == main([*base, "--method", "llm"]) == 0
    assert [cfg.timelines.method for cfg in seen] == ["extractive", "llm"]
    with pytest.raises(SystemExit):
        main([*base, "--method", "oracle"])


def test_version_prints_what_a_manifest_would_record(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    found = code_version()
    assert capsys.readouterr().out == (
        f"gdelt-forecast {found['package']} (commit {found['git_commit']})\n"
    )
    assert found["git_commit"]  # a checkout names its commit


def test_an_arrays_items_may_be_words_or_comma_separated():
    parsed = [
        cli.build_parser().parse_args(["testset", "--month", "2025-08", "--horizons", *words])
        for words in (["1", "7"], ["1,7"])
    ]
    assert [cli._checked(cli._Parser(), args).horizons for args in parsed] == [[1, 7], [1, 7]]
