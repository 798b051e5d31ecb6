"""Live rounds: questions about days that have not happened yet, the forecasts sent before
their deadline, and their resolution and scores once the days are in (issue 50)."""
