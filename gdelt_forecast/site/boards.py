"""A release's leaderboards: MIRAI's Table 2 per split and per API set (every agent run, the
llm's Direct IO and the release's history and frequency baselines), OpenForecast's and EV2's
tasks; every table sortable, an agent run linked to its traces."""

from __future__ import annotations

from gdelt_forecast.agents import leaderboard
from gdelt_forecast.contract.names import REASONING
from gdelt_forecast.contract.names import TASKS as OPENFORECAST
from gdelt_forecast.site.render import Pages, slug

SPLITS = ("subset", "test")  # Table 2 is on the subset; Table 1 on the test set
AGENTS = ("function", "code")  # the actions of agent runs; other rows have no API set


def write(pages: Pages, release, board: list[dict], traced: set[str]) -> None:
    """``board``: the release's leaderboard rows; ``traced``: the runs whose folder (with
    its steps) is in the data root."""
    mirai = leaderboard.mirai_rows(board, release.manifest.get("baselines", {}))
    tables = []
    for split in SPLITS:
        rows = [r for r in mirai if r["split"] == split]
        runs = [r for r in rows if r["action"] in AGENTS]
        # Rows without an API set (baselines, Direct IO) stand in every table of their split
        # as its reference.
        reference = [r for r in rows if r["action"] not in AGENTS]
        for apis in sorted({r["apis"] for r in runs}) or ["-"]:
            mine = [r for r in runs if r["apis"] == apis] + reference
            if mine:
                tables.append({"split": split, "apis": apis, "rows": _linked(mine, traced)})
    pages.write(
        f"{release.version}/leaderboard.html", "leaderboard.html", release=release,
        mirai=tables, openforecast=leaderboard.task_rows(board, OPENFORECAST),
        reasoning=leaderboard.task_rows(board, REASONING),
    )  # fmt: skip


def _linked(rows: list[dict], traced: set[str]) -> list[dict]:
    return [
        {**r, "traces": f"runs/{slug(r['run'])}/index.html" if r.get("run") in traced else None}
        for r in sorted(rows, key=lambda r: -(r["second_level_f1"] or 0))
    ]
