"""``gdelt-forecast``: every stage as a subcommand sharing --config, --data-root and --set."""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from gdelt_forecast.config import Config, ConfigError, load_config
from gdelt_forecast.contract.names import MANIFEST, REASONING, TASKS
from gdelt_forecast.data_root import DataRoot
from gdelt_forecast.errors import StageError
from gdelt_forecast.runner import run


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line and exit 2, like a bad config
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Version(argparse.Action):
    """``--version``: what a release's manifest would record as its ``code_version``, asked
    of git only when the option is given."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print the version and commit")

    def __call__(self, parser, namespace, values, option_string=None):
        from gdelt_forecast.version import code_version

        found = code_version()
        print(f"gdelt-forecast {found['package']} (commit {found['git_commit']})")
        parser.exit(0)


def parse_moment(text: str, end: bool = False) -> datetime:
    """UTC ``YYYY-MM-DDTHH:MM[:SS]``; a bare date means the whole day (its last second as end)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not YYYY-MM-DD or YYYY-MM-DDTHH:MM"
        ) from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    if end and len(text) == 10:
        moment += timedelta(days=1, seconds=-1)
    return moment


def _tables(text: str) -> list[str]:
    tables = [t.strip() for t in text.split(",") if t.strip()]
    unknown = sorted(set(tables) - {"export", "mentions"})
    if unknown or not tables:
        raise argparse.ArgumentTypeError(f"unknown table(s) {unknown}: choose export, mentions")
    return tables


