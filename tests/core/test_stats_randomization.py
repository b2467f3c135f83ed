"""The randomization test over contexts (dialjudge.core.stats.randomization), checked against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from dialjudge.core.stats.randomization import randomization_test
from dialjudge.core.stats.small_samples import MIN_CONTEXTS, too_few_contexts

SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def comparable(method: str, x: np.ndarray) -> np.ndarray:
    """Written out independently: z-scores for Pearson, ranks / n for the rank coefficients."""
    if method == "pearson":
        return (x - x.mean()) / x.std()
    return stats.rankdata(x) / len(x)


def brute_force_p(method: str, a: np.ndarray, b: np.ndarray, y: np.ndarray, units: np.ndarray) -> float:
    fn = SCIPY[method]
    a, b = comparable(method, a), comparable(method, b)
    observed = abs(fn(b, y).statistic - fn(a, y).statistic)
    k = int(units.max()) + 1
    extreme = 0
    for assignment in itertools.product((False, True), repeat=k):
        swap = np.array(assignment)[units]
        new_a, new_b = np.where(swap, b, a), np.where(swap, a, b)
        extreme += abs(fn(new_b, y).statistic - fn(new_a, y).statistic) >= observed - 1e-12
    return extreme / 2 ** k


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_p_equals_every_swap_written_out(method: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    k, m = 6, 3
    units = np.repeat(np.arange(k), m)
    y = rng.integers(1, 6, k * m).astype(float)  # ties on the human side
    a = 10 * (y + rng.normal(0, 2, k * m))  # another scale than B's
    b = np.round(y + rng.normal(0, 1 + seed, k * m))  # ties on B's side
    result = randomization_test(method, a, b, y, units)
    assert result.exact and result.n_assignments == 2 ** k
    assert result.p_value == pytest.approx(brute_force_p(method, a, b, y, units), abs=1e-12)


def test_monte_carlo_p_is_close_to_the_exact_one_and_never_zero() -> None:
    rng = np.random.default_rng(5)
    k, m = 10, 4
    units = np.repeat(np.arange(k), m)
    y = rng.normal(size=k * m)
    a, b = y + rng.normal(0, 1.5, k * m), y + rng.normal(0, 0.7, k * m)
    exact = randomization_test("spearman", a, b, y, units)
    sampled = randomization_test("spearman", a, b, y, units, exact_max_contexts=5, n_draws=4000, seed=1)
    assert not sampled.exact and sampled.n_assignments == 4000
    assert sampled.p_value == pytest.approx(exact.p_value, abs=4 * np.sqrt(0.25 / 4000) + 1e-3)
    far = randomization_test("pearson", y + 0.01 * rng.normal(size=k * m), -y, y, units, exact_max_contexts=5,
                             n_draws=500)
    assert far.p_value == pytest.approx(1 / 501)


def test_three_contexts_can_never_give_a_small_p() -> None:
    rng = np.random.default_rng(0)
    units = np.repeat(np.arange(3), 6)
    y = rng.normal(size=18)
    result = randomization_test("spearman", -y, y, y, units)  # as different as two judges can be
    assert result.p_value == pytest.approx(0.25) and result.smallest_possible_p == pytest.approx(0.25)


def test_the_floor_is_where_the_exact_test_first_can_reach_five_percent() -> None:
    # One of the two conditions MIN_CONTEXTS is derived from (the other: simulated coverage, in
    # tests/core/test_calibration_simulation.py and bench/calibration.py).
    assert 2 / 2 ** (MIN_CONTEXTS - 1) >= 0.05 > 2 / 2 ** MIN_CONTEXTS
    assert too_few_contexts(2) == f"too few contexts to decide: 2 (at least {MIN_CONTEXTS} are needed)"
    assert too_few_contexts(MIN_CONTEXTS) is None
