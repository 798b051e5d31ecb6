"""OpenForecast's six forecasting tasks, built from the timelines, and their evaluation."""
