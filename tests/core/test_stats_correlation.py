"""Correlations, bootstrap CIs and system level (dialjudge.core.stats.correlation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dialjudge.core.stats import bootstrap as bs
from dialjudge.core.stats.correlation import correlate, system_level


def expanded_percentiles(values, confidence: float, units: int) -> tuple[float, float]:
    """The expanded percentile interval, written out: the percentiles at the normal tail of
    sqrt(u / (u - 1)) t_{u-1}(1 - alpha/2), for u resampled units."""
    z = math.sqrt(units / (units - 1)) * stats.t.ppf(1 - (1 - confidence) / 2, units - 1)
    tail = 100 * stats.norm.sf(z)
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)

METHODS = ("pearson", "spearman", "kendall")


def scipy_values(x, y) -> dict[str, tuple[float, float]]:
    p, s, k = stats.pearsonr(x, y), stats.spearmanr(x, y), stats.kendalltau(x, y)
    return {"pearson": (p.statistic, p.pvalue), "spearman": (s.statistic, s.pvalue),
            "kendall": (k.statistic, k.pvalue)}


def tied_data(n: int = 80, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, n).astype(float)  # 1-5 ratings: many ties
    scores = np.round(human / 5 + rng.normal(0, 0.3, n), 1)  # ties on this side too
    return scores, human


def test_coefficients_and_p_values_equal_scipy() -> None:
    scores, human = tied_data()
    result = correlate(list(scores), list(human), n_boot=0)
    for method, (value, p_value) in scipy_values(scores, human).items():
        coefficient = result.coefficient(method)
        assert coefficient.value == pytest.approx(value, abs=1e-12)
        assert coefficient.p_value == pytest.approx(p_value, rel=1e-9, abs=1e-12)
    assert result.kendall.value != result.spearman.value  # tau-b, not a copy of rho
    assert result.n == 80 and result.n_excluded == 0 and result.defined


def test_missing_pairs_are_excluded_and_counted() -> None:
    scores = [0.1, None, 0.5, 0.7, float("nan"), 0.2, 0.9, 0.4]
    human = [1.0, 2.0, None, 4.0, 3.0, 2.0, 5.0, float("nan")]
    result = correlate(scores, human, n_boot=0)
    kept_scores, kept_human = [0.1, 0.7, 0.2, 0.9], [1.0, 4.0, 2.0, 5.0]
    assert (result.n, result.n_excluded, result.n_items) == (4, 4, 4)
    for method, (value, _) in scipy_values(kept_scores, kept_human).items():
        assert result.coefficient(method).value == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize(
    ("scores", "human", "reason_part"),
    [
        ([0.3, 0.4], [1, 2], "only 2 paired items"),
        ([None, None, None, 0.4], [1, 2, 3, 4], "only 1 paired items"),
        ([0.5, 0.5, 0.5, 0.5], [1, 2, 3, 4], "scores are constant"),
        ([0.1, 0.2, 0.3, 0.4], [3, 3, 3, 3], "human labels are constant"),
        ([], [], "only 0 paired items"),
    ],
)
def test_degenerate_inputs_give_nan_with_a_reason(scores, human, reason_part) -> None:
    result = correlate(scores, human, n_boot=100)
    assert not result.defined
    assert reason_part in (result.reason or "")
    for method in METHODS:
        coefficient = result.coefficient(method)
        assert math.isnan(coefficient.value) and math.isnan(coefficient.ci_low)
    assert all(v is None for k, v in result.to_dict().items() if k.startswith(METHODS))


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="confidence"):
        correlate([1, 2, 3], [1, 2, 3], confidence=1.5)
    with pytest.raises(ValueError, match="3 scores but 2 human labels"):
        correlate([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="not a number"):
        correlate([1, "x", 3], [1, 2, 3])


def test_bootstrap_is_seeded() -> None:
    scores, human = tied_data()
    first = correlate(list(scores), list(human), n_boot=300, seed=7)
    again = correlate(list(scores), list(human), n_boot=300, seed=7)
    other = correlate(list(scores), list(human), n_boot=300, seed=8)
    assert first == again
    assert (first.pearson.ci_low, first.pearson.ci_high) != (other.pearson.ci_low, other.pearson.ci_high)
    for method in METHODS:
        c = first.coefficient(method)
        assert c.ci_low < c.value < c.ci_high and c.n_resamples == 300


@pytest.mark.parametrize("grouped", [False, True])
def test_vectorised_bootstrap_equals_explicit_resamples(grouped: bool) -> None:
    """The weight-based bootstrap gives exactly what scipy gives on each resample written out."""
    scores, human = tied_data(n=36, seed=3)
    groups = [i // 4 for i in range(36)] if grouped else None
    n_boot, seed, confidence = 150, 11, 0.9
    result = correlate(list(scores), list(human), groups, n_boot=n_boot, seed=seed, confidence=confidence)
    weights = bs.resample(36, groups, n_boot=n_boot, seed=seed).item_weights.astype(int)
    explicit = {m: [] for m in METHODS}
    for row in weights:
        xs, ys = np.repeat(scores, row), np.repeat(human, row)
        if np.ptp(xs) == 0 or np.ptp(ys) == 0:
            continue
        for method, (value, _) in scipy_values(xs, ys).items():
            explicit[method].append(value)
    for method in METHODS:
        low, high = expanded_percentiles(explicit[method], 0.90, 9 if grouped else 36)
        c = result.coefficient(method)
        assert c.n_resamples == len(explicit[method])
        assert (c.ci_low, c.ci_high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))


def test_group_resampling_keeps_groups_whole() -> None:
    groups = ["a"] * 3 + ["b"] * 5 + ["c"] * 2 + ["d"] * 4
    rs = bs.resample(len(groups), groups, n_boot=200, seed=0)
    weights = rs.item_weights
    for start, size in ((0, 3), (3, 5), (8, 2), (10, 4)):
        block = weights[:, start:start + size]
        assert (block == block[:, :1]).all()  # every item of a group drawn equally often
    assert (rs.unit_weights.sum(axis=1) == 4).all()  # as many draws as groups
    assert rs.by_group and rs.n_units == 4


def test_group_bootstrap_is_wider_when_items_share_their_group() -> None:
    """20 contexts x 10 candidates whose scores and labels move together with the
    context: there are only 20 independent units, so the honest CI is wide."""
    rng = np.random.default_rng(5)
    n_groups, size = 20, 10
    context_effect = rng.normal(size=n_groups)
    human = np.repeat(context_effect, size) + rng.normal(0, 0.3, n_groups * size)
    scores = np.repeat(0.5 * context_effect + rng.normal(size=n_groups), size) + rng.normal(0, 0.3, n_groups * size)
    groups = np.repeat(np.arange(n_groups), size).tolist()
    by_item = correlate(list(scores), list(human), n_boot=500)
    by_group = correlate(list(scores), list(human), groups, n_boot=500)
    assert by_item.pearson.value == by_group.pearson.value
    assert by_group.n_groups == 20 and by_item.n_groups is None
    for method in METHODS:
        item_width = by_item.coefficient(method).ci_high - by_item.coefficient(method).ci_low
        group_width = by_group.coefficient(method).ci_high - by_group.coefficient(method).ci_low
        assert group_width > 2 * item_width, method


def test_system_level_correlates_system_means() -> None:
    systems = ["a", "a", "b", "b", "b", "c", "c", "d", None]
    scores = [0.1, 0.3, 0.5, 0.6, None, 0.9, 0.7, 0.2, 0.8]
    human = [1.0, 2.0, 4.0, 3.0, 5.0, 5.0, 4.0, 3.0, 1.0]
    result = system_level(scores, human, systems, n_boot=0)
    # Means over paired items only: b loses its unscored third item.
    means_scores, means_human = [0.2, 0.55, 0.8, 0.2], [1.5, 3.5, 4.5, 3.0]
    for method, (value, p_value) in scipy_values(means_scores, means_human).items():
        assert result.coefficient(method).value == pytest.approx(value, abs=1e-12)
        assert result.coefficient(method).p_value == pytest.approx(p_value, abs=1e-12)
    assert (result.level, result.n, result.n_items, result.n_excluded) == ("system", 4, 7, 2)


def test_system_level_bootstrap_recomputes_means_of_resampled_groups() -> None:
    rng = np.random.default_rng(2)
    n_contexts, systems = 15, ["s1", "s2", "s3", "s4", "s5"]
    quality = {"s1": 1.0, "s2": 2.0, "s3": 2.5, "s4": 3.5, "s5": 4.0}
    system_of = [s for _ in range(n_contexts) for s in systems]
    human = np.array([quality[s] + rng.normal() for s in system_of])
    scores = np.array([quality[s] / 4 + rng.normal(0, 0.4) for s in system_of])
    groups = [i // len(systems) for i in range(len(system_of))]
    result = system_level(list(scores), list(human), system_of, groups, n_boot=120, seed=4)
    weights = bs.resample(len(system_of), groups, n_boot=120, seed=4).item_weights
    explicit = {m: [] for m in METHODS}
    for row in weights:
        mean_x = [np.average(scores[[i for i, s in enumerate(system_of) if s == name]],
                             weights=row[[i for i, s in enumerate(system_of) if s == name]]) for name in systems]
        mean_y = [np.average(human[[i for i, s in enumerate(system_of) if s == name]],
                             weights=row[[i for i, s in enumerate(system_of) if s == name]]) for name in systems]
        for method, (value, _) in scipy_values(mean_x, mean_y).items():
            explicit[method].append(value)
    for method in METHODS:
        low, high = expanded_percentiles(explicit[method], 0.95, n_contexts)
        c = result.coefficient(method)
        assert (c.ci_low, c.ci_high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    assert result.n == 5 and result.n_groups == n_contexts


def test_system_level_with_too_few_systems_is_undefined() -> None:
    result = system_level([0.1, 0.2, 0.3, 0.4], [1, 2, 3, 4], ["a", "a", "b", "b"])
    assert not result.defined and "only 2 paired systems" in (result.reason or "")


def test_kendall_beyond_the_matrix_limit_uses_fewer_explicit_resamples(monkeypatch) -> None:
    monkeypatch.setattr(bs, "KENDALL_MATRIX_MAX_UNITS", 10)
    scores, human = tied_data(n=36, seed=6)
    result = correlate(list(scores), list(human), n_boot=300, seed=2)
    weights = bs.resample(36, None, n_boot=300, seed=2).item_weights.astype(int)[:bs.KENDALL_LOOP_MAX_RESAMPLES]
    explicit = [stats.kendalltau(np.repeat(scores, w), np.repeat(human, w)).statistic for w in weights]
    assert result.kendall.n_resamples == 200 and result.pearson.n_resamples == 300
    low, high = expanded_percentiles(explicit, 0.95, 36)
    assert (result.kendall.ci_low, result.kendall.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_blocks_of_resamples_give_the_same_interval_as_one_matrix(monkeypatch):
    """At 100,000 items the bootstrap is computed a block of resamples at a time (bounded memory):
    the values must equal those of the single resamples x items matrix."""
    from dialjudge.core.stats import bootstrap
    from dialjudge.core.stats.correlation import item_correlation

    rng = np.random.default_rng(1)
    x = rng.normal(size=3000)
    y = np.round(x + rng.normal(size=3000))
    groups = [i // 5 for i in range(3000)]

    def interval(cells: int):
        monkeypatch.setattr(bootstrap, "BLOCK_CELLS", cells)
        weights = bootstrap.resample(3000, groups, n_boot=300, seed=3).unit_weights
        return weights, item_correlation(x, y, groups, n_excluded=0, n_boot=300, seed=3, confidence=0.95)

    whole_weights, whole = interval(10**12)
    blocked_weights, blocked = interval(50_000)  # 17 resamples a block; the draws in blocks too
    assert np.array_equal(whole_weights, blocked_weights)
    assert blocked == whole
