"""PPI++, the labels-only estimate and Rogan–Gladen: hand-computed cases and coverage by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dialjudge.core.stats.label_simulation import BinaryJudge, GradedJudge, coverage
from dialjudge.core.stats.ppi import difference, labels_only_mean, power_tuned_lambda, ppi_mean
from dialjudge.core.stats.rogan_gladen import corrected_rate, rogan_gladen

Y = [1.0, 2.0, 3.0, 4.0]
F = [1.5, 2.0, 2.5, 5.0]
U = [2.0, 3.0, 4.0, 3.0, 2.0, 4.0]


def test_labels_only_by_hand() -> None:
    est = labels_only_mean(Y)
    # mean 2.5, sd sqrt(5/3), se sqrt(5/3)/2, t(0.975, 3) = 3.182
    se = math.sqrt(5 / 3) / 2
    assert est.value == 2.5
    assert est.std_error == pytest.approx(se)
    assert est.high - est.value == pytest.approx(stats.t.ppf(0.975, 3) * se)


def test_plain_ppi_by_hand() -> None:
    # lambda = 1: mean(Y - F) + mean(U) = (-0.5 + 0 + 0.5 - 1) / 4 + 3 = 2.75
    est = ppi_mean(Y, F, U, lam=1.0)
    assert est.value == pytest.approx(2.75)
    residual_var = np.var(np.subtract(Y, F), ddof=1)  # of (-0.5, 0, 0.5, -1)
    assert est.std_error == pytest.approx(math.sqrt(np.var(U, ddof=1) / 6 + residual_var / 4))
    assert est.lam == 1.0 and est.n_labelled == 4 and est.n_unlabelled == 6


def test_power_tuned_lambda_by_hand() -> None:
    y, f, u = np.array(Y), np.array(F), np.array(U)
    cov = sum((a - 2.5) * (b - 2.75) for a, b in zip(Y, F)) / 3
    all_f = F + U
    var_f = sum((x - sum(all_f) / 10) ** 2 for x in all_f) / 9
    assert power_tuned_lambda(y, f, u) == pytest.approx(cov / ((1 + 4 / 6) * var_f))
    est = ppi_mean(Y, F, U)
    lam = est.lam
    assert lam is not None
    assert est.value == pytest.approx(np.mean(y - lam * f) + lam * np.mean(u))


def test_a_constant_judge_adds_nothing() -> None:
    est = ppi_mean(Y, [3.0] * 4, [3.0] * 6)
    assert est.lam == 0.0
    only = labels_only_mean(Y)
    assert (est.value, est.low, est.high) == pytest.approx((only.value, only.low, only.high))


def test_tuned_estimate_ignores_the_judges_scale() -> None:
    """With the tuned lambda, an affine change of the judge's scale (a biased judge) leaves the estimate as is."""
    rng = np.random.default_rng(0)
    y, f = GradedJudge(0.8).draw(rng, 40)
    _, u = GradedJudge(0.8).draw(rng, 300)
    a = ppi_mean(y, f, u)
    b = ppi_mean(y, 2 * f + 7, 2 * u + 7)
    assert (a.value, a.low, a.high) == pytest.approx((b.value, b.low, b.high))


def test_difference_adds_variances() -> None:
    a, b = labels_only_mean(Y), labels_only_mean([2.0, 2.0, 3.0, 5.0])
    d = difference(a, b)
    assert d.value == pytest.approx(a.value - b.value)
    assert d.std_error == pytest.approx(math.hypot(a.std_error, b.std_error))


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="labels but"):
        ppi_mean(Y, F[:3], U)
    with pytest.raises(ValueError, match="at least 2"):
        ppi_mean([1.0], [1.0], U)
    with pytest.raises(ValueError, match="finite"):
        ppi_mean(Y, [1.0, math.nan, 2.0, 3.0], U)


