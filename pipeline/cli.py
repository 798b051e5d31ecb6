"""``gdelt-forecast``: every stage as a subcommand sharing --config, --data-root and --set."""

from __future__ import annotations

import argparse
import logging
import sys
from datetime import UTC, datetime, timedelta

from pipeline.config import ConfigError, load_config
from pipeline.gdelt.masterfile import MasterfileError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line and exit 2, like a bad config
        self.exit(2, f"{self.prog}: error: {message}\n")


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
    return parser


def _ingest(args: argparse.Namespace, cfg) -> int:
    from pipeline.gdelt.ingest import ingest

    if args.start > args.end:
        print("gdelt-forecast ingest: error: --start is after --end", file=sys.stderr)
        return 2
    summary = ingest(cfg, args.start, args.end, args.tables or cfg.gdelt.tables)
    print(summary.to_json() if args.json else summary.line())
    # Missing and corrupt slots are GDELT's; a failed download may heal on a re-run.
    return 1 if summary.failed else 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        cfg = load_config(args.config, args.overrides, args.data_root)
    except ConfigError as exc:
        print(f"gdelt-forecast: {exc}", file=sys.stderr)
        return 2
    try:
        return _ingest(args, cfg)
    except MasterfileError as exc:
        print(f"gdelt-forecast {args.stage}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
