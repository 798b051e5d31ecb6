"""A simulated year of monthly refreshes, one after another (``run``), reusing the month
bench's mirror, news web and cluster."""
