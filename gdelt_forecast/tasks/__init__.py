"""OpenForecast's six forecasting tasks, built from the timelines, and their evaluation."""

TASKS = ("STF", "LTF", "AQA", "MCNC", "MCAC", "VQA")  # the paper's order: open, then closed
