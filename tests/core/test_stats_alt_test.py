"""The alternative annotator test, step by step on hand-computed cases, and its verdicts on simulated judges."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dialjudge.core.model import Scale, ScaleKind
from dialjudge.core.stats.alt_test import (
    EPSILON_BY_ANNOTATORS,
    alignment,
    alt_test,
    fdr_reject,
    measure_for,
)

# Three annotators and a judge on four items with labels x/y (worked out by hand in the comments).
JUDGE = {1: "x", 2: "y", 3: "x", 4: "y"}
HUMANS = {
    "A": {1: "x", 2: "x", 3: "x", 4: "y"},
    "B": {1: "x", 2: "y", 3: "y", 4: "y"},
    "C": {1: "x", 2: "y", 3: "x", 4: "x"},
}


def test_alignment_measures_by_hand() -> None:
    assert alignment("x", ["x", "y"], "accuracy") == 0.5
    assert alignment("x", ["x", "x"], "accuracy") == 1.0
    assert alignment(1, [1.0, 2], "accuracy") == 0.5  # numbers compare as numbers
    # -RMSE: 2 against (1, 3) is sqrt((1 + 1) / 2) = 1 away; 3 is sqrt((4 + 0) / 2) away.
    assert alignment(2, [1, 3], "neg_rmse") == pytest.approx(-1.0)
    assert alignment(3, [1, 3], "neg_rmse") == pytest.approx(-math.sqrt(2))
    with pytest.raises(ValueError):
        alignment(1, [], "neg_rmse")


def test_measure_follows_the_scale() -> None:
    assert measure_for(Scale(ScaleKind.BINARY, 0, 1)) == "accuracy"
    assert measure_for(Scale(ScaleKind.CATEGORICAL, labels=("a", "b"))) == "accuracy"
    assert measure_for(Scale(ScaleKind.ORDINAL, 1, 3)) == "neg_rmse"
    assert measure_for(Scale(ScaleKind.CONTINUOUS, 0, 1)) == "neg_rmse"


def test_leave_one_out_by_hand() -> None:
    # Leaving A out, the others are B and C: item 1 (x, x) both right, a tie; item 2 (y, y) the judge
    # is right and A wrong; items 3 and 4 (one x, one y) both score 1/2, ties. So W^f = 1, 1, 1, 1,
    # W^h = 1, 0, 1, 1 and d = W^h - W^f = 0, -1, 0, 0. B and C by symmetry give the same.
    result = alt_test(JUDGE, HUMANS, measure="accuracy", epsilon=0.1, min_items=2, fdr="bh")
    assert [t.annotator for t in result.tested] == ["A", "B", "C"]
    d = np.array([0.0, -1.0, 0.0, 0.0])
    t_hand = (d.mean() - 0.1) / (d.std(ddof=1) / 2)  # (-0.25 - 0.1) / (0.5 / 2) = -1.4
    assert t_hand == pytest.approx(-1.4)
    for test in result.tested:
        assert test.n == 4
        assert test.judge_advantage == 1.0
        assert test.human_advantage == 0.75
        assert test.judge_alignment == pytest.approx((1 + 1 + 0.5 + 0.5) / 4)
        assert test.human_alignment == pytest.approx((1 + 0 + 0.5 + 0.5) / 4)
        assert test.t == pytest.approx(-1.4)
        assert test.p_value == pytest.approx(stats.t.cdf(-1.4, df=3))
        assert not test.judge_wins  # p = 0.128 is no evidence with four items
    assert result.winning_rate == 0.0
    assert result.advantage_probability == 1.0
    assert result.verdict == "fails"


def test_too_few_items_are_skipped_with_the_reason() -> None:
    result = alt_test(JUDGE, HUMANS, measure="accuracy")
    assert not result.tested
    assert [a for a, _ in result.skipped] == ["A", "B", "C"]
    assert "needs 30" in result.skipped[0][1]
    assert result.verdict == "not tested"
    assert math.isnan(result.winning_rate)


def test_two_annotators_are_flagged() -> None:
    two = {k: v for k, v in HUMANS.items() if k != "C"}
    result = alt_test(JUDGE, two, measure="accuracy", min_items=2)
    assert any("at least 3" in r for r in result.reasons)


def test_constant_differences_decide_by_sign() -> None:
    # The judge matches the two others everywhere; the left-out annotator never does: d = -1 always.
    humans = {"A": dict.fromkeys(range(40), 1), "B": dict.fromkeys(range(40), 1), "C": dict.fromkeys(range(40), 0)}
    judge = dict.fromkeys(range(40), 1)
    result = alt_test(judge, humans, measure="accuracy", epsilon=0.1)
    by_name = {t.annotator: t for t in result.tested}
    assert by_name["C"].p_value == 0.0 and by_name["C"].judge_wins
    # Against A (others: B says 1, C says 0) the judge and A both score 1/2: d = 0 < epsilon everywhere.
    assert by_name["A"].judge_wins and by_name["B"].judge_wins
    assert result.passed and result.winning_rate == 1.0


@pytest.mark.parametrize("method", ["bh", "by"])
def test_fdr_matches_scipy(method: str) -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        p = rng.uniform(0, 0.1, size=rng.integers(1, 8)).tolist()
        adjusted = stats.false_discovery_control(p, method=method)
        assert fdr_reject(p, 0.05, method) == [bool(a <= 0.05) for a in adjusted]  # type: ignore[arg-type]


def test_fdr_by_hand() -> None:
    p = [0.01, 0.02, 0.03, 0.2]
    # BH thresholds k * 0.05 / 4 = 0.0125, 0.025, 0.0375, 0.05: the three smallest pass.
    assert fdr_reject(p, 0.05, "bh") == [True, True, True, False]
    # BY divides by 1 + 1/2 + 1/3 + 1/4 = 2.083: the first threshold is 0.006, so none passes.
    assert fdr_reject(p, 0.05, "by") == [False, False, False, False]


def test_epsilon_presets_follow_the_paper() -> None:
    assert EPSILON_BY_ANNOTATORS == {"expert": 0.2, "skilled": 0.15, "crowd": 0.1}
    with pytest.raises(ValueError):
        alt_test(JUDGE, HUMANS, epsilon=1.5)


def _simulated(rng: np.random.Generator, n_items: int, judge_noise: float, human_noise: float = 0.8,
               n_annotators: int = 3) -> tuple[dict[int, float], dict[str, dict[int, float]]]:
    """Graded 1-5 ratings: annotators are the truth plus noise, rounded; the judge has its own noise."""
    truth = rng.uniform(1, 5, size=n_items)
    humans = {f"h{a}": {i: float(np.clip(np.rint(truth[i] + rng.normal(0, human_noise)), 1, 5))
                        for i in range(n_items)} for a in range(n_annotators)}
    judge = {i: float(np.clip(truth[i] + rng.normal(0, judge_noise), 1, 5)) for i in range(n_items)}
    return judge, humans


def test_verdicts_on_simulated_judges() -> None:
    rng = np.random.default_rng(11)
    good_passes = sum(alt_test(*_simulated(rng, 100, judge_noise=0.2), measure="neg_rmse").passed
                      for _ in range(20))
    bad_passes = sum(alt_test(*_simulated(rng, 100, judge_noise=2.5), measure="neg_rmse").passed
                     for _ in range(20))
    assert good_passes >= 18
    assert bad_passes == 0


def test_a_judge_like_one_more_annotator_rarely_wins_with_no_margin() -> None:
    """With epsilon = 0 and a judge drawn like the humans, H0 holds on its boundary: a single
    annotator's test must reject at most about 5% of the time (uncorrected)."""
    rng = np.random.default_rng(5)
    rejections = []
    for _ in range(300):
        truth = rng.integers(0, 2, size=60)

        judge, a, b, c = (_rater(rng, truth) for _ in range(4))
        result = alt_test(judge, {"a": a, "b": b, "c": c}, measure="accuracy", epsilon=0.0)
        rejections.append(result.tested[0].p_value < 0.05)
    assert np.mean(rejections) <= 0.08


def _rater(rng: np.random.Generator, truth: np.ndarray) -> dict[int, int]:
    """Right with probability 0.8 on each binary item."""
    return {i: int(t if rng.random() < 0.8 else 1 - t) for i, t in enumerate(truth)}
