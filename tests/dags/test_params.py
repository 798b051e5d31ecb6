"""Every stage parameter is declared once, with its stage (gdelt_forecast/pipeline/stages.py): the
command line's options and the DAGs' params are both made from it, and a bad value gets the
same one-line message from ``gdelt-forecast`` as from a DAG's trigger."""

import json
import re

import pytest

from gdelt_forecast.cli import COMMANDS, build_parser, main, parameters
from gdelt_forecast.pipeline.parameters import PARTIAL, RUN
from gdelt_forecast.pipeline.stages import STAGES
from tests.dags.conftest import python

# The stages whose parameters each DAG takes, and its own.
DAGS = {
    "gdelt_ingest": ((), ()),
    "build_days": (("normalize", "fetch"), ()),
    "build_testset": (("testset",), ()),
    "build_timelines_and_tasks": (("timelines", "tasks", "reasoning"), ()),
    "monthly_refresh": (("release",), (PARTIAL,)),
}
# A bad value of each DAG param that has a rule besides its type: (the command, its words).
BAD = {
    "month": ("2023-13", "testset", ["--month", "2023-13"]),
    "horizons": ([0], "testset", ["--month", "2025-08", "--horizons", "0"]),
    "subset_size": ("many", "testset", ["--month", "2025-08", "--subset-size", "many"]),
    "seed": ("x", "testset", ["--month", "2025-08", "--seed", "x"]),
    "method": ("oracle", "timelines", ["--month", "2025-08", "--method", "oracle"]),
    "history_start": ("2025-02-30", "timelines", ["--month", "2025-08", "--history-start",
                                                  "2025-02-30"]),
    "version": ("../x", "release", ["--month", "2025-08", "--version", "../x"]),
    "start_date": ("2025-08-7x", "normalize", ["--start-date", "2025-08-7x", "--end-date",
                                               "2025-08-07"]),
    "end_date": ("tomorrow", "normalize", ["--start-date", "2025-08-07", "--end-date",
                                           "tomorrow"]),
}  # fmt: skip


def _help(path: str) -> str:
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args([*path.split(), "--help"])


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_parameter_is_in_its_commands_help(path, capsys):
    _help(path)
    shown = " ".join(capsys.readouterr().out.split())
    for p in (*RUN, *parameters(path)):
        option = p.metavar if p.positional else p.option
        assert f"{option} " in shown, (path, p.name)
        assert " ".join(p.described.split()) in shown, (path, p.name)


@pytest.fixture(scope="module")
def dag_params(airflow_env):
    """Each DAG's params as the API server holds them (serialized and read back): their
    schema, default and description."""
    result = python(
        f"""
        import json
        from airflow.dag_processing.dagbag import DagBag
        from airflow.serialization.serialized_objects import DagSerialization
        bag = DagBag()
        found = {{}}
        for dag_id in {sorted(DAGS)!r}:
            served = DagSerialization.from_dict(DagSerialization.to_dict(bag.dags[dag_id]))
            found[dag_id] = {{
                name: {{"schema": p.schema, "default": p.value, "description": p.description}}
                for name, p in served.params.items()
            }}
        bad = {{}}
        for name, value in { ({k: v[0] for k, v in BAD.items()})!r}.items():
            for dag_id in {sorted(DAGS)!r}:
                served = DagSerialization.from_dict(DagSerialization.to_dict(bag.dags[dag_id]))
                if name in served.params:
                    try:
                        served.params.deep_merge({{name: value}}).validate()
                        bad[name] = "accepted"
                    except Exception as exc:
                        bad[name] = str(exc).splitlines()[0]
        print(json.dumps({{"params": found, "bad": bad}}))
        """,
        airflow_env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("dag_id", sorted(DAGS))
def test_every_parameter_of_a_dags_stages_is_its_param(dag_params, dag_id):
    stages, own = DAGS[dag_id]
    declared = {}  # a name's first declaration is the DAG's param
    for p in (*(p for s in stages for p in STAGES[s].parameters), *own, *RUN):
        declared.setdefault(p.name, p)
    found = dag_params["params"][dag_id]
    assert sorted(found) == sorted(declared)
    for name, p in declared.items():
        assert found[name] == {
            "schema": p.json_schema,
            "default": p.default,
            "description": p.described,
        }, name


def test_every_ruled_param_has_a_bad_value_here(dag_params):
    ruled = {
        name
        for params in dag_params["params"].values()
        for name, p in params.items()
        if set(p["schema"]) - {"type"} or p["schema"]["type"] not in (["null", "string"],)
    }
    assert ruled - {"set", "partial"} == set(BAD)


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_value_gets_the_same_message_from_both(dag_params, name, capsys):
    _, path, words = BAD[name]
    with pytest.raises(SystemExit) as exited:
        main([*path.split(), *words])
    assert exited.value.code == 2
    line = capsys.readouterr().err.strip()
    option = "--" + name.replace("_", "-")
    cli = re.fullmatch(rf"gdelt-forecast {path}: error: argument {option}: (.+)", line)
    assert cli, line
    assert dag_params["bad"][name] == f"Invalid input for param {name}: {cli[1]}"
