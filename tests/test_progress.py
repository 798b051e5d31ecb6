"""Progress without a terminal: periodic log lines that count what is done."""

import logging

from gdelt_forecast.ground.progress import progress


def test_periodic_counts_in_logs(caplog):
    with caplog.at_level(logging.INFO, logger="gdelt_forecast.ground.progress"):
        assert list(progress(range(4), 4, "ingest", every_s=0)) == [0, 1, 2, 3]
    assert caplog.messages == [
        "ingest: 1/4 (25%)",
        "ingest: 2/4 (50%)",
        "ingest: 3/4 (75%)",
        "ingest: 4/4 (100%)",
    ]
