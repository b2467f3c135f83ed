"""Paired comparison of two evaluators (dialjudge.core.stats.paired), checked independently."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dialjudge.core.stats import bootstrap as bs
from dialjudge.core.stats.paired import bootstrap_p_value, paired_comparison, verdict_line, williams_test


def contexts_data(n_contexts: int = 40, per: int = 5, seed: int = 3, noise_a: float = 1.5, noise_b: float = 0.5):
    rng = np.random.default_rng(seed)
    ids, groups, human, a, b = [], {}, {}, {}, {}
    for c in range(n_contexts):
        shift = rng.normal(0, 0.5)
        for k in range(per):
            item = f"c{c}-{k}"
            ids.append(item)
            groups[item] = f"c{c}"
            h = float(rng.integers(1, 6))
            human[item] = h
            a[item] = h + shift + rng.normal(0, noise_a)
            b[item] = h + shift + rng.normal(0, noise_b)
    return ids, groups, human, a, b


def test_williams_matches_the_formula_worked_by_hand() -> None:
    # r13 = .5, r23 = .3, r12 = .4, n = 50:
    # K = 1 - .16 - .25 - .09 + 2(.4)(.5)(.3) = 0.62
    # denominator = 2(0.62)(49/47) + (0.4)^2 (0.6)^3 = 1.2927660 + 0.03456 = 1.3273260
    # t = 0.2 sqrt(49 * 1.4) / sqrt(1.3273260) = 1.6565023 / 1.1520964 = 1.437815
    result = williams_test(0.5, 0.3, 0.4, 50)
    assert result.t == pytest.approx(1.437815, abs=1e-5)
    assert result.df == 47
    assert result.p_value == pytest.approx(2 * stats.t.sf(1.437815, 47), abs=1e-5)
    assert williams_test(0.3, 0.5, 0.4, 50).t == pytest.approx(-result.t)


def test_paired_bootstrap_equals_a_plain_loop_over_the_same_resamples() -> None:
    ids, groups, human, a, b = contexts_data(n_contexts=15, per=4)
    result = paired_comparison(a, b, human, groups, n_boot=200, seed=7, quality="Overall")
    kept = sorted(ids)  # the comparison keeps items in the human mapping's order
    kept = list(human)
    rs = bs.resample(len(kept), [groups[i] for i in kept], n_boot=200, seed=7)
    xa, xb, y = (np.array([m[i] for i in kept]) for m in (a, b, human))
    by_method = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}
    for method, fn in by_method.items():
        deltas = []
        for w in rs.item_weights.astype(int):
            ya = np.repeat(y, w)
            deltas.append(fn(np.repeat(xb, w), ya).statistic - fn(np.repeat(xa, w), ya).statistic)
        deltas = np.array(deltas)
        d = result.delta(method)
        assert d.delta == pytest.approx(fn(xb, y).statistic - fn(xa, y).statistic, abs=1e-12)
        # The expanded percentile interval: tails at the normal tail of sqrt(k/(k-1)) t_{k-1}, k = 15 contexts.
        tail = 100 * stats.norm.sf(math.sqrt(15 / 14) * stats.t.ppf(0.975, 14))
        assert d.ci_low == pytest.approx(np.percentile(deltas, tail), abs=1e-9)
        assert d.ci_high == pytest.approx(np.percentile(deltas, 100 - tail), abs=1e-9)


def test_a_clearly_better_evaluator_gets_a_ci_that_excludes_zero() -> None:
    ids, groups, human, a, b = contexts_data()
    result = paired_comparison(a, b, human, groups, name_a="run 1", name_b="run 2", quality="Overall", n_boot=1000)
    d = result.delta("spearman")
    assert d.excludes_zero and d.ci_low > 0 and d.p_value < 0.01
    line = verdict_line(result)
    assert line.startswith("run 2 agrees better with humans on overall: Δρ +")
    assert "n = 200 items in 40 contexts" in line
    assert result.williams is None  # 5 candidates per context: Williams's test assumes independent items
    _, groups1, human1, a1, b1 = contexts_data(n_contexts=120, per=1)
    single = paired_comparison(a1, b1, human1, groups1, n_boot=200)
    assert single.williams is not None and single.williams.t > 0 and single.williams.p_value < 0.05


def test_two_equally_noisy_evaluators_get_a_ci_that_includes_zero() -> None:
    ids, groups, human, a, b = contexts_data(noise_a=1.0, noise_b=1.0, seed=11)
    result = paired_comparison(a, b, human, groups, quality="Overall", n_boot=1000)
    for method in ("pearson", "spearman", "kendall"):
        d = result.delta(method)
        assert d.ci_low < 0 < d.ci_high and not d.excludes_zero
        assert d.p_value > 0.05
    assert verdict_line(result).startswith("no clear difference between A and B on overall (p ≥ 0.05): Δρ ")
    assert "(randomization test over 40 contexts, 1,000 random swaps of A and B)" in verdict_line(result)


def test_items_scored_by_one_side_only_are_excluded_and_counted() -> None:
    ids, groups, human, a, b = contexts_data(n_contexts=10, per=3)
    a = dict(a)
    b = dict(b)
    del a[ids[0]]                 # only B scored it
    b[ids[1]] = None              # only A scored it (B failed)
    del a[ids[2]], b[ids[2]]      # neither
    human = dict(human)
    human[ids[3]] = None          # no human label
    result = paired_comparison(a, b, human, groups, n_boot=50)
    assert (result.only_a, result.only_b, result.neither, result.no_human_label) == (1, 1, 1, 1)
    assert result.n_items == 26 and result.n_excluded == 3  # an item neither side scored is not "left out"
    kept = [i for i in human if i not in ids[:4]]
    assert result.delta("pearson").a == pytest.approx(stats.pearsonr([a[i] for i in kept],
                                                                      [human[i] for i in kept]).statistic)
    assert "3 scored by one side only or unlabelled, left out" in verdict_line(result)


def test_a_constant_side_gives_a_reason_not_an_exception() -> None:
    ids, groups, human, a, b = contexts_data(n_contexts=5, per=3)
    result = paired_comparison({i: 1.0 for i in ids}, b, human, groups, n_boot=10, name_a="flat")
    assert not result.defined and "flat" in (result.reason or "")
    assert "no comparison" in verdict_line(result)


def test_bootstrap_p_value_is_two_sided_and_never_zero() -> None:
    assert bootstrap_p_value(np.array([0.1] * 99)) == pytest.approx(2 / 100)
    assert bootstrap_p_value(np.array([-1.0, 1.0] * 50)) == 1.0
    assert math.isnan(bootstrap_p_value(np.array([np.nan])))


def test_six_single_item_contexts_give_a_verdict_but_no_ci_of_a_rank_difference() -> None:
    """On 6 items the CI of Δρ covered 0.890 in simulation (docs/calibration.md): it is not shown, and
    the verdict line says why; Δr's CI (0.959) is."""
    human = {f"i{j}": float(v) for j, v in enumerate([1, 2, 3, 4, 5, 3])}
    a = {f"i{j}": float(v) for j, v in enumerate([2, 1, 4, 3, 5, 2])}
    b = {f"i{j}": float(v) for j, v in enumerate([1, 2, 3, 5, 4, 3])}
    groups = {item: item for item in human}
    comparison = paired_comparison(a, b, human, groups, n_boot=500, seed=1)
    assert comparison.too_few_contexts is None
    rho = comparison.delta("spearman")
    assert np.isnan(rho.ci_low) and rho.ci_reason and "at least 7 are needed" in rho.ci_reason
    assert "no CI (too few items for a CI of a rank correlation's difference: 6, at least 7 are needed)" in \
        verdict_line(comparison)
    assert "p = " in verdict_line(comparison)
    r = comparison.delta("pearson")
    assert r.ci_reason is None and r.ci_low < r.delta < r.ci_high
