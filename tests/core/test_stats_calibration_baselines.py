"""Calibration, weighted kappa, inter-judge matrix, confusion matrix, length baseline and
certainty split, each against a hand computation or scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dialjudge.core.model import Example, Rating, Scale, ScaleKind
from dialjudge.core.stats.baselines import (
    annotator_spread,
    certainty_split,
    length_bias,
    length_scores,
    partial_correlation,
    token_count,
)
from dialjudge.core.stats.calibration import brier_multiclass, reliability
from dialjudge.core.stats.categorical import cohen_kappa
from dialjudge.core.stats.interjudge import confusion_matrix, inter_judge_matrix


def test_reliability_bins_ece_and_brier_by_hand() -> None:
    p = [0.1, 0.15, 0.8, 0.9, 0.85, 0.5, None]
    o = [0, 1, 1, 1, 0, 1, 1]
    cal = reliability(p, o, n_bins=2)
    # bin [0, .5): 0.1, 0.15 -> mean .125, rate .5 ; bin [.5, 1]: .8 .9 .85 .5 -> mean .7625, rate .75
    low, high = cal.bins
    assert (low.n, high.n) == (2, 4)
    assert low.mean_predicted == pytest.approx(0.125) and low.observed_rate == pytest.approx(0.5)
    assert high.mean_predicted == pytest.approx(0.7625) and high.observed_rate == pytest.approx(0.75)
    assert cal.ece == pytest.approx(2 / 6 * 0.375 + 4 / 6 * 0.0125)
    # Brier: (.1)^2 + (.85)^2 + (.2)^2 + (.1)^2 + (.85)^2 + (.5)^2 over 6
    assert cal.brier == pytest.approx((0.01 + 0.7225 + 0.04 + 0.01 + 0.7225 + 0.25) / 6)
    assert cal.n == 6 and cal.n_excluded == 1 and cal.base_rate == pytest.approx(4 / 6)


def test_a_perfectly_calibrated_constant_has_zero_ece() -> None:
    cal = reliability([0.25] * 8, [1, 0, 0, 0] * 2, n_bins=10)
    assert cal.ece == pytest.approx(0.0) and cal.brier == pytest.approx(0.25 * 0.75)
    with pytest.raises(ValueError, match="0 or 1"):
        reliability([0.5], [2])


def test_multiclass_brier_by_hand() -> None:
    # (0.7-1)^2 + 0.2^2 + 0.1^2 = 0.14 ; 0.5^2 + (0.5-1)^2 + 0 = 0.5
    assert brier_multiclass([[0.7, 0.2, 0.1], [0.5, 0.5, 0.0]], [0, 1]) == pytest.approx((0.14 + 0.5) / 2)


def kappa_table() -> tuple[list[int], list[int]]:
    # judge x human counts [[2,1,0],[0,2,1],[1,0,3]] over labels 1, 2, 3
    counts = {(1, 1): 2, (1, 2): 1, (2, 2): 2, (2, 3): 1, (3, 1): 1, (3, 3): 3}
    a, b = [], []
    for (x, y), c in counts.items():
        a += [x] * c
        b += [y] * c
    return a, b


def test_weighted_kappa_against_the_hand_computed_table() -> None:
    a, b = kappa_table()
    # marginals .3/.3/.4 both ways; observed agreement .7, chance .34
    assert cohen_kappa(a, b) == pytest.approx((0.7 - 0.34) / (1 - 0.34))
    # linear: observed disagreement .1 + .1 + .2 = .4 ; expected 2(.09 + .12 + .24) = .90
    assert cohen_kappa(a, b, weights="linear") == pytest.approx(1 - 0.4 / 0.9)
    # quadratic: observed .1 + .1 + .4 = .6 ; expected 2(.09 + .12 + .48) = 1.38
    assert cohen_kappa(a, b, weights="quadratic") == pytest.approx(1 - 0.6 / 1.38)


def test_confusion_matrix_counts() -> None:
    a, b = kappa_table()
    cm = confusion_matrix(a + [None], b + [2])
    assert cm.labels == (1, 2, 3)
    assert cm.counts == ((2, 1, 0), (0, 2, 1), (1, 0, 3)) and cm.n == 10
    assert {"judge_label": 3, "human_label": 1, "count": 1} in cm.to_records()


def test_inter_judge_matrix_graded_and_categorical() -> None:
    rng = np.random.default_rng(0)
    base = rng.normal(size=30)
    cols = {"j1": {f"i{k}": float(v) for k, v in enumerate(base)},
            "j2": {f"i{k}": float(v + rng.normal(0, 0.5)) for k, v in enumerate(base)},
            "j3": {f"i{k}": float(rng.normal()) for k in range(25)}}
    m = inter_judge_matrix(cols)
    assert m.value("j1", "j2") == pytest.approx(stats.spearmanr(list(cols["j1"].values()),
                                                                list(cols["j2"].values())).statistic)
    assert m.value("j2", "j1") == m.value("j1", "j2") and m.value("j1", "j1") == 1.0
    assert m.n[0][2] == 25
    a, b = kappa_table()
    labels = {"x": dict(enumerate(a)), "y": dict(enumerate(b))}
    km = inter_judge_matrix(labels, kind="categorical", kappa_weights="quadratic")
    assert km.value("x", "y") == pytest.approx(1 - 0.6 / 1.38) and km.measure == "kappa (quadratic)"


def test_partial_correlation_equals_the_correlation_of_regression_residuals() -> None:
    rng = np.random.default_rng(5)
    z = rng.normal(size=200)
    x = z + rng.normal(size=200)
    y = 0.5 * z + 0.3 * x + rng.normal(size=200)

    def residual(v: np.ndarray) -> np.ndarray:
        design = np.column_stack([np.ones_like(z), z])
        return v - design @ np.linalg.lstsq(design, v, rcond=None)[0]

    expected = stats.pearsonr(residual(x), residual(y)).statistic
    r = lambda u, v: stats.pearsonr(u, v).statistic  # noqa: E731
    assert partial_correlation(r(x, y), r(x, z), r(y, z)) == pytest.approx(expected, abs=1e-12)


def example(i: int, group: int, text: str, ratings: list[float]) -> Example:
    scale = Scale(ScaleKind.ORDINAL, 1, 5)
    return Example(id=f"e{i}", group_id=f"g{group}", context=(), candidate=text,
                   ratings={"Overall": Rating(tuple(ratings), scale)})


def test_length_row_bias_and_certainty_split() -> None:
    assert token_count("Hello, world! It's me.") == 9  # Hello , world ! It ' s me .
    rng = np.random.default_rng(2)
    examples = []
    for i in range(60):
        words = int(rng.integers(1, 30))
        r = [float(rng.integers(1, 6)) for _ in range(3)]
        examples.append(example(i, i // 3, " ".join(["w"] * words), r))
    lengths = length_scores(examples)
    assert lengths["e0"] == float(len(examples[0].candidate.split()))
    human = {ex.id: float(np.mean(ex.ratings["Overall"].scores)) for ex in examples}
    judge = {i: lengths[i] * 0.1 + rng.normal() for i in lengths}
    bias = length_bias(judge, human, lengths, evaluator="j", quality="Overall")
    ids = list(human)
    j, h, n = ([m[i] for i in ids] for m in (judge, human, lengths))
    assert bias.judge_length_rho == pytest.approx(stats.spearmanr(j, n).statistic)
    assert bias.human_length_rho == pytest.approx(stats.spearmanr(h, n).statistic)
    assert bias.judge_human_r == pytest.approx(stats.pearsonr(j, h).statistic)
    assert bias.n == 60 and bias.reason is None and not math.isnan(bias.partial_rho)

    spread = annotator_spread(examples, "Overall")
    assert spread["e0"] == max(examples[0].ratings["Overall"].scores) - min(examples[0].ratings["Overall"].scores)
    groups = {ex.id: ex.group_id for ex in examples}
    split = certainty_split(judge, human, spread, groups, threshold=1.0, n_boot=0)
    agree_ids = [i for i in ids if spread[i] <= 1.0]
    assert split.agree.n + split.disagree.n == 60 and split.agree.n == len(agree_ids)
    assert split.agree.spearman.value == pytest.approx(
        stats.spearmanr([judge[i] for i in agree_ids], [human[i] for i in agree_ids]).statistic)
