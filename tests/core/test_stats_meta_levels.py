"""The levels' statistics, their swap distributions and the tie-calibrated / system-level figures,
each against an independent computation (scipy, brute force, a hand computation)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dialjudge.core.stats.level_estimates import annotator_ceiling, estimate
from dialjudge.core.stats.meta_levels import (
    ContextLevel,
    GlobalLevel,
    Items,
    SystemLevel,
    best_tie_band,
    system_agreement,
    system_pair_p,
    tie_calibrated_pairwise_accuracy,
)
from dialjudge.core.stats.preference import label_with_band


def _items(rng: np.random.Generator, contexts: int = 5, per: int = 4, levels: int = 3) -> tuple[Items, np.ndarray]:
    human = rng.integers(1, levels + 1, size=contexts * per).astype(float)
    groups = np.repeat(np.arange(contexts), per)
    systems = [f"s{i % per}" for i in range(contexts * per)]
    x = rng.integers(1, 4, size=contexts * per).astype(float)
    return Items.build(human, [f"c{g}" for g in groups], systems), x


def test_per_context_tau_is_scipys_tau_b_and_all_tied_contexts_are_undefined():
    rng = np.random.default_rng(1)
    items, x = _items(rng, contexts=8)
    x[:4] = 2.0  # context 0: the evaluator ties all its responses
    tau = ContextLevel().per_context(x, items)
    for c in range(items.n_contexts):
        members = items.contexts == c
        expected = stats.kendalltau(x[members], items.human[members]).statistic
        if c == 0 or math.isnan(expected):
            assert math.isnan(tau[c])
        else:
            assert tau[c] == pytest.approx(expected)
    defined = tau[np.isfinite(tau)]
    assert ContextLevel().value(x, items) == pytest.approx(defined.mean())


def test_global_level_is_pearson():
    rng = np.random.default_rng(2)
    items, x = _items(rng)
    assert GlobalLevel().value(x, items) == pytest.approx(stats.pearsonr(x, items.human).statistic)


def test_system_level_is_pearson_of_system_means_including_a_system_with_one_item():
    human = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 2.0])
    x = np.array([0.1, 0.3, 0.2, 0.9, 0.5, 0.4])
    systems = ["a", "a", "b", "c", "c", "d"]  # b and d have one item each
    items = Items.build(human, ["c0", "c0", "c1", "c1", "c2", "c2"], systems)
    mean_x = [np.mean(x[[0, 1]]), x[2], np.mean(x[[3, 4]]), x[5]]
    mean_y = [np.mean(human[[0, 1]]), human[2], np.mean(human[[3, 4]]), human[5]]
    assert SystemLevel().value(x, items) == pytest.approx(stats.pearsonr(mean_x, mean_y).statistic)


@pytest.mark.parametrize("level", [GlobalLevel(), ContextLevel(), SystemLevel()], ids=lambda lv: lv.name)
def test_swap_deltas_match_the_statistic_recomputed_on_every_swapped_column(level):
    rng = np.random.default_rng(3)
    items, _ = _items(rng, contexts=4)
    items = items.with_human(rng.normal(size=items.n))  # no ties: every context's τ-b is defined
    xa = items.human + rng.normal(0, 1.0, size=items.n)
    xb = items.human + rng.normal(0, 1.0, size=items.n)
    assignments = ((np.arange(16)[:, None] >> np.arange(4)[None, :]) & 1).astype(bool)
    deltas = level.swap_deltas(xa, xb, items, assignments)
    if level.name != "context":
        # Pearson levels swap each side z-scored on its own (the observed r is the same either way).
        xa, xb = (xa - xa.mean()) / xa.std(), (xb - xb.mean()) / xb.std()
        xb = xb * 3.0 + 1.0  # a different scale on one side must not change the deltas: they are re-standardised
    for row, assignment in enumerate(assignments):
        swapped = assignment[items.contexts]
        a_mixed = np.where(swapped, (xb - xb.mean()) / xb.std(), xa)
        b_mixed = np.where(swapped, xa, (xb - xb.mean()) / xb.std())
        if level.name == "context":
            a_mixed, b_mixed = np.where(swapped, xb, xa), np.where(swapped, xa, xb)
        expected = level.value(b_mixed, items) - level.value(a_mixed, items)
        if level.name == "context":
            # The test flips contexts where both τ are defined; here every context is.
            tau_a, tau_b = level.per_context(xa, items), level.per_context(xb, items)
            assert np.isfinite(tau_a).all() and np.isfinite(tau_b).all()
        assert deltas[row] == pytest.approx(expected, abs=1e-9)


def _brute_best_band(margins, human):
    labels = ["A" if h > 0 else "B" if h < 0 else "tie" for h in human]
    best, best_right = None, -1
    for eps in sorted({0.0, *(abs(m) for m in margins)}):
        right = sum(label_with_band(m, eps) == h for m, h in zip(margins, labels))
        if right > best_right:
            best, best_right = eps, right
    return best, best_right


def test_best_tie_band_matches_the_preference_modules_rule_by_brute_force():
    rng = np.random.default_rng(4)
    for _ in range(20):
        margins = rng.choice([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0], size=15)
        human = rng.choice([-1.0, 0.0, 1.0], size=15)
        assert best_tie_band(margins, human) == _brute_best_band(list(margins), list(human))


def test_tie_calibrated_accuracy_holds_each_fold_out():
    rng = np.random.default_rng(5)
    items, x = _items(rng, contexts=6, per=3)
    result = tie_calibrated_pairwise_accuracy(x, items, seed=0)
    first, second, owner = items.context_pairs
    assert result.n_pairs == first.size == 6 * 3
    # Independently: the same halves, the band of one half applied to the other.
    import random

    contexts = sorted(set(owner.tolist()))
    random.Random(0).shuffle(contexts)
    half = set(contexts[:3])
    margins = x[first] - x[second]
    human = np.sign(items.human[first] - items.human[second])
    labels = ["A" if h > 0 else "B" if h < 0 else "tie" for h in human]
    correct = 0
    for tune_half in (True, False):
        tune = [i for i, c in enumerate(owner) if (c in half) == tune_half]
        test = [i for i, c in enumerate(owner) if (c in half) != tune_half]
        eps, _ = _brute_best_band([margins[i] for i in tune], [human[i] for i in tune])
        correct += sum(label_with_band(margins[i], eps) == labels[i] for i in test)
    assert result.correct == correct


def test_tie_calibrated_accuracy_on_all_tied_contexts_calls_every_tie_right():
    human = np.array([2.0] * 6)
    x = np.array([0.5] * 6)
    items = Items.build(human, ["a", "a", "a", "b", "b", "b"])
    result = tie_calibrated_pairwise_accuracy(x, items)
    assert (result.correct, result.n_pairs, result.epsilons) == (6, 6, (0.0, 0.0))


def _brute_pair_p(values, items, i, j):
    """One-sided paired permutation p by enumerating every sign flip of the context means."""
    diffs = []
    for c in range(items.n_contexts):
        in_i = (items.systems == i) & (items.contexts == c)
        in_j = (items.systems == j) & (items.contexts == c)
        if in_i.any() and in_j.any():
            diffs.append(values[in_i].mean() - values[in_j].mean())
    observed = sum(diffs)
    flips = [sum(s * d for s, d in zip(signs, diffs)) for signs in itertools.product((1, -1), repeat=len(diffs))]
    return sum(f >= observed - 1e-12 for f in flips) / len(flips)


def test_soft_pairwise_accuracy_against_enumerated_permutation_p_values():
    rng = np.random.default_rng(6)
    items, x = _items(rng, contexts=5, per=3)
    result = system_agreement(x, items, n_permutations=1000)
    soft, agree = [], []
    mean = {s: (x[items.systems == s].mean(), items.human[items.systems == s].mean()) for s in range(3)}
    for i, j in itertools.combinations(range(3), 2):
        soft.append(1 - abs(_brute_pair_p(x, items, i, j) - _brute_pair_p(items.human, items, i, j)))
        agree.append(np.sign(mean[i][0] - mean[j][0]) == np.sign(mean[i][1] - mean[j][1]))
    assert result.soft_pairwise_accuracy == pytest.approx(np.mean(soft))
    assert result.pairwise_accuracy == pytest.approx(np.mean(agree))
    assert result.n_systems == 3


def test_systems_with_one_item_in_one_shared_context():
    items = Items.build(np.array([1.0, 2.0]), ["c", "c"], ["a", "b"])
    x = np.array([0.2, 0.7])
    # a − b = −0.5: both flips {−0.5, 0.5} reach it (p = 1); b − a = 0.5: one of the two does (p = 0.5).
    assert system_pair_p(x, items, 0, 1)[0] == pytest.approx(1.0)
    assert system_pair_p(x, items, 1, 0)[0] == pytest.approx(0.5)
    result = system_agreement(x, items)
    assert result.soft_pairwise_accuracy == pytest.approx(1.0)
    assert result.pairwise_accuracy == 1.0
    assert math.isnan(result.pearson)  # two systems: no correlation


def test_estimate_counts_items_and_contexts_and_gives_no_ci_below_the_floor():
    rng = np.random.default_rng(7)
    items, x = _items(rng, contexts=4)
    x[0] = np.nan
    result = estimate(GlobalLevel(), x, items, n_boot=200)
    assert (result.n_items, result.n_contexts) == (15, 4)
    assert result.ci is None and "contexts" in (result.reason or "")
    assert result.value == pytest.approx(stats.pearsonr(x[1:], items.human[1:]).statistic)


def test_estimate_ci_brackets_the_value_with_enough_contexts():
    rng = np.random.default_rng(8)
    items, _ = _items(rng, contexts=30)
    x = items.human + rng.normal(0, 1, items.n)
    result = estimate(ContextLevel(), x, items, n_boot=300)
    assert result.ci is not None and result.ci[0] < result.value < result.ci[1]


def test_annotator_ceiling_is_the_mean_leave_one_out_statistic():
    rng = np.random.default_rng(9)
    contexts = np.repeat(np.arange(10), 4)
    ratings = rng.integers(1, 6, size=(3, 40)).astype(float)
    ratings[2, 5] = np.nan
    items = Items.build(np.nanmean(ratings, axis=0), [str(c) for c in contexts])
    expected = []
    for a in range(3):
        others = np.delete(ratings, a, axis=0)
        keep = np.isfinite(ratings[a])
        expected.append(stats.pearsonr(ratings[a][keep], np.nanmean(others, axis=0)[keep]).statistic)
    result = annotator_ceiling(GlobalLevel(), ratings, items, n_boot=0)
    assert result.value == pytest.approx(np.mean(expected))
