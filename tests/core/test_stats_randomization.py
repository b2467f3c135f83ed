"""The randomization test over contexts (dialjudge.core.stats.randomization), checked against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from dialjudge.core.stats.randomization import randomization_test
from dialjudge.core.stats.small_samples import MIN_CONTEXTS, too_few_contexts

SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def brute_force_p(method: str, a: np.ndarray, b: np.ndarray, y: np.ndarray, units: np.ndarray) -> float:
    """Every assignment written out: the raw scores swapped, scipy's coefficient recomputed."""
    fn = SCIPY[method]
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


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_every_assignment_of_an_orbit_is_judged_against_the_same_reference(method: str) -> None:
    """What makes the test exact: under H0 the 2^k assignments of the data (A and B swapped within
    some contexts) are equally likely, so starting from any of them the test must compare the observed
    |Δ| with one and the same reference set, the |Δ| of all 2^k. Then the p from start s is the share
    of starts u whose own observed |Δ| is at least s's. A version that z-scored or ranked each side on
    its own before swapping broke this (a side's ranks depend on its other contexts) and claimed a
    difference between equally good simulated judges in 6.2% of datasets instead of 5%."""
    rng = np.random.default_rng(11)
    k, m = 5, 3
    units = np.repeat(np.arange(k), m)
    y = rng.integers(1, 6, k * m).astype(float)
    a = y + rng.normal(0, 1.0, k * m)
    b = np.round(y + rng.normal(0, 2.0, k * m))
    fn = SCIPY[method]
    observed, p_values = [], []
    for assignment in itertools.product((False, True), repeat=k):
        swap = np.array(assignment)[units]
        start_a, start_b = np.where(swap, b, a), np.where(swap, a, b)
        observed.append(abs(fn(start_b, y).statistic - fn(start_a, y).statistic))
        p_values.append(randomization_test(method, start_a, start_b, y, units).p_value)
    reference = np.array(observed)
    for own, p in zip(observed, p_values):
        assert p == pytest.approx(float(np.mean(reference >= own - 1e-12)), abs=1e-12)


def test_scales_that_differ_make_the_test_conservative_not_liberal() -> None:
    """A 1-5 rating against a p(yes), both unrelated to the humans: the swapped contexts carry their
    scale along, so the test claims a difference no more often than 5%."""
    rng = np.random.default_rng(3)
    k, m, draws = 8, 3, 300
    units = np.repeat(np.arange(k), m)
    y = rng.normal(size=k * m)
    claimed = sum(randomization_test("spearman", rng.uniform(1, 5, k * m), rng.random(k * m), y, units).p_value < 0.05
                  for _ in range(draws))
    assert claimed <= draws * 0.05 + 2 * np.sqrt(draws * 0.05 * 0.95)
