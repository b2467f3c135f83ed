"""Selective evaluation (fixed-sequence threshold) and active inference (IPW), by hand and by simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dialjudge.core.stats.active import (
    active_mean,
    distribution_spread,
    draw_labels,
    label_probabilities,
    propose,
)
from dialjudge.core.stats.selective import answer_confidence, risk_p_value, selective_threshold


def test_risk_p_value_by_hand() -> None:
    # 0 errors in 20 items when the risk were 0.1: 0.9 ** 20 = 0.1216
    assert risk_p_value(20, 0, 0.1) == pytest.approx(0.9 ** 20)
    assert risk_p_value(0, 0, 0.1) == 1.0


def test_fixed_sequence_by_hand() -> None:
    # 30 items at confidence 0.95, all right; 10 at 0.6 with 5 wrong.
    conf = [0.95] * 30 + [0.6] * 10
    agree = [True] * 30 + [True] * 5 + [False] * 5
    result = selective_threshold(conf, agree, alpha=0.1, delta=0.1)
    # From 1.00 down to 0.96 no item is covered; at 0.95..0.61 the 30 right items give p = 0.9^30 = 0.042 <= 0.1;
    # at 0.60 the 40 items with 5 errors give P(Bin(40, 0.1) <= 5) = 0.79 > 0.1: testing stops.
    assert stats.binom.cdf(5, 40, 0.1) > 0.1
    assert result.threshold == 0.61
    assert (result.n_covered_labelled, result.errors) == (30, 0)
    assert result.coverage == 0.75
    assert result.agreement == 1.0


def test_no_threshold_when_evidence_is_thin() -> None:
    result = selective_threshold([0.9] * 10, [True] * 10, alpha=0.1, delta=0.1)  # 0.9^10 = 0.35
    assert result.threshold is None and result.coverage == 0.0
    assert result.reason is not None and "no confidence threshold" in result.reason


def test_coverage_is_measured_on_all_items() -> None:
    result = selective_threshold([0.95] * 30, [True] * 30, alpha=0.1, delta=0.1, all_confidence=[0.99, 0.5])
    # Testing stops at the lowest labelled confidence: the unlabelled item at 0.5 is not covered.
    assert result.threshold == 0.95 and result.coverage == 0.5


def test_answer_confidence() -> None:
    assert answer_confidence({"1": 0.2, "2": 0.6, "3": 0.2}) == pytest.approx(0.6)
    assert answer_confidence(None) is None


def test_selective_guarantee_by_simulation() -> None:
    """A calibrated judge: confidence c ~ U(0.5, 1), agrees with probability c. The true risk above t is
    (1 - t) / 2, so the threshold fails its promise when (1 - t) / 2 > alpha; that may happen in at most
    delta of the samples."""
    rng = np.random.default_rng(2)
    alpha, delta = 0.1, 0.1
    failures, covered = 0, []
    for _ in range(1000):
        c = rng.uniform(0.5, 1.0, size=300)
        ok = rng.random(300) < c
        result = selective_threshold(c, ok, alpha=alpha, delta=delta)
        if result.threshold is not None:
            failures += (1 - result.threshold) / 2 > alpha
            covered.append(result.coverage)
    assert failures / 1000 <= delta + 0.02
    # Not vacuous, though with 300 labels the exact tests are weak: a threshold is found in about 57% of the
    # samples (a single early disagreement stops the sequence), covering 18% on average (the oracle's 0.8: 40%).
    assert len(covered) >= 500
    assert np.mean(covered) > 0.15


def test_probabilities_sum_to_the_budget_and_respect_bounds() -> None:
    u = np.array([0.0, 1.0, 1.0, 2.0, 50.0, 0.5])
    pi = label_probabilities(u, 3, min_probability=0.1)
    assert pi.sum() == pytest.approx(3)
    assert pi.min() >= 0.1 - 1e-12 and pi.max() <= 1.0
    assert pi[4] == 1.0  # capped; its excess went to the others
    assert pi[3] > pi[1] > pi[0]
    assert label_probabilities(np.zeros(4), 2) == pytest.approx([0.5] * 4)
    with pytest.raises(ValueError):
        label_probabilities(u, 10)


def test_ipw_by_hand() -> None:
    f = [1.0, 2.0, 3.0, 4.0]
    pi = [0.5, 0.5, 1.0, 0.25]
    drawn = [True, False, True, False]
    labels = {0: 2.0, 2: 3.0}
    est = active_mean(f, pi, drawn, labels, lam=1.0)
    # terms: f + (y - f) xi / pi = 1 + 1/0.5, 2, 3 + 0, 4 -> (3 + 2 + 3 + 4) / 4 = 3
    assert est.value == pytest.approx(3.0)
    assert est.std_error == pytest.approx(np.std([3, 2, 3, 4], ddof=1) / 2)
    with pytest.raises(ValueError, match="no label yet"):
        active_mean(f, pi, drawn, {0: 2.0})


def test_spread_of_an_answer_distribution() -> None:
    values = {"1": 1.0, "2": 2.0, "3": 3.0}
    assert distribution_spread({"2": 1.0}, values) == 0.0
    assert distribution_spread({"1": 0.5, "3": 0.5}, values) == pytest.approx(1.0)
    assert distribution_spread(None, values) is None


def test_active_estimate_is_unbiased_and_covers() -> None:
    """Labels drawn where a (biased) judge is unsure: the IPW estimate is centred on the truth."""
    rng = np.random.default_rng(9)
    n = 1000
    estimates, hits, widths_active, widths_uniform = [], [], [], []
    for rep in range(800):
        truth_sd = rng.uniform(0.1, 1.5, size=n)  # how unsure the judge is, item by item
        y = 3.0 + truth_sd * rng.standard_normal(n)
        f = np.full(n, 3.3)  # a judge that only knows the average, biased by 0.3
        target = float(y.mean())
        prop = propose([str(i) for i in range(n)], truth_sd, 60, seed=rep)
        drawn = np.array(prop.drawn)
        est = active_mean(f, prop.probabilities, drawn, {i: float(y[i]) for i in np.flatnonzero(drawn)})
        estimates.append(est.value - target)
        hits.append(est.covers(target))
        widths_active.append(est.width)
        uniform = draw_labels(np.full(n, 0.06), seed=rep)
        widths_uniform.append(active_mean(f, np.full(n, 0.06), uniform,
                                          {i: float(y[i]) for i in np.flatnonzero(uniform)}).width)
    errors = np.array(estimates)
    assert abs(errors.mean()) < 3 * errors.std() / np.sqrt(len(errors))  # no bias beyond Monte-Carlo error
    assert 0.93 <= np.mean(hits) <= 0.97
    assert np.mean(widths_active) < np.mean(widths_uniform)  # sampling by uncertainty pays


def test_proposal_order() -> None:
    prop = propose(["a", "b", "c", "d"], [0.1, 5.0, 0.1, 2.0], 2.5, seed=0, min_probability=0.1)
    assert prop.probabilities[1] == 1.0
    order = prop.to_label()
    assert order[0] == "b"
    assert set(order) == {i for i, d in zip(prop.item_ids, prop.drawn) if d}
