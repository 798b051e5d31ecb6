"""The stages' declarations are the one place a stage is described: what follows from them
(the model server's cache and pool, what a by-hand DAG builds again, the command line's
table) cannot drift from what the stages' code does."""

import time
from dataclasses import dataclass

import pytest

from gdelt_forecast.cli import COMMANDS
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import LLM_CACHE, WAREHOUSE
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.pipeline.stages import MODEL_POOL, STAGES, Stage, rebuilt
from tests.test_layers import imports


def _package(stage: Stage) -> str:
    return stage.target.split(":")[0].split(".")[1]


@pytest.mark.parametrize("name", sorted(STAGES))
def test_a_stage_whose_package_imports_the_llm_client_is_a_model_server_stage(name):
    stage = STAGES[name]
    asks = any("llm" in found for found in imports(_package(stage)).values())
    assert stage.model_server == asks, (name, _package(stage))


@pytest.mark.parametrize("name", [n for n, s in STAGES.items() if s.model_server])
def test_a_model_server_stage_reads_the_answer_cache_and_runs_in_its_pool(name):
    stage = STAGES[name]
    args = {"month": ("2025-08",)}.get(stage.partition, ())
    assert LLM_CACHE in stage.pulls(Config(), *args)
    assert stage.pool == MODEL_POOL


def test_reasoning_pulls_the_timelines_and_the_cache_as_the_tasks_do():
    cfg = Config()
    for name in ("tasks", "reasoning"):
        assert STAGES[name].pulls(cfg, "2025-08") == ["timelines/2025-08", LLM_CACHE], name
    assert STAGES["timelines"].pulls(cfg, "2025-08") == [WAREHOUSE, LLM_CACHE]


def test_a_model_server_stage_cannot_run_in_another_pool():
    with pytest.raises(ValueError, match="runs in llm_server"):
        Stage("x", "m:f", model_server=True, pool="warehouse_writer")


def test_building_a_stage_again_builds_every_recorded_stage_that_reads_it():
    assert rebuilt("timelines") == ("timelines", "tasks", "reasoning")
    assert rebuilt("testset") == ("testset",)
    for name, stage in STAGES.items():
        for upstream in stage.after:
            if stage.recorded and upstream in STAGES and STAGES[upstream].recorded:
                assert name in rebuilt(upstream), (upstream, name)


def test_a_month_stages_record_fingerprints_what_it_runs_after(tmp_path):
    from gdelt_forecast.ground.data_root import DataRoot

    root = DataRoot(tmp_path)
    for name, stage in STAGES.items():
        if stage.partition == "month" and stage.recorded:
            assert sorted(stage.fingerprint(Config(), root, "2025-08")) == sorted(
                "warehouse" if a == "database" else a for a in stage.after
            ), name


def test_every_stage_with_a_command_is_the_command_lines():
    for stage in STAGES.values():
        if stage.command:
            command = COMMANDS[stage.command]
            assert (command.help, command.parameters) == (stage.help, stage.parameters)
    assert {s.command for s in STAGES.values() if s.command} <= set(COMMANDS)


def test_a_stage_takes_its_options_by_name_and_its_partition_apart():
    assert [p.name for p in STAGES["release"].options] == ["version", "history_start"]
    assert [p.name for p in STAGES["timelines"].options] == ["history_start"]
    assert [p.name for p in STAGES["process"].options] == ["warc"]


def test_the_release_packages_every_month_stage_it_runs_after():
    from gdelt_forecast.release.build import PLACES

    assert set(PLACES) == set(STAGES["release"].after) - {"database"}


@dataclass
class _Probe(StageSummary):
    seconds: float = 0.0

    def line(self) -> str:
        return f"probe ({self.seconds:.2f} s)"


def _slow_probe(cfg):
    time.sleep(0.2)
    return _Probe()


def test_the_runner_times_every_stage(monkeypatch, tmp_path):
    monkeypatch.setitem(STAGES, "probe", Stage("probe", f"{__name__}:_slow_probe"))
    summary = run("probe", Config(data_root=str(tmp_path)))
    assert 0.2 <= summary.seconds < 5
