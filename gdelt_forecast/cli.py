"""``gdelt-forecast``: every stage as a subcommand sharing --config, --data-root and --set."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from gdelt_forecast.contract.names import MANIFEST, REASONING, TASKS
from gdelt_forecast.ground.config import Config, ConfigError, load_config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.wellformed import mended, printable
from gdelt_forecast.pipeline.parameters import FILE, JSON, RELEASE, RUN, Parameter, overrides
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.pipeline.stages import STAGES, Stage


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line and exit 2, like a bad config
        self.exit(2, printable(f"{self.prog}: error: {message}") + "\n")


class _Version(argparse.Action):
    """``--version``: what a release's manifest would record as its ``code_version``, asked
    of git only when the option is given."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print the version and commit")

    def __call__(self, parser, namespace, values, option_string=None):
        from gdelt_forecast.ground.version import code_version

        found = code_version()
        print(f"gdelt-forecast {found['package']} (commit {found['git_commit']})")
        parser.exit(0)


@dataclass(frozen=True)
class Command:
    """One subcommand: what it runs, its help and its parameters (a stage's are its
    declaration's, :data:`gdelt_forecast.pipeline.stages.STAGES`)."""

    run: Callable[[argparse.Namespace, Config], int]
    help: str
    description: str | None = None
    parameters: tuple[Parameter, ...] = ()
    output: bool = True  # takes --json


# Groups of subcommands, and the help of each.
GROUPS = {
    "articles": "news articles: fetch, process, explain",
    "airflow": "Airflow: `airflow init`, `airflow run DAG`, `airflow wait DAG`",
    "round": "live rounds: open, submit, commit, reveal, resolve, verify, leaderboard, refresh",
}


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gdelt-forecast", description=__doc__)
    parser.add_argument("--version", action=_Version)
    levels = {(): parser.add_subparsers(required=True, parser_class=_Parser)}
    for path, command in COMMANDS.items():
        *group, name = path.split()
        if tuple(group) not in levels:  # a group's own parser, with its actions under it
            below = levels[()].add_parser(group[0], help=GROUPS[group[0]])
            levels[tuple(group)] = below.add_subparsers(required=True, parser_class=_Parser)
        sub = levels[tuple(group)].add_parser(
            name, help=command.help, description=command.description or command.help
        )
        sub.set_defaults(command=path)
        for p in (*RUN, *parameters(path), *([JSON] if command.output else [])):
            _add(sub, p)
        # Default SUPPRESS: an action's own --verbose never hides its group's
        sub.add_argument(
            "-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
            help="debug logging",
        )  # fmt: skip
        if path == "release":  # `release --month ...`, or one of its actions
            levels[("release",)] = sub.add_subparsers(parser_class=_Parser)
    return parser


def parameters(path: str) -> tuple[Parameter, ...]:
    """The declared parameters of command ``path`` (its stage's; the run's config aside)."""
    return COMMANDS[path].parameters


def _add(parser: argparse.ArgumentParser, p: Parameter) -> None:
    """``p`` as an option (or a word) of ``parser``, its value left unchecked for
    :func:`_checked`; absent from the namespace where not given (a group's value stays)."""
    options: dict = {"help": p.described, "default": argparse.SUPPRESS}
    if p.kind == "boolean":
        parser.add_argument(p.option, action="store_true", **options)
        return
    options["type"] = p.word
    enum = p.schema.get("items", p.schema).get("enum")
    options["metavar"] = p.metavar or ("{" + ",".join(enum) + "}" if enum else None)
    if p.kind == "array":
        options.update(action="append") if p.repeat else options.update(nargs="+")
    if p.positional:
        del options["default"]
        parser.add_argument(p.name, **options)
    else:
        parser.add_argument(p.option, dest=p.name, required=p.required, **options)


