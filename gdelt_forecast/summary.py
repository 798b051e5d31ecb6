"""What every stage's summary shares: a plain dict, for --json and for Airflow's XCom."""

from dataclasses import asdict


class StageSummary:
    """Base of the stages' summary dataclasses; each adds its counts and a ``line()``."""

    def to_dict(self) -> dict:
        return asdict(self)
