"""The release's figures as PNG bytes, drawn the same way on every run.

Figures are built with the object-oriented API on the Agg canvas (no display, nothing kept
in pyplot's registry), under matplotlib's default style so a user's matplotlibrc cannot
change a release, and saved without the Software tag, the only varying PNG metadata.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import matplotlib.dates as mdates
import matplotlib.style
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

DPI = 150
WIDTH = 8.0  # inches: 1200 px at DPI, about the text width of a paper page
LOG_RATIO = 100  # a log axis once the largest bar is this many times the smallest
LABEL_CHARS = 48


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    FigureCanvasAgg(fig).print_png(buf, metadata={"Software": None})
    return buf.getvalue()


def _figure(height: float, rows: int = 1) -> tuple[Figure, list[Axes]]:
    fig = Figure(figsize=(WIDTH, height), dpi=DPI, layout="constrained")
    return fig, list(fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0])


def _no_data(title: str) -> bytes:
    fig, (ax,) = _figure(2.0)
    ax.set_title(title)
    ax.text(0.5, 0.5, "no data", ha="center", va="center", fontsize=14, color="0.4")
    ax.set_axis_off()
    return _png(fig)


def _short(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def bars(title: str, labels: Sequence[str], values: Sequence[int], xlabel: str) -> bytes:
    """A horizontal bar chart, each bar labelled with its value; a log axis for wide ranges."""
    with matplotlib.style.context("default"):
        if not values:
            return _no_data(title)
        fig, (ax,) = _figure(1.2 + 0.26 * len(values))
        drawn = ax.barh(range(len(values)), values, color="#4C72B0")
        ax.bar_label(drawn, labels=[f"{v:,}" for v in values], padding=3, fontsize=8)
        ax.set_yticks(range(len(values)), [_short(s) for s in labels], fontsize=9)
        ax.set_ylim(len(values) - 0.5, -0.5)  # first bar on top
        # Room right of the longest bar for its value label.
        if min(values) > 0 and max(values) >= LOG_RATIO * min(values):
            ax.set_xscale("log")
            ax.set_xlim(min(values) / 2, max(values) * 5)
        else:
            ax.set_xlim(0, max(max(values) * 1.15, 1))
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # counts: no 0.5 ticks
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.spines[["top", "right"]].set_visible(False)
        return _png(fig)


def daily(title: str, rows: Sequence[dict]) -> bytes:
    """GDELT records and quads per day above, kept news documents per day below."""
    with matplotlib.style.context("default"):
        if not rows:
            return _no_data(title)
        days = [r["date"] for r in rows]
        fig, (top, bottom) = _figure(5.0, rows=2)
        top.plot(days, [r["events"] for r in rows], marker=".", label="GDELT records")
        top.plot(days, [r["quads"] for r in rows], marker=".", label="quads")
        top.set_ylabel("per day")
        # Headroom above the lines keeps the legend off them.
        top.set_ylim(0, max(max(r["events"] for r in rows) * 1.25, 1))
        top.legend(loc="upper left", ncols=2, fontsize=9, frameon=False)
        top.set_title(title)
        bottom.bar(days, [r["documents"] for r in rows], color="#55A868", width=0.8)
        bottom.set_ylabel("news documents")
        # Half a day beyond the outer bars, so no tick (nor offset label) of the next month,
        # and day ticks rather than hours for windows of a few days.
        bottom.set_xlim(mdates.date2num(days[0]) - 0.5, mdates.date2num(days[-1]) + 0.5)
        short = len(days) <= 7  # AutoDateLocator would tick hours around so few days
        locator = mdates.DayLocator() if short else mdates.AutoDateLocator(minticks=2)
        bottom.xaxis.set_major_locator(locator)
        bottom.xaxis.set_major_formatter(
            mdates.DateFormatter("%Y-%m-%d") if short else mdates.ConciseDateFormatter(locator)
        )
        bottom.set_ylim(bottom=0)
        for ax in (top, bottom):
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(axis="y", color="0.9")
            ax.spines[["top", "right"]].set_visible(False)
        return _png(fig)
