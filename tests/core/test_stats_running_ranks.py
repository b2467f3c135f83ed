"""The incremental Spearman and Kendall (dialjudge.core.stats.running_ranks) equal scipy's batch values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dialjudge.core.stats.correlation import point_estimates
from dialjudge.core.stats.running import RunningCorrelations
from dialjudge.core.stats.running_ranks import MAX_GROUPS, RankConcordance


def assert_equals_scipy(concordance: RankConcordance, pairs: list[tuple[float, float]]) -> None:
    x = np.array([a for a, _ in pairs])
    y = np.array([b for _, b in pairs])
    rho, tau = concordance.coefficients()
    spearman, kendall = stats.spearmanr(x, y), stats.kendalltau(x, y)
    assert rho == pytest.approx(spearman.statistic, rel=1e-12, abs=1e-14, nan_ok=True)
    assert tau == pytest.approx(kendall.statistic, rel=1e-12, abs=1e-14, nan_ok=True)
    p_values = concordance.p_values(rho, tau)
    if p_values is not None:
        assert p_values[0] == pytest.approx(spearman.pvalue, rel=1e-9, abs=1e-300, nan_ok=True)
        assert p_values[1] == pytest.approx(kendall.pvalue, rel=1e-9, abs=1e-300, nan_ok=True)


@pytest.mark.parametrize("seed", range(12))
def test_adds_removals_and_refreshes_in_any_order_equal_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    concordance = RankConcordance()
    pairs: list[tuple[float, float]] = []
    tied_scores = seed % 2 == 0  # a judge with few distinct scores (ties), or continuous ones
    for _ in range(int(rng.integers(40, 600))):
        x = float(rng.integers(0, 9)) / 8 if tied_scores else float(rng.random())
        y = float(rng.integers(2, 11)) / 2
        concordance.add(x, y)
        pairs.append((x, y))
        if rng.random() < 0.15:  # a retry replaces an earlier score, applied or still queued
            concordance.remove(*pairs.pop(int(rng.integers(0, len(pairs)))))
        if rng.random() < 0.05:
            assert_equals_scipy(concordance, pairs)
    assert concordance.n == len(pairs)
    assert_equals_scipy(concordance, pairs)


@pytest.mark.parametrize("seed", range(8))
def test_many_removals_between_refreshes_equal_scipy(seed: int) -> None:
    """Removals of applied pairs wait for the next refresh and are taken out together: many at once,
    copies of one pair, whole label groups, pairs removed and added again."""
    rng = np.random.default_rng(100 + seed)
    concordance = RankConcordance()
    pairs: list[tuple[float, float]] = []
    for _ in range(400):
        pair = (float(rng.integers(0, 4)) / 3, float(rng.integers(1, 4)))  # few distinct pairs: many copies
        concordance.add(*pair)
        pairs.append(pair)
    assert_equals_scipy(concordance, pairs)
    for _ in range(6):
        for _ in range(int(rng.integers(20, 60))):
            pair = pairs.pop(int(rng.integers(0, len(pairs))))
            concordance.remove(*pair)
            if rng.random() < 0.2:  # put back (queued), or another pair instead
                again = pair if rng.random() < 0.5 else (float(rng.random()), float(rng.integers(1, 4)))
                concordance.add(*again)
                pairs.append(again)
        assert concordance.n == len(pairs)
        assert_equals_scipy(concordance, pairs)
    for pair in [p for p in pairs if p[1] == 2.0]:  # a whole label group goes
        concordance.remove(*pair)
        pairs.remove(pair)
    assert_equals_scipy(concordance, pairs)


def test_removing_more_copies_than_were_added_fails() -> None:
    concordance = RankConcordance()
    for _ in range(2):
        concordance.add(0.5, 1.0)
    concordance.add(0.7, 2.0)
    concordance.coefficients()
    concordance.remove(0.5, 1.0)
    concordance.remove(0.5, 1.0)  # both copies are waiting to be taken out
    with pytest.raises(KeyError):
        concordance.remove(0.5, 1.0)
    assert concordance.n == 1


def test_removing_a_pair_never_added_fails() -> None:
    concordance = RankConcordance()
    concordance.add(0.5, 1.0)
    concordance.add(0.7, 2.0)
    concordance.coefficients()
    with pytest.raises(KeyError):
        concordance.remove(0.6, 1.0)


def test_constant_scores_and_few_pairs_give_nan() -> None:
    concordance = RankConcordance()
    concordance.add(0.5, 1.0)
    assert all(math.isnan(v) for v in concordance.coefficients())
    concordance.add(0.5, 2.0)
    concordance.add(0.5, 3.0)
    assert all(math.isnan(v) for v in concordance.coefficients())


def test_running_correlations_use_it_and_equal_the_batch_point_estimates() -> None:
    rng = np.random.default_rng(3)
    ids = [f"ex{i}" for i in range(2_000)]
    human = {i: float(rng.integers(1, 6)) for i in ids}
    running = RunningCorrelations(human, {i: f"ctx{k // 3}" for k, i in enumerate(ids)}, n_boot=50)
    latest: dict[str, float] = {}
    for item in ids + ids[:300]:  # the second pass replaces 300 scores
        score = round(human[item] / 5 + float(rng.normal(0, 0.3)), 3)
        running.add("judge", item, score)
        latest[item] = score
    snapshot = running.snapshot("judge", ci=True)
    x = np.array([latest[i] for i in ids])
    y = np.array([human[i] for i in ids])
    expected = point_estimates(x, y)
    assert snapshot.spearman == pytest.approx(expected["spearman"][0], rel=1e-12)
    assert snapshot.kendall == pytest.approx(expected["kendall"][0], rel=1e-12)
    result = snapshot.result
    assert result is not None and snapshot.ci_approximate  # 2,000 items: the m-out-of-n CI
    for method in ("pearson", "spearman", "kendall"):
        assert result.coefficient(method).value == pytest.approx(expected[method][0], rel=1e-12)
        assert result.coefficient(method).p_value == pytest.approx(expected[method][1], rel=1e-9, abs=1e-300, nan_ok=True)


def test_many_distinct_labels_fall_back_to_scipy() -> None:
    rng = np.random.default_rng(4)
    ids = [f"ex{i}" for i in range(MAX_GROUPS * 3)]
    human = {i: float(k) for k, i in enumerate(ids)}  # every label distinct
    running = RunningCorrelations(human)
    for i in ids:
        running.add("judge", i, float(rng.random()))
    snapshot = running.snapshot("judge")
    scores = running._series["judge"].columns.arrays
    assert snapshot.spearman == pytest.approx(float(stats.spearmanr(*scores).statistic), rel=1e-12)
    assert snapshot.kendall == pytest.approx(float(stats.kendalltau(*scores).statistic), rel=1e-12)
