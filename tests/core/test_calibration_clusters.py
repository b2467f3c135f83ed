"""The leaderboard's significance clusters against a simulation with a known truth (a reduced, seeded
version of ``python -m bench.calibration --parts clusters-global,clusters-context``): four evaluators of
equal true agreement on mixed scales are split into more than one cluster in at most 5% of datasets
(allowing two Monte-Carlo standard errors), below the floor no clusters are given, and a set difference
is found."""

from __future__ import annotations

import pytest
from bench.calibration import CLUSTER_STRONG, CLUSTER_WEAK, NOMINAL_FALSE, run_cluster_cell

N_DATASETS = 400


@pytest.mark.parametrize(("level", "k"), [("global", 10), ("global", 20), ("global", 60), ("context", 10),
                                          ("context", 20)])
def test_equally_good_evaluators_share_one_cluster(level: str, k: int) -> None:
    cell = run_cluster_cell(level, k, 6, N_DATASETS, seed=35_000 + k)
    assert cell.rates["clusters shown"].value == 1.0  # above the floor every dataset gets clusters
    false_split = cell.rates["false split"]
    assert false_split.trials == N_DATASETS
    assert not false_split.exceeds(NOMINAL_FALSE), f"{level} at k={k}: {false_split}"
    if k == 60:
        power = cell.rates[f"power ρ {CLUSTER_STRONG} over {CLUSTER_WEAK}"]
        assert power.value > 0.8, f"{level} at k={k}: {power}"


@pytest.mark.parametrize("level", ["global", "context"])
def test_below_the_floor_no_clusters_are_given(level: str) -> None:
    # Six contexts: the exact test's smallest p is 2/64, above Holm's first threshold 0.05/6.
    cell = run_cluster_cell(level, 6, 6, 40, seed=6)
    assert cell.rates["clusters shown"].hits == 0
    assert cell.rates["false split"].trials == 0
