"""The jury and the cascade at the score level, against truths known in closed form.

* A majority of three independent judges right 70% of the time is right 78.4% of the time
  (p^3 + 3 p^2 (1 - p)); a mean of three independent graded judges has a third of their error variance.
* A member that fails abstains: the others still decide every item.
* Learned weights are cross-fitted: an item's jury score does not move when the labels of its own fold
  change, and does move when another fold's do (so the test fails if a fold were fitted on itself).
* A cascade of a weak and a strong simulated judge keeps its target agreement in at least 95% of 500
  simulated datasets (delta 0.05), within the Monte-Carlo error, and reports coverage per judge.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dialjudge.core.simulation import Rate
from dialjudge.core.simulation.panels import CascadeJudge, cascade_truth, majority_accuracy, simulate_panel
from dialjudge.core.stats.cascade import ABSTAIN, CHEAP, STRONG, cascade_thresholds, covered_agreement
from dialjudge.core.stats.jury import context_folds, learned, majority, mean, points_of

BINARY = (0.0, 1.0)
FIVE = (0.0, 0.25, 0.5, 0.75, 1.0)


def test_a_majority_of_three_independent_judges_beats_each_of_them_as_the_binomial_says() -> None:
    batch = simulate_panel([0.7, 0.7, 0.7], n_items=40_000, n_datasets=1, seed=3)
    labels, scores = batch.labels[0], batch.scores[0]
    jury = majority(scores, BINARY)
    jury_acc = float(np.mean(jury.values == labels))
    members = [float(np.mean(scores[j] == labels)) for j in range(3)]
    expected = majority_accuracy(0.7)  # 0.784
    se = math.sqrt(expected * (1 - expected) / labels.size)
    assert abs(jury_acc - expected) < 4 * se
    assert all(jury_acc > m + 0.05 for m in members)
    # Confidence: unanimous items are more often right than 2-1 ones.
    unanimous = jury.confidence == 1.0
    assert np.mean(jury.values[unanimous] == labels[unanimous]) > np.mean(jury.values[~unanimous] == labels[~unanimous])


def test_a_mean_of_three_graded_judges_has_a_third_of_their_error_variance() -> None:
    rng = np.random.default_rng(5)
    n, sigma, tau = 60_000, 1.0, 0.5
    quality = rng.standard_normal(n)
    human = quality + tau * rng.standard_normal(n)
    members = np.stack([quality + sigma * rng.standard_normal(n) for _ in range(3)])
    jury = mean(members, FIVE).values
    r_member = 1 / math.sqrt((1 + sigma ** 2) * (1 + tau ** 2))
    r_jury = 1 / math.sqrt((1 + sigma ** 2 / 3) * (1 + tau ** 2))
    assert abs(np.corrcoef(jury, human)[0, 1] - r_jury) < 0.01
    assert abs(np.corrcoef(members[0], human)[0, 1] - r_member) < 0.01
    assert r_jury > r_member + 0.1


def test_a_failing_member_abstains_and_the_others_still_vote() -> None:
    batch = simulate_panel([0.8, 0.8, 0.8], n_items=5_000, n_datasets=1, seed=7, failure=[0.0, 0.3, 1.0])
    labels, scores = batch.labels[0], batch.scores[0]
    jury = majority(scores, BINARY)
    assert np.isfinite(jury.values).all()  # every item still has a verdict
    assert set(jury.voters.tolist()) == {1, 2}
    # The dead member lowers the confidence (it counts as disagreeing), never below one vote of three.
    assert np.nanmax(jury.confidence) <= 2 / 3 and np.nanmin(jury.confidence) >= 1 / 3
    assert np.mean(jury.values == labels) >= 0.78


def test_a_tie_goes_to_the_middle_point_and_else_to_the_first_member_listed() -> None:
    votes = np.array([[1.0, 0.0, np.nan], [0.0, 1.0, 1.0], [np.nan, np.nan, 0.0]])
    jury = majority(votes, BINARY)
    assert jury.values.tolist() == [1.0, 0.0, 1.0]
    assert jury.ties.tolist() == [True, True, True]
    swapped = majority(votes[[1, 0, 2]], BINARY)
    assert swapped.values.tolist() == [0.0, 1.0, 1.0]
    assert points_of([0.124, 0.125, 0.126, np.nan], FIVE)[:3].tolist() == [0.0, 0.25, 0.25]
    # On five points: 2, 3 and 5 tie at one vote each; the middle one (3) wins, whoever is listed first.
    spread = np.array([[1.0, 0.25], [0.5, 0.75], [0.25, np.nan]])
    assert majority(spread, FIVE).values.tolist() == [0.5, 0.25]  # 2 and 4 equally near 3: the first listed


def _learned_setup(seed: int = 11) -> tuple[np.ndarray, np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    groups = [f"c{k}" for k in range(40) for _ in range(3)]
    truth = rng.random(len(groups))
    scores = np.stack([np.clip(truth + s * rng.standard_normal(truth.size), 0, 1) for s in (0.05, 0.4, 0.4)])
    return scores, truth, groups


def test_learned_weights_favour_the_better_member() -> None:
    scores, truth, groups = _learned_setup()
    jury = learned(scores, truth, groups, FIVE)
    intercept, *weights = jury.weights
    assert weights[0] > 3 * max(weights[1:])
    assert np.corrcoef(jury.values, truth)[0, 1] > np.corrcoef(scores[1], truth)[0, 1]


def test_an_items_learned_score_never_uses_the_labels_of_its_own_fold() -> None:
    scores, truth, groups = _learned_setup()
    folds = context_folds(groups)
    item = 0
    before = learned(scores, truth, groups, FIVE).values
    own_fold = folds == folds[item]
    moved = truth.copy()
    moved[own_fold] = 1.0 - moved[own_fold]  # the item's own label and its fold's
    after_own = learned(scores, moved, groups, FIVE).values
    assert after_own[item] == pytest.approx(before[item], abs=1e-12)
    # Another fold's labels do reach it: the test above could fail.
    other = moved.copy()
    other[own_fold] = truth[own_fold]
    other[~own_fold] = 1.0 - truth[~own_fold]
    assert abs(learned(scores, other, groups, FIVE).values[item] - before[item]) > 1e-3
    # A context without labels is weighted by every label (it has none of its own).
    unlabelled = truth.copy()
    unlabelled[:3] = np.nan
    assert np.isfinite(learned(scores, unlabelled, groups, FIVE).values[:3]).all()


WEAK = CascadeJudge(low=0.5, bias=0.0, slope=1.0)      # calibrated: right with probability its confidence
STRONG_JUDGE = CascadeJudge(low=0.6, bias=0.15, slope=1.0)


def test_a_cascade_keeps_its_target_agreement_in_95_percent_of_500_datasets() -> None:
    rng = np.random.default_rng(2024)
    target, delta, n_labelled, datasets = 0.8, 0.05, 300, 500
    met, coverage_cheap, coverage_strong = 0, [], []
    for _ in range(datasets):
        c1, a1 = WEAK.draw(rng, (n_labelled,))
        c2, a2 = STRONG_JUDGE.draw(rng, (n_labelled,))
        thresholds = cascade_thresholds(c1, a1, c2, a2, target=target, delta=delta)
        agreement, share1, share2 = cascade_truth(WEAK, STRONG_JUDGE, thresholds.cheap.threshold,
                                                  thresholds.strong.threshold)
        # No item decided: nothing claimed, the guarantee holds vacuously.
        met += bool(math.isnan(agreement) or agreement >= target)
        coverage_cheap.append(share1)
        coverage_strong.append(share2)
    rate = Rate(met, datasets)
    assert not rate.falls_below(1 - delta, z=2.0), str(rate)
    # It decides most items, most of them by the cheap judge's own confidence alone.
    assert 0.2 < float(np.mean(coverage_cheap)) < 0.8 and float(np.mean(coverage_strong)) > 0.1


def test_the_cascade_routes_and_counts_what_it_decided() -> None:
    rng = np.random.default_rng(1)
    c1, a1 = WEAK.draw(rng, (2000,))
    c2, a2 = STRONG_JUDGE.draw(rng, (2000,))
    thresholds = cascade_thresholds(c1, a1, c2, a2, target=0.8, delta=0.1)
    assert thresholds.cheap.threshold is not None and thresholds.strong.threshold is not None
    route = thresholds.route(c1, c2)
    assert set(route.tolist()) <= {CHEAP, STRONG, ABSTAIN}
    assert ((route == CHEAP) == (c1 >= thresholds.cheap.threshold)).all()
    agreement = covered_agreement(route, a1, a2)
    decided = route != ABSTAIN
    assert agreement.n == int(decided.sum())
    assert agreement.hits == int(np.where(route == CHEAP, a1, a2)[decided].sum())
    low, high = agreement.ci  # type: ignore[misc]
    assert low < agreement.value < high and low >= 0.8 - 0.05
    # A failed judgment (NaN confidence) is escalated by the cheap judge, and abstains at the strong one.
    assert thresholds.route([np.nan], [np.nan]).tolist() == [ABSTAIN]
