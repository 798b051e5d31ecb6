"""The static site of a data root (``gdelt-forecast site``): its releases, leaderboards,
records and agent traces as plain files; see :mod:`gdelt_forecast.site.build`."""