BASELINE_METHODS = ["history", "frequency", "llm"]  # gdelt_forecast.baselines.ALL_METHODS
METHOD_HELP = "sets timelines.method: extractive (no model) or llm (the llm server)"


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", help="YAML config (default: configs/default.yaml)")
    common.add_argument("--data-root", help="data root (overrides the config's data_root)")
    common.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override one config value; repeatable",
    )
    common.add_argument("-v", "--verbose", action="store_true", help="debug logging")

    parser = _Parser(prog="gdelt-forecast", description=__doc__)
    parser.add_argument("--version", action=_Version)
    stages = parser.add_subparsers(dest="stage", required=True, parser_class=_Parser)
    ing = stages.add_parser(
        "ingest",
        parents=[common],
        help="GDELT 15-minute dumps to verified, typed bronze Parquet",
        description="Ingest every 15-minute slot in the inclusive UTC range [--start, --end].",
    )
    ing.add_argument("--start", required=True, type=parse_moment, help="first slot (UTC)")
    ing.add_argument(
        "--end", required=True, type=lambda s: parse_moment(s, end=True), help="last slot (UTC)"
    )
    ing.add_argument("--tables", type=_tables, help="comma-separated: export,mentions")
    ing.add_argument("--json", action="store_true", help="print the summary as JSON")

    for name, help_text in [
        ("normalize", "bronze events to silver quads (MIRAI rules), with the funnel"),
        ("stats", "the funnel and the top relations and country pairs of a date range"),
    ]:
        sub = stages.add_parser(name, parents=[common], help=help_text, description=help_text)
        _add_days(sub)
        if name == "stats":
            sub.add_argument("--top", type=int, default=10, help="rows per top list")
        sub.add_argument("--json", action="store_true", help="print the result as JSON")
    db = stages.add_parser(
        "database",
        parents=[common],
        help="rebuild warehouse.duckdb from silver",
        description="Rebuild <data_root>/warehouse.duckdb from silver Parquet.",
    )
    db.add_argument("--json", action="store_true", help="print the summary as JSON")

    tst = stages.add_parser(
        "testset",
        parents=[common],
        help="MIRAI relation queries of a month, the balanced subset",
        description="Build testset/<month>/queries.parquet, subset.parquet and balance.json.",
    )
    tst.add_argument("--month", required=True, type=_month, help="YYYY-MM")
    tst.add_argument("--json", action="store_true", help="print the summary as JSON")
    tl = stages.add_parser(
        "timelines",
        parents=[common],
        help="complex events of a month's news and their timelines of atomic events",
        description="Write timelines/<month>/complex_events.parquet and timelines.parquet.",
    )
    tl.add_argument("--month", required=True, type=_month, help="YYYY-MM")
    tl.add_argument("--method", choices=["extractive", "llm"], help=METHOD_HELP)
    tl.add_argument(
        "--history-start",
        type=_day,
        help="no document before this day (default: release.history_start, else January 1st; "
        "a release of the month must use the same)",
    )
    tl.add_argument("--json", action="store_true", help="print the summary as JSON")
    tk = stages.add_parser(
        "tasks",
        parents=[common],
        help="OpenForecast's six tasks (STF, LTF, AQA, MCNC, MCAC, VQA) from the timelines",
        description="Write tasks/<month>/<TASK>/<split>.parquet from timelines/<month>/.",
    )
    tk.add_argument("--month", required=True, type=_month, help="YYYY-MM")
    tk.add_argument("--method", choices=["extractive", "llm"], help=METHOD_HELP)
    tk.add_argument("--json", action="store_true", help="print the summary as JSON")
    rs = stages.add_parser(
        "reasoning",
        parents=[common],
        help="EV2's event-reasoning tasks (I-CEC, I-CRR, S-CEC, S-CRR) from the timelines",
        description="Write reasoning/<month>/<TASK>.parquet from timelines/<month>/.",
    )
    rs.add_argument("--month", required=True, type=_month, help="YYYY-MM")
    rs.add_argument(
        "--method", choices=["extractive", "llm"],
        help="reasoning.method: `llm` also asks the llm server for causal and hierarchical "
        "relations",
    )  # fmt: skip
    rs.add_argument("--json", action="store_true", help="print the summary as JSON")
    et = stages.add_parser(
        "evaluate-tasks",
        parents=[common],
        help="score predictions for an OpenForecast task (accuracy, or LRAE with the llm judge)",
        description="Score predictions (JSONL of id and prediction) for one task.",
    )
    et.add_argument("--task", required=True, choices=TASKS, help="the task")
    et.add_argument("--tasks", required=True, type=Path, help="task file, or a folder of them")
    et.add_argument("--predictions", required=True, type=Path, help="JSONL predictions")
    et.add_argument("--split", choices=["train", "dev", "test"], help="only this split")
    et.add_argument("--news", type=Path, help="LRAE evidence: news Parquet file or folder")
    et.add_argument("--json", action="store_true", help="print the scores as JSON")
    er = stages.add_parser(
        "evaluate-reasoning",
        parents=[common],
        help="score predictions for an EV2 reasoning task (accuracy by relation type)",
        description="Score predictions (JSONL of id and prediction) for one reasoning task.",
    )
    er.add_argument("--task", required=True, choices=REASONING, help="the task")
    er.add_argument("--reasoning", required=True, type=Path, help="task file, or a folder")
    er.add_argument("--predictions", required=True, type=Path, help="JSONL predictions")
    er.add_argument("--split", choices=["test"], help="the one split, test")
    er.add_argument("--json", action="store_true", help="print the scores as JSON")
    ev = stages.add_parser(
        "evaluate",
        parents=[common],
        help="score predictions against test queries (MIRAI's metrics)",
        description="Score predictions (JSONL) against queries (Parquet or JSONL).",
    )
    ev.add_argument("--queries", required=True, type=Path, help="queries.parquet or subset")
    ev.add_argument("--predictions", required=True, type=Path, help="JSONL predictions")
    ev.add_argument("--json", action="store_true", help="print the scores as JSON")

    rel = stages.add_parser(
        "release",
        parents=[common],
        help="a versioned, verifiable release of a month; `release verify DIR` checks one",
        description="Write <data_root>/releases/<version>/ for the test month --month "
        "(the database from the history start through the month's end; the test set, "
        "timelines and tasks as their stages built them, refused when one is stale; MIRAI's "
        "data folder, baselines, card, Croissant, stats, manifest); or `release verify DIR`.",
    )
    rel.add_argument("--month", type=_month, help="test month, YYYY-MM")
    rel.add_argument("--version", help="release name (default: YYYY.MM.n, the first free n)")
    rel.add_argument(
        "--history-start", type=_day, help="first day of the database (default: config)"
    )
    rel.add_argument("--json", action="store_true", help="print the summary as JSON")
    checks = rel.add_subparsers(dest="action", parser_class=_Parser)
    ver = checks.add_parser(
        "verify",
        help="re-check checksums, listing, schemas, row counts and the leakage rule",
        description="Exit 0 when the release in DIR is sound, else 1 naming each bad file.",
    )
    ver.add_argument("release_dir", metavar="DIR", help="a release folder, or s3://bucket/...")
    mirai = checks.add_parser(
        "mirai",
        help="build MIRAI's data_kg.csv and data_news.csv from a release's Parquet",
        description="Write mirai/MIRAI/data_kg.csv and data_news.csv into the release folder "
        "DIR (or under --out), from its quads, quad_docs, news and reference tables: the bytes "
        "whose sha256 its manifest lists under `built`, else exit 1. MIRAI's own code then "
        "runs on DIR/mirai unchanged.",
    )
    mirai.add_argument("release_dir", metavar="DIR", help="a release folder or version name")
    mirai.add_argument("--out", type=Path, help="build under this folder instead of DIR")

    base = stages.add_parser(
        "baseline",
        parents=[common],
        help="score a release's test set with a reference forecaster (no future rows)",
        description="Forecast every query of a release's test set (or subset) through the "
        "agent environment, which sees only rows before each query's cutoff, and score it "
        "with MIRAI's metrics.",
    )
    base.add_argument("--release", required=True, help="a release folder or version name")
    base.add_argument("--method", choices=BASELINE_METHODS, default="history")
    base.add_argument("--split", choices=["test", "subset"], default="test")
    base.add_argument(
        "--task", choices=[*TASKS, *REASONING],
        help="with --method llm: answer one of OpenForecast's tasks (its --split's records, "
        "with the paper's prompts) or EV2's reasoning tasks instead of the queries",
    )  # fmt: skip
    base.add_argument("--json", action="store_true", help="print the summary as JSON")

    agent = stages.add_parser(
        "agent",
        parents=[common],
        help="run MIRAI's ReAct agents on a release's test set over an OpenAI-compatible server",
        description="Every query of the split answered by a ReAct agent whose actions are "
        "tool calls (the API's functions, or Python code in a sandbox) on the environment "
        "opened at the query's cutoff; steps, answers and scores under "
        "<data_root>/agents/<release>/<run>/. The same command resumes a killed run.",
    )
    agent.add_argument("--release", required=True, help="a release folder or version name")
    agent.add_argument("--split", choices=["subset", "test"], default="subset")
    agent.add_argument("--action", choices=["function", "code"], default="function")
    agent.add_argument(
        "--apis", choices=["all", "events", "news"], default="all",
        help="MIRAI's All, Event-Only or News-Only API",
    )  # fmt: skip
    agent.add_argument("--max-steps", type=int, help="agents.max_steps (MIRAI: 20)")
    agent.add_argument("--samples", type=int, default=1, help="seeded samples per query (K)")
    agent.add_argument("--json", action="store_true", help="print the summary as JSON")
    board = stages.add_parser(
        "leaderboard",
        parents=[common],
        help="print a release's agent runs and baselines as MIRAI's Table 2 reads",
    )
    board.add_argument("--release", required=True, help="a release folder or version name")
    site = stages.add_parser(
        "site",
        parents=[common],
        help="a static site of the data root's releases, leaderboards, records and agent traces",
        description="Plain files that open from file://, `python -m http.server` or a "
        "bucket's static hosting; the last site in DIR is replaced whole when the new one is "
        "built.",
    )
    site.add_argument("--out", type=Path, help="the site's folder (default: <data_root>/site)")
    site.add_argument("--json", action="store_true", help="print the summary as JSON")

    air = stages.add_parser("airflow", help="Airflow: `airflow init`, `airflow wait DAG`")
    air_actions = air.add_subparsers(dest="action", required=True, parser_class=_Parser)
    air_actions.add_parser(
        "init",
        parents=[common],
        help="migrate Airflow's database and create the pools the DAGs run in",
        description="Run `airflow db migrate`, then `airflow pools set` for every pool the "
        "DAGs use (gdelt_forecast/airflow_pools.py): one slot each, but article_fetch "
        "with articles.fetch_days. Safe to run again.",
    )
    air_wait = air_actions.add_parser(
        "wait",
        parents=[common],
        help="wait for a DAG's newest manual run; exit 0 when it succeeded",
        description="Wait for the newest manual run of DAG (the one `airflow dags trigger` "
        "queued) to finish: exit 0 when it succeeded, 1 naming the tasks that did not.",
    )
    air_wait.add_argument("dag_id", metavar="DAG")
    air_wait.add_argument(
        "--timeout", type=float, default=1800, help="seconds to wait at most (default 1800)"
    )

    art = stages.add_parser("articles", help="news articles: fetch, process, explain")
    actions = art.add_subparsers(dest="action", required=True, parser_class=_Parser)
    for name, help_text in [
        ("fetch", "fetch the source pages of the days' quads (polite, resumable)"),
        ("process", "extract, identify the language and OBELICS-clean the fetched pages"),
    ]:
        sub = actions.add_parser(name, parents=[common], help=help_text, description=help_text)
        _add_days(sub)
        sub.add_argument("--json", action="store_true", help="print the summary as JSON")
        if name == "process":
            sub.add_argument(
                "--warc", nargs="+", type=Path, help="read pages from these WARC files instead"
            )
    explain = actions.add_parser(
        "explain",
        parents=[common],
        help="why a page is kept or dropped: extraction and every filter value, as JSON lines",
        description="Print one JSON object per FILE (HTML, gzipped HTML or plain text).",
    )
    explain.add_argument("files", nargs="+", type=Path, metavar="FILE")
    explain.add_argument("--preset", choices=["obelics", "mirai"], help="default: the config's")
    return parser


