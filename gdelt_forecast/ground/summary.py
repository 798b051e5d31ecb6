"""What every stage's summary shares: a plain dict, for --json, Airflow's XCom and records."""

from dataclasses import fields, is_dataclass


class StageSummary:
    """Base of the stages' summary dataclasses; each adds its counts, a ``seconds`` field
    (0.0 by default: :mod:`gdelt_forecast.pipeline.runner` times every stage and sets it, so
    no stage times itself) and a ``line()``."""

    def to_dict(self) -> dict:
        return _plain(self)


def _plain(value):
    """``dataclasses.asdict`` rebuilds a Counter from its (key, count) pairs, counting the
    pairs; this keeps every mapping a plain dict of its own items."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    return value
