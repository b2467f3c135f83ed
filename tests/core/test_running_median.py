"""The status line's running median against statistics.median on every prefix of random streams."""

import math
import random
import statistics

import pytest

from dialjudge.core.stats.running_median import RunningMedian


@pytest.mark.parametrize("seed", range(5))
def test_every_prefix_matches_statistics_median(seed: int) -> None:
    rng = random.Random(seed)
    values = [rng.choice([rng.random(), round(rng.random(), 1), 0.0, 1.0]) for _ in range(400)]
    running = RunningMedian()
    for n, value in enumerate(values, start=1):
        running.add(value)
        assert len(running) == n
        assert running.median == statistics.median(values[:n])
        assert running.least == min(values[:n])


def test_empty_and_nan_are_refused() -> None:
    running = RunningMedian()
    assert not running
    with pytest.raises(ValueError):
        _ = running.median
    with pytest.raises(ValueError):
        _ = running.least
    with pytest.raises(ValueError):
        running.add(math.nan)
