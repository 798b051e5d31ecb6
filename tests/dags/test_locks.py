"""The per-partition locks the DAG tasks and the month stages take under the data root."""

import pytest
from filelock import Timeout

from gdelt_forecast.ground.config import load_config
from gdelt_forecast.storage.locks import LockError, month_lock, partition_lock


def test_one_holder_per_month_and_stage(tmp_path):
    cfg = load_config(None, (), tmp_path)
    with month_lock(cfg, "testset", "2025-08") as held:
        assert held.lock_file == str(tmp_path / "locks/testset-2025-08.lock")
        with pytest.raises(Timeout):
            month_lock(cfg, "testset", "2025-08").acquire(timeout=0)
        # Another month, or another stage of the same month, runs alongside.
        with month_lock(cfg, "testset", "2025-09"), month_lock(cfg, "release", "2025-08"):
            pass
    with month_lock(cfg, "testset", "2025-08"):
        pass  # released with the first holder
    day = partition_lock(cfg, "normalize", "2025-08-07")
    assert day.lock_file == str(tmp_path / "locks/normalize-2025-08-07.lock")


@pytest.mark.parametrize(
    ("stage", "partition"), [("testset", "2025-13"), ("testset", "../x"), ("../x", "2025-08")]
)
def test_a_name_that_is_not_a_stage_or_month_is_refused(tmp_path, stage, partition):
    cfg = load_config(None, (), tmp_path)
    with pytest.raises(LockError):
        month_lock(cfg, stage, partition)