def _checked(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """Every parameter of the command as its stage takes it: checked against its schema
    (argparse's one-line error where it fails), the declared default where not given."""
    values = {}
    output = [JSON] if COMMANDS[args.command].output else []
    for p in (*RUN, *parameters(args.command), *output):
        if not hasattr(args, p.name):
            values[p.name] = p.default
            continue
        value = getattr(args, p.name)
        if p.kind == "array":  # each word's items, in order
            value = [item for word in value for item in word]
        try:
            values[p.name] = p.check(value)
        except ValueError as exc:
            parser.error(f"argument {p.option}: {exc}")
    return argparse.Namespace(**{**vars(args), **values})


class UsageError(ValueError):
    """A bad combination of arguments: exit 2, like argparse's own errors."""


def _ordered(first, last, names: str) -> None:
    if first > last:
        raise UsageError(f"{names} are in the wrong order")


def _print(args: argparse.Namespace, summary) -> None:
    print(json.dumps(summary.to_dict(), indent=2, default=str) if args.json else summary.line())


def _ingest(args: argparse.Namespace, cfg: Config) -> int:
    _ordered(args.start, args.end, "--start and --end")
    summary = run("ingest", cfg, args.start, args.end, args.tables or cfg.gdelt.tables)
    _print(args, summary)
    # Missing and corrupt slots are GDELT's; a failed download may heal on a re-run.
    return 1 if summary.failed else 0


def _stage(stage: Stage) -> Callable[[argparse.Namespace, Config], int]:
    """A stage on its partition (``--start-date``..``--end-date``, ``--month``, ``--round``,
    or none), with its options by name (its other parameters set config keys)."""

    def command(args: argparse.Namespace, cfg: Config) -> int:
        given = {p.name: getattr(args, p.name) for p in stage.options}
        if stage.partition == "day":
            _ordered(args.start_date, args.end_date, "--start-date and --end-date")
            _print(args, run(stage.name, cfg, args.start_date, args.end_date, **given))
        elif stage.partition == "month":
            _print(args, run(stage.name, cfg, args.month, **given))
        elif stage.partition == "round":
            _print(args, run(stage.name, cfg, args.round, **given))
        else:
            _print(args, run(stage.name, cfg, **given))
        return 0

    return command


def _stats(args: argparse.Namespace, cfg: Config) -> int:
    from gdelt_forecast.warehouse.stats import render

    _ordered(args.start_date, args.end_date, "--start-date and --end-date")
    report = run("stats", cfg, args.start_date, args.end_date, top=args.top)
    print(json.dumps(report, indent=2, default=str) if args.json else render(report))
    return 0


def _explain(args: argparse.Namespace, cfg: Config) -> int:
    from gdelt_forecast.articles.explain import explain

    for line in explain(cfg, args.files, args.preset):
        print(line, flush=True)
    return 0


def _evaluate_tasks(args: argparse.Namespace, cfg: Config) -> int:
    from gdelt_forecast.tasks.evaluate import render

    result = run(
        "evaluate_tasks", cfg, args.task, args.tasks, args.predictions, args.split, args.news
    )
    print(json.dumps(result, indent=2, default=str) if args.json else render(result))
    return 0


def _evaluate_reasoning(args: argparse.Namespace, cfg: Config) -> int:
    from gdelt_forecast.reasoning.evaluate import evaluate_reasoning, render

    result = evaluate_reasoning(args.task, args.reasoning, args.predictions, args.split)
    print(json.dumps(result, indent=2, default=str) if args.json else render(result))
    return 0


def _evaluate(args: argparse.Namespace, cfg: Config) -> int:
    from gdelt_forecast.scoring.evaluate import evaluate, render

    result = evaluate(args.queries, args.predictions)
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


def _airflow_wait(args: argparse.Namespace, cfg: Config) -> int:
    from gdelt_forecast.orchestration.runs import wait

    succeeded, line = wait(args.dag_id, args.timeout)
    print(line)
    return 0 if succeeded else 1


def conf_of(text: str) -> dict:
    """A DAG run's params, as `airflow run --conf` gives them: a JSON object, else
    UsageError."""
    try:
        conf = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise UsageError(f"--conf is not JSON: {exc}") from None
    if not isinstance(conf, dict):
        raise UsageError("--conf must be a JSON object, the run's params")
    return conf


def _airflow_run(args: argparse.Namespace, cfg: Config) -> int:
    from gdelt_forecast.orchestration.runs import trigger_and_wait

    succeeded, line = trigger_and_wait(args.dag_id, conf_of(args.conf), args.timeout)
    print(line)
    return 0 if succeeded else 1


def _airflow_init(args: argparse.Namespace, cfg: Config) -> int:
    from gdelt_forecast.orchestration.pools import init

    for line in init(cfg):
        print(line)
    return 0


def _release(args: argparse.Namespace, cfg: Config) -> int:
    if not args.month:
        raise UsageError("--month is required (or `release verify DIR`, `release mirai DIR`)")
    summary = run(
        "release", cfg, args.month, version=args.version, history_start=args.history_start
    )
    _print(args, summary)
    if args.json:
        return 0
    if summary.path.startswith("s3://"):  # neither reads a bucket without being told how
        print(
            f"load it: datasets.load_dataset('parquet', data_files='{summary.path}/testset/"
            "queries.parquet', storage_options={'client_kwargs': {'endpoint_url': ...}}); "
            "duckdb, after con.register_filesystem(s3fs.S3FileSystem()): "
            f"SELECT * FROM '{summary.path}/quads/*.parquet'"
        )
    else:
        print(
            f"load it: datasets.load_dataset({summary.path!r}, 'queries', split='test'); "
            f"duckdb: SELECT * FROM '{summary.path}/quads/*.parquet'"
        )
    return 0


def _baseline(args: argparse.Namespace, cfg: Config) -> int:
    from gdelt_forecast.environment import release_folder

    folder = release_folder(args.release, cfg)
    if args.task and args.round:
        raise UsageError("--task and --round: a round asks relation queries only")
    if args.task:
        if args.method != "llm":
            raise UsageError("--task: the tasks are answered by --method llm")
        if args.task in TASKS:
            if args.split != "test":
                raise UsageError("--task: OpenForecast's tasks are answered on --split test")
            _print(args, run("tasks_baseline", cfg, folder, args.task))
        else:
            _print(args, run("reasoning_baseline", cfg, folder, args.task))
        return 0
    _print(args, run("baseline", cfg, folder, args.method, args.split, round=args.round))
    return 0


def _leaderboard(args: argparse.Namespace, cfg: Config) -> int:
    from gdelt_forecast.agents import leaderboard
    from gdelt_forecast.environment import release_folder

    folder = release_folder(args.release, cfg)
    path = DataRoot(cfg.data_root).agents / folder.name / leaderboard.FILE
    baselines = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["baselines"]
    print(leaderboard.render(path, folder.name, baselines))
    return 0


def _site(args: argparse.Namespace, cfg: Config) -> int:
    from gdelt_forecast.site.build import build_site

    _print(args, build_site(cfg, args.out))
    return 0


def _verify(args: argparse.Namespace, cfg: Config) -> int:
    """``release verify``: a folder in place; a release in a bucket from a temporary copy."""
    import tempfile

    from gdelt_forecast.release.verify import verify
    from gdelt_forecast.storage.working_copy import download

    where = args.release_dir
    with tempfile.TemporaryDirectory(prefix="gdelt-forecast-verify-") as tmp:
        if where.startswith("s3://"):  # into a folder of the release's own name
            folder = download(cfg, where, Path(tmp) / where.rstrip("/").rsplit("/", 1)[-1])
        else:
            folder = Path(where)
        problems = verify(folder)
    for problem in problems:
        print(f"{where.rstrip('/')}/{problem}", file=sys.stderr)
    print(f"release verify {where}: {f'{len(problems)} problem(s)' if problems else 'sound'}")
    return 1 if problems else 0


def _mirai(args: argparse.Namespace, cfg: Config) -> int:
    """``release mirai``: MIRAI's database files built and checked against the manifest."""
    from gdelt_forecast.environment import release_folder
    from gdelt_forecast.release.mirai_database import MiraiDatabaseError, build

    folder = release_folder(args.release_dir, cfg)
    try:
        files = build(folder, args.out, cfg.release.memory_limit)
    except MiraiDatabaseError as exc:
        print(f"release mirai {folder}: {exc}", file=sys.stderr)
        return 1
    for item in files:
        print(f"{(args.out or folder) / item['path']}: {item['bytes']:,} bytes, sha256 as listed")
    return 0


def _pull(args: argparse.Namespace, cfg: Config) -> int:
    from gdelt_forecast.release.pull import pull

    _print(args, pull(cfg, args.source))
    return 0


def _round_verify(args: argparse.Namespace, cfg: Config) -> int:
    summary = run("round_verify", cfg, args.round)
    _print(args, summary)
    return 1 if summary.problems else 0


# The stages whose command needs more than running them: a check of its arguments, what it
# prints, or an exit code of its own.
HANDLERS = {
    "round_verify": _round_verify,
    "ingest": _ingest,
    "stats": _stats,
    "evaluate_tasks": _evaluate_tasks,
    "release": _release,
    "baseline": _baseline,
}

RELEASE_DIR = Parameter(
    "release_dir", "a release folder or version name", FILE, required=True, positional=True,
    metavar="DIR",
)  # fmt: skip

# What `airflow run` and `airflow wait` both take.
DAG_ID = Parameter("dag_id", "the DAG", FILE, required=True, positional=True, metavar="DAG")
TIMEOUT = Parameter(
    "timeout", "seconds to wait at most", {"type": "number", "exclusiveMinimum": 0}, default=1800
)

# The commands that are not stages: they read a release or score a file, and write nothing
# a stage reads.
TOOLS = {
    "articles explain": Command(
        _explain,
        "why a page is kept or dropped: extraction and every filter value, as JSON lines",
        "Print one JSON object per FILE (HTML, gzipped HTML or plain text).",
        (
            Parameter(
                "files",
                "HTML, gzipped HTML or plain text",
                {"type": "array", "items": {"type": "string"}, "minItems": 1},
                required=True,
                convert=Path,
                positional=True,
                metavar="FILE",
            ),
            Parameter(
                "preset", "default: the config's", {"type": "string", "enum": ["obelics", "mirai"]}
            ),
        ),
        output=False,
    ),
    "evaluate": Command(
        _evaluate,
        "score predictions against test queries (MIRAI's metrics)",
        "Score predictions (JSONL) against queries (Parquet or JSONL).",
        (
            Parameter("queries", "queries.parquet or subset", FILE, required=True, convert=Path),
            Parameter("predictions", "JSONL predictions", FILE, required=True, convert=Path),
        ),
    ),
    "evaluate-reasoning": Command(
        _evaluate_reasoning,
        "score predictions for an EV2 reasoning task (accuracy by relation type)",
        "Score predictions (JSONL of id and prediction) for one reasoning task.",
        (
            Parameter(
                "task", "the task", {"type": "string", "enum": list(REASONING)}, required=True
            ),
            Parameter("reasoning", "task file, or a folder", FILE, required=True, convert=Path),
            Parameter("predictions", "JSONL predictions", FILE, required=True, convert=Path),
            Parameter("split", "the one split, test", {"type": "string", "enum": ["test"]}),
        ),  # fmt: skip
    ),
    "release verify": Command(
        _verify,
        "re-check checksums, listing, schemas, row counts and the leakage rule",
        "Exit 0 when the release in DIR is sound, else 1 naming each bad file.",
        (replace(RELEASE_DIR, help="a release folder, or s3://bucket/..."),),
        output=False,
    ),
    "release mirai": Command(
        _mirai,
        "build MIRAI's data_kg.csv and data_news.csv from a release's Parquet",
        "Write mirai/MIRAI/data_kg.csv and data_news.csv into the release folder DIR (or under "
        "--out), from its quads, quad_docs, news and reference tables: the bytes whose sha256 "
        "its manifest lists under `built`, else exit 1. MIRAI's own code then runs on DIR/mirai "
        "unchanged.",
        (
            RELEASE_DIR,
            Parameter("out", "build under this folder instead of DIR", FILE, convert=Path),
        ),
        output=False,
    ),
    "release pull": Command(
        _pull,
        "bring a published release into this data root, fetching only the files it lacks",
        "Bring the release at SOURCE (its folder, or s3://.../releases/<version>) into "
        "<data_root>/releases/<version>/: a file a release here already holds with the same "
        "sha256 is linked from it, every other file fetched, and each one's sha256 checked "
        "against the manifest before the release is put in place; releases/LATEST follows.",
        (
            Parameter(
                "source",
                "a release's folder or s3:// URL",
                FILE,
                required=True,
                positional=True,
                metavar="SOURCE",
            ),
        ),  # fmt: skip
    ),
    "leaderboard": Command(
        _leaderboard,
        "print a release's agent runs and baselines as MIRAI's Table 2 reads",
        parameters=(RELEASE,),
        output=False,
    ),
    "site": Command(
        _site,
        "a static site of the data root's releases, leaderboards, records and agent traces",
        "Plain files that open from file://, `python -m http.server` or a bucket's static "
        "hosting; the last site in DIR is replaced whole when the new one is built.",
        (Parameter("out", "the site's folder (default: <data_root>/site)", FILE, convert=Path),),
    ),
    "airflow init": Command(
        _airflow_init,
        "migrate Airflow's database and create the pools the DAGs run in",
        "Run `airflow db migrate`, then `airflow pools set` for every pool the DAGs use "
        "(gdelt_forecast/orchestration/pools.py): one slot each, but article_fetch with "
        "articles.fetch_days. Safe to run again.",
        output=False,
    ),
    "airflow run": Command(
        _airflow_run,
        "unpause a DAG, trigger a run and wait for it; exit 0 when it succeeded",
        "`airflow dags unpause DAG`, `airflow dags trigger DAG --conf CONF` and `airflow wait` "
        "for that run, in one process (each `airflow` command is seconds of CPU importing "
        "Airflow): exit 0 when it succeeded, 1 naming the tasks that did not.",
        (
            DAG_ID,
            Parameter("conf", "the run's params, a JSON object", FILE, default="{}"),
            TIMEOUT,
        ),
        output=False,
    ),
    "airflow wait": Command(
        _airflow_wait,
        "wait for a DAG's newest manual run; exit 0 when it succeeded",
        "Wait for the newest manual run of DAG (the one `airflow dags trigger` queued) to "
        "finish: exit 0 when it succeeded, 1 naming the tasks that did not.",
        (DAG_ID, TIMEOUT),
        output=False,
    ),
}

# Every command: each stage's from its declaration, in the stages' order, then the tools; a
# group's words ("release verify") after the group's own command.
COMMANDS = {
    **{
        stage.command: Command(
            HANDLERS.get(stage.name) or _stage(stage),
            stage.help,
            stage.description,
            stage.parameters,
        )
        for stage in STAGES.values()
        if stage.command
    },
    **TOOLS,
}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    name = f"gdelt-forecast {args.command}"
    args = _checked(_Parser(prog=name), args)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Escaping("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if "verbose" in args else logging.INFO,
                        handlers=[handler])  # fmt: skip
    sets = overrides(parameters(args.command), vars(args))
    try:
        cfg = load_config(args.config, [*args.set, *sets], args.data_root)
    except ConfigError as exc:
        print(printable(f"gdelt-forecast: {exc}"), file=sys.stderr)
        return 2
    before = mended()
    try:
        # What a command prints may quote a page, a model or an argument: see _Escaped.
        with contextlib.redirect_stdout(_Escaped(sys.stdout)):
            return COMMANDS[args.command].run(args, cfg)
    except UsageError as exc:
        print(printable(f"{name}: error: {exc}"), file=sys.stderr)
        return 2
    except StageError as exc:
        print(printable(f"{name}: {exc}"), file=sys.stderr)
        return 1
    finally:
        if found := mended(since=before):  # this command's own
            counts = ", ".join(f"{where} {n:,}" for where, n in found.items())
            print(f"{name}: texts mended where they entered: {counts}", file=sys.stderr)


class _Escaped:
    """A text stream whose writes have their control characters escaped, so that a page's
    title or a model's answer that the CLI prints cannot rewrite the operator's terminal."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(printable(text))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


class _Escaping(logging.Formatter):
    """Log lines escaped as the CLI's output is: a message may quote a page or a model."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record))


if __name__ == "__main__":
    sys.exit(main())