def _add_days(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--start-date", required=True, type=_day, help="first day (UTC)")
    parser.add_argument("--end-date", required=True, type=_day, help="last day (UTC)")


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a YYYY-MM-DD date") from None


def _month(text: str) -> str:
    if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a YYYY-MM month")
    return text


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


def _normalize(args: argparse.Namespace, cfg: Config) -> int:
    _ordered(args.start_date, args.end_date, "--start-date and --end-date")
    _print(args, run("normalize", cfg, args.start_date, args.end_date))
    return 0


def _database(args: argparse.Namespace, cfg: Config) -> int:
    _print(args, run("database", cfg))
    return 0


def _stats(args: argparse.Namespace, cfg: Config) -> int:
    from gdelt_forecast.warehouse.stats import render

    _ordered(args.start_date, args.end_date, "--start-date and --end-date")
    report = run("stats", cfg, args.start_date, args.end_date, args.top)
    print(json.dumps(report, indent=2, default=str) if args.json else render(report))
    return 0


def _articles(args: argparse.Namespace, cfg: Config) -> int:
    if args.action == "explain":
        from gdelt_forecast.articles.explain import explain

        for line in explain(cfg, args.files, args.preset):
            print(line, flush=True)
        return 0
    _ordered(args.start_date, args.end_date, "--start-date and --end-date")
    if args.action == "fetch":
        _print(args, run("fetch", cfg, args.start_date, args.end_date))
    else:
        _print(args, run("process", cfg, args.start_date, args.end_date, warcs=args.warc))
    return 0


def _testset(args: argparse.Namespace, cfg: Config) -> int:
    _print(args, run("testset", cfg, args.month))
    return 0


def _timelines(args: argparse.Namespace, cfg: Config) -> int:
    _print(args, run("timelines", cfg, args.month, history_start=args.history_start))
    return 0


def _tasks(args: argparse.Namespace, cfg: Config) -> int:
    _print(args, run("tasks", cfg, args.month))
    return 0


def _reasoning(args: argparse.Namespace, cfg: Config) -> int:
    _print(args, run("reasoning", cfg, args.month))
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
    from gdelt_forecast.testset.evaluate import evaluate, render

    result = evaluate(args.queries, args.predictions)
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


def _airflow(args: argparse.Namespace, cfg: Config) -> int:
    if args.action == "wait":
        from gdelt_forecast.airflow_runs import wait

        succeeded, line = wait(args.dag_id, args.timeout)
        print(line)
        return 0 if succeeded else 1
    from gdelt_forecast.airflow_pools import init

    for line in init(cfg):
        print(line)
    return 0


def _release(args: argparse.Namespace, cfg: Config) -> int:
    if args.action == "verify":
        return _verify(args.release_dir, cfg)
    if args.action == "mirai":
        return _mirai(args.release_dir, args.out, cfg)
    if not args.month:
        raise UsageError("--month is required (or `release verify DIR`, `release mirai DIR`)")
    summary = run("release", cfg, args.month, args.version, args.history_start)
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
    _print(args, run("baseline", cfg, folder, args.method, args.split))
    return 0


def _agent(args: argparse.Namespace, cfg: Config) -> int:
    if args.max_steps is not None:
        if args.max_steps < 1:
            raise UsageError("--max-steps must be at least 1")
        cfg = cfg.model_copy(
            update={"agents": cfg.agents.model_copy(update={"max_steps": args.max_steps})}
        )
    _print(args, run("agent", cfg, args.release, args.split, args.action, args.apis, args.samples))
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


def _verify(where: str, cfg: Config) -> int:
    """``release verify``: a folder in place; a release in a bucket from a temporary copy."""
    import tempfile

    from gdelt_forecast.objectstore import download
    from gdelt_forecast.release.verify import verify

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


def _mirai(release: str, out: Path | None, cfg: Config) -> int:
    """``release mirai``: MIRAI's database files built and checked against the manifest."""
    from gdelt_forecast.environment import release_folder
    from gdelt_forecast.release.mirai_database import MiraiDatabaseError, build

    folder = release_folder(release, cfg)
    try:
        files = build(folder, out, cfg.release.memory_limit)
    except MiraiDatabaseError as exc:
        print(f"release mirai {folder}: {exc}", file=sys.stderr)
        return 1
    for item in files:
        print(f"{(out or folder) / item['path']}: {item['bytes']:,} bytes, sha256 as listed")
    return 0


STAGES = {
    "ingest": _ingest,
    "normalize": _normalize,
    "database": _database,
    "stats": _stats,
    "articles": _articles,
    "testset": _testset,
    "evaluate": _evaluate,
    "timelines": _timelines,
    "tasks": _tasks,
    "reasoning": _reasoning,
    "evaluate-reasoning": _evaluate_reasoning,
    "evaluate-tasks": _evaluate_tasks,
    "release": _release,
    "baseline": _baseline,
    "agent": _agent,
    "leaderboard": _leaderboard,
    "site": _site,
    "airflow": _airflow,
}


# The commands whose --method sets a config key.
METHOD_OF = {
    "timelines": "timelines.method",
    "tasks": "timelines.method",
    "reasoning": "reasoning.method",
}


def _name(args: argparse.Namespace) -> str:
    action = getattr(args, "action", None)
    return f"{args.stage} {action}" if action else args.stage


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        method = getattr(args, "method", None) if args.stage in METHOD_OF else None
        overrides = [*args.overrides, *([f"{METHOD_OF[args.stage]}={method}"] if method else [])]
        cfg = load_config(args.config, overrides, args.data_root)
    except ConfigError as exc:
        print(f"gdelt-forecast: {exc}", file=sys.stderr)
        return 2
    try:
        return STAGES[args.stage](args, cfg)
    except UsageError as exc:
        print(f"gdelt-forecast {_name(args)}: error: {exc}", file=sys.stderr)
        return 2
    except StageError as exc:
        print(f"gdelt-forecast {_name(args)}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
