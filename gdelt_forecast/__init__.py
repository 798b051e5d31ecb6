"""gdelt-forecast: GDELT 2.0 event dumps and their articles to versioned forecasting benchmarks."""

__version__ = "0.1.0"