def test_rogan_gladen_by_hand() -> None:
    labels = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    judged = [1, 1, 1, 0, 0, 0, 0, 0, 1, 0]  # sensitivity 3/4, specificity 5/6
    unlabelled = [1] * 6 + [0] * 4  # judged pass rate 0.6
    theta, sens, spec, p = corrected_rate(np.array(labels, float), np.array(judged, float),
                                          np.array(unlabelled, float))
    assert (sens, spec, p) == pytest.approx((0.75, 5 / 6, 0.6))
    assert theta == pytest.approx((0.6 + 5 / 6 - 1) / (0.75 + 5 / 6 - 1))
    result = rogan_gladen(labels, judged, unlabelled, n_boot=500, seed=1)
    assert result.estimate is not None
    assert result.estimate.value == pytest.approx(theta)
    assert result.estimate.low <= theta <= result.estimate.high


def test_rogan_gladen_matches_judgy() -> None:
    """judgy (an independent implementation) gives the same point estimate."""
    judgy = pytest.importorskip("judgy")
    rng = np.random.default_rng(4)
    y, f = BinaryJudge().draw(rng, 80)
    _, u = BinaryJudge().draw(rng, 400)
    ours = rogan_gladen(y, f, u, n_boot=200).estimate
    theirs, low, high = judgy.estimate_success_rate(y.astype(int), f.astype(int), u.astype(int),
                                                    bootstrap_iterations=200)
    assert ours is not None
    assert ours.value == pytest.approx(theirs)


def test_rogan_gladen_refuses_a_chance_judge() -> None:
    result = rogan_gladen([1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 1])
    assert result.estimate is None
    assert result.reason is not None and "no better than chance" in result.reason
    one_class = rogan_gladen([1, 1, 1], [1, 0, 1], [1, 0])
    assert one_class.estimate is None and "one class" in (one_class.reason or "")


def test_rogan_gladen_bootstrap_is_seeded() -> None:
    args = ([1, 1, 0, 0, 1, 0, 1, 1], [1, 1, 0, 0, 1, 1, 1, 0], [1, 0, 1, 1, 0, 1])
    assert rogan_gladen(*args, seed=3) == rogan_gladen(*args, seed=3)


# Coverage at the sizes the README recommends (50 labels for PPI++, 100 for Rogan–Gladen), reduced runs of
# bench/label_estimates.py. With 1000 (2000) replicates the coverage's standard error is about 0.7 (0.5) points.

def test_ppi_coverage_at_50_labels() -> None:
    for judge in (GradedJudge(0.8), GradedJudge(0.5, judge_bias=0.7), GradedJudge(0.0)):
        results = coverage(judge, ["labels only", "PPI++"], n_labelled=50, n_unlabelled=500, replicates=1000,
                           seed=7)
        for r in results:
            assert 0.93 <= r.coverage <= 0.97, (judge, r)
        only, ppi = results
        if judge.judge_corr >= 0.8:
            assert ppi.mean_width < 0.75 * only.mean_width  # the judge earns its place
        if judge.judge_corr == 0.0:
            assert ppi.mean_width < 1.03 * only.mean_width  # a useless judge costs (almost) nothing


def test_binary_coverage_at_100_labels() -> None:
    results = coverage(BinaryJudge(), ["labels only", "PPI++", "Rogan–Gladen"], n_labelled=100,
                       n_unlabelled=1000, replicates=2000, seed=3)
    for r in results:
        assert r.undefined == 0
        assert 0.93 <= r.coverage <= 0.97, r


def test_equal_labels_give_no_interval_rather_than_a_zero_width_one() -> None:
    """Two equal ratings entered in the Review screen once gave 2.667 [2.667, 2.667]."""
    with pytest.raises(ValueError, match="all 3 labels"):
        labels_only_mean([3.0, 3.0, 3.0])
    with pytest.raises(ValueError, match="all 3 labels"):
        ppi_mean([3.0, 3.0, 3.0], [2.0, 2.0, 2.0], [1.0, 4.0, 2.0], lam=0.0)
    spread = labels_only_mean([3.0, 3.0, 4.0])
    assert spread.width > 0
