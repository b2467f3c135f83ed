"""The bootstrap of r, rho and tau-b on many items (core/stats/bootstrap_large.py) against the plain
computations of the same resamples: the item-weight matrices of core/stats/bootstrap.py and scipy's
kendalltau of each expanded resample. Small data, so that the plain computation is cheap; the fast path
is called directly, and through item_correlation with the size limits lowered."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dialjudge.core.model import Aggregation, Example, Rating, Scale, ScaleKind, Turn
from dialjudge.core.stats import bootstrap as bs
from dialjudge.core.stats import bootstrap_large as large
from dialjudge.core.stats.correlation import item_correlation
from dialjudge.core.stats.human import AnnotatorMatrix, annotator_matrix, human_labels


def data(case: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores and labels: continuous scores, or tied ones; labels with few levels (means of three
    annotators), or as many as the items."""
    rng = np.random.default_rng(seed)
    score = rng.normal(size=n)
    label = np.round(np.clip(score + rng.normal(size=n), -2, 2) * 3) / 3
    if case == "tied scores":
        score = np.round(score * 2) / 2
    elif case == "continuous labels":
        label = score + rng.normal(size=n)
    elif case == "labels first":  # the sparser side given as x
        score, label = label, score
    return score, label


CASES = ("continuous scores", "tied scores", "continuous labels", "labels first")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("grouped", [False, True])
def test_every_resample_equals_the_plain_computation(case: str, grouped: bool) -> None:
    x, y = data(case, 150, seed=len(case))
    groups = [i // 3 for i in range(150)] if grouped else None
    rs = bs.resample(150, groups, n_boot=400, seed=7)
    fast = large.item_coefficients(x, y, rs)
    weights = rs.item_weights
    # Ranks are half-integers and counts integers: Spearman's and Kendall's sums are exact in any order.
    np.testing.assert_array_equal(fast["spearman"], bs.weighted_spearman(x, y, weights))
    np.testing.assert_allclose(fast["pearson"], bs.weighted_pearson(x, y, weights), rtol=0, atol=1e-13)
    plain_kendall = [stats.kendalltau(np.repeat(x, w), np.repeat(y, w)).statistic for w in weights.astype(int)]
    np.testing.assert_allclose(fast["kendall"], plain_kendall, rtol=0, atol=1e-13)
    assert np.isfinite(fast["kendall"]).all()


def test_kendall_of_the_first_resamples_only() -> None:
    x, y = data("tied scores", 120, seed=3)
    rs = bs.resample(120, None, n_boot=300, seed=1)
    fast = large.item_coefficients(x, y, rs, kendall_resamples=50)
    assert fast["spearman"].shape == (300,) and fast["kendall"].shape == (50,)
    np.testing.assert_allclose(fast["kendall"], bs._kendall_loop(x, y, rs.item_weights[:50]), rtol=0, atol=1e-13)


def test_a_constant_resample_has_no_coefficient() -> None:
    """Two contexts, one of them all high: a resample drawing one context twice has constant labels."""
    x = np.array([0.1, 0.5, 0.9, 0.2, 0.4, 0.8])
    y = np.array([1.0, 1.0, 1.0, 2.0, 3.0, 4.0])
    rs = bs.resample(6, [0, 0, 0, 1, 1, 1], n_boot=60, seed=0)
    fast = large.item_coefficients(x, y, rs)
    constant = rs.unit_weights[:, 0] == 2
    assert constant.any() and (~constant).any()
    for method, plain in (("pearson", bs.weighted_pearson(x, y, rs.item_weights)),
                          ("spearman", bs.weighted_spearman(x, y, rs.item_weights)),
                          ("kendall", bs.bootstrap_kendall(x, y, rs))):
        assert np.isnan(fast[method][constant]).all()
        np.testing.assert_allclose(fast[method], plain, rtol=0, atol=1e-13, equal_nan=True)


def test_many_levels_keep_the_scipy_loop(monkeypatch) -> None:
    monkeypatch.setattr(large, "KENDALL_MAX_LEVELS", 4)
    x, y = data("continuous labels", 80, seed=5)
    rs = bs.resample(80, None, n_boot=100, seed=2)
    fast = large.item_coefficients(x, y, rs, kendall_resamples=30)
    np.testing.assert_array_equal(fast["kendall"], bs._kendall_loop(y, x, rs.item_weights[:30]))


def test_blocks_of_resamples_give_the_same_values(monkeypatch) -> None:
    x, y = data("tied scores", 200, seed=9)
    rs = bs.resample(200, [i // 4 for i in range(200)], n_boot=250, seed=4)
    whole = large.item_coefficients(x, y, rs)
    monkeypatch.setattr(large, "CACHE_CELLS", 200 * 7)  # 7 resamples a block, the last one shorter
    blocked = large.item_coefficients(x, y, rs)
    for method in whole:
        np.testing.assert_array_equal(whole[method], blocked[method])


@pytest.mark.parametrize("case", CASES)
def test_item_correlation_beyond_the_matrix_limits_keeps_its_intervals(monkeypatch, case: str) -> None:
    """What an export at 100,000 items computes, checked at 300: with the limits lowered, the fast path
    gives the intervals of the plain computation (Kendall's from the first 200 resamples, as before)."""
    x, y = data(case, 300, seed=11)
    groups = [i // 5 for i in range(300)]

    def result(fast: bool):
        monkeypatch.setattr(bs, "KENDALL_MATRIX_MAX_UNITS", 10 if fast else 10**6)
        monkeypatch.setattr(bs, "KENDALL_MATRIX_MAX_ITEMS", 10 if fast else 10**6)
        return item_correlation(x, y, groups, n_excluded=0, n_boot=1000, seed=3, confidence=0.95)

    fast, plain = result(True), result(False)
    rs = bs.resample(300, groups, n_boot=1000, seed=3)
    loop = bs._kendall_loop(x, y, rs.item_weights[:bs.KENDALL_LOOP_MAX_RESAMPLES])
    low, high, used = bs.small_sample_interval(loop, 0.95, 60)
    assert fast.kendall.n_resamples == used == bs.KENDALL_LOOP_MAX_RESAMPLES
    assert (fast.kendall.ci_low, fast.kendall.ci_high) == (pytest.approx(low, abs=1e-12),
                                                           pytest.approx(high, abs=1e-12))
    assert fast.spearman == plain.spearman
    assert (fast.pearson.ci_low, fast.pearson.ci_high) == (pytest.approx(plain.pearson.ci_low, abs=1e-12),
                                                           pytest.approx(plain.pearson.ci_high, abs=1e-12))
    assert fast.pearson.value == plain.pearson.value and fast.kendall.value == plain.kendall.value
    assert fast.kendall.p_value == plain.kendall.p_value


# -- the human side at 10^5 items ----------------------------------------------------------------


SCALE = Scale(ScaleKind.ORDINAL, 1.0, 5.0)


def example(i: int, scores: tuple, annotators: tuple = ()) -> Example:
    return Example(id=f"e{i}", group_id=f"g{i}", context=(Turn("User", "hi"),), candidate="hello",
                   ratings={"q": Rating(scores, SCALE, annotators)})


def general_matrix(examples: list[Example]) -> AnnotatorMatrix:
    """annotator_matrix's general loop, as it was before the one-step case."""
    rated = [(ex.id, ex.ratings["q"]) for ex in examples]
    by_name = all(r.annotators for _, r in rated)
    names: dict[str, int] = {}
    cells = []
    for _, rating in rated:
        keys = rating.annotators if by_name else tuple(f"annotator {k + 1}" for k in range(len(rating.scores)))
        cells.append({names.setdefault(key, len(names)): value for key, value in zip(keys, rating.scores)})
    values = tuple(tuple(cell.get(a) for cell in cells) for a in range(len(names)))
    return AnnotatorMatrix("q", tuple(names), tuple(i for i, _ in rated), values, SCALE, by_name)


MATRICES = {
    "same named annotators": [example(i, (1 + i % 5, 2, None), ("ann", "bob", "cy")) for i in range(9)],
    "unnamed, as many": [example(i, (1 + i % 5, 3.5, 4)) for i in range(9)],
    "annotators vary": [example(i, (1 + i % 5, 2), ("ann", "bob") if i % 2 else ("bob", "dee")) for i in range(9)],
    "unnamed, counts vary": [example(i, (1 + i % 5,) * (1 + i % 3)) for i in range(9)],
    "a name twice": [example(i, (1, 2, 3), ("ann", "bob", "ann")) for i in range(4)],
}


@pytest.mark.parametrize("case", list(MATRICES))
def test_annotator_matrix_and_its_numbers_equal_the_general_loop(case: str) -> None:
    examples = MATRICES[case]
    expected = general_matrix(examples)
    matrix = annotator_matrix(examples, "q")
    assert matrix == expected
    plain = np.full((len(expected.annotators), expected.n_items), np.nan)
    for a, row in enumerate(expected.values):
        for i, v in enumerate(row):
            if v is not None:
                plain[a, i] = float(v)
    np.testing.assert_array_equal(matrix.numeric(), plain)


@pytest.mark.parametrize("how", list(Aggregation))
def test_pooled_labels_equal_each_rating_pooled_on_its_own(how: Aggregation) -> None:
    examples = [example(i, scores) for i, scores in
                enumerate([(5, 5, 4), (5, 5, 4), (5.0, 5.0, 4.0), (2, None, 3), (2, None, 3), (None, None, None),
                           (1, 2, 2), (1.0, 2.0, 2.0), (1, 1, 2, 2)])]
    labels = human_labels(examples, "q", how)
    for ex in examples:
        pooled = ex.ratings["q"].aggregate(how)
        assert labels.values[ex.id] == pooled.value and type(labels.values[ex.id]) is type(pooled.value)
        assert (ex.id in labels.tied) == pooled.is_tie
