"""The card's count plots tick whole numbers only."""

from __future__ import annotations

from gdelt_forecast.release import plots


def test_a_bar_chart_of_small_counts_has_whole_ticks(monkeypatch):
    drawn = []
    monkeypatch.setattr(plots, "_png", lambda fig: drawn.append(fig) or b"png")
    plots.bars("queries by country", ["USA", "CHN", "RUS"], [2, 1, 1], "queries")
    ticks = drawn[0].axes[0].get_xticks()
    assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks), ticks
