"""MIRAI test queries and the balanced subset (scored by :mod:`gdelt_forecast.scoring`)."""
