"""Percent agreement, Cohen's kappa and Krippendorff's alpha (dialjudge.core.stats.categorical)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dialjudge.core.model import Scale, ScaleKind
from dialjudge.core.stats.categorical import (
    categorical_agreement,
    cohen_kappa,
    krippendorff_alpha,
    percent_agreement,
)

NAN = float("nan")

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C:
# 4 observers x 12 units with missing values; published alpha: nominal 0.743,
# ordinal 0.815, interval 0.849.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def test_cohen_kappa_textbook_two_by_two() -> None:
    # 50 proposals, two readers: yes/yes 20, yes/no 5, no/yes 10, no/no 15.
    # p_o = 0.7, p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-12)
    assert percent_agreement(a, b) == pytest.approx(0.7, abs=1e-12)


def test_cohen_kappa_edge_cases() -> None:
    assert cohen_kappa([1, 0, 1, 0], [1, 0, 1, 0]) == 1.0
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))  # chance agreement already perfect
    assert math.isnan(cohen_kappa([None, 1], [0, None]))  # no pair at all
    # Missing values drop their pair only: these are the pairs of the textbook case above.
    a = ["yes"] * 25 + ["no"] * 25 + [None, "yes"]
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15 + ["no", NAN]
    assert cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-12)
    assert percent_agreement(a, b) == pytest.approx(0.7, abs=1e-12)


def test_linear_weighted_kappa_by_hand() -> None:
    # Pairs (0,0), (1,2), (2,2): observed linear disagreement 1/3. Marginals
    # a = (1/3, 1/3, 1/3), b = (1/3, 0, 2/3): expected disagreement
    # (1/3)(4/3) + (1/3)(1) + (1/3)(2/3) = 1, so kappa = 1 - 1/3.
    assert cohen_kappa([0, 1, 2], [0, 2, 2], weights="linear") == pytest.approx(2 / 3, abs=1e-12)


def test_quadratic_weighted_kappa_equals_its_moment_form() -> None:
    # For equally spaced categories quadratic-weighted kappa is
    # 2 cov(a, b) / (var a + var b + (mean a - mean b)^2) with population moments.
    rng = np.random.default_rng(0)
    a = rng.integers(1, 6, 200)
    b = np.clip(a + rng.integers(-1, 2, 200), 1, 5)
    expected = 2 * np.cov(a, b, bias=True)[0, 1] / (a.var() + b.var() + (a.mean() - b.mean()) ** 2)
    got = cohen_kappa(list(a), list(b), weights="quadratic", categories=[1, 2, 3, 4, 5])
    assert got == pytest.approx(expected, abs=1e-12)


def test_kappa_refuses_labels_outside_the_categories() -> None:
    with pytest.raises(ValueError, match="not among the categories"):
        cohen_kappa([1, 2], [1, 3], categories=[1, 2])


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_alpha_matches_the_published_example(level: str, published: float) -> None:
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, level), 3) == published


def test_nominal_alpha_from_the_coincidence_matrix() -> None:
    """Independent check of the package: alpha = 1 - (n - 1) D_o / D_e from coincidences."""
    data = np.array([[np.nan if v is None else v for v in row] for row in KRIPPENDORFF_2011])
    values = sorted(set(data[np.isfinite(data)]))
    coincidence = np.zeros((len(values), len(values)))
    for unit in data.T:
        present = unit[np.isfinite(unit)]
        if present.size < 2:
            continue
        for i, c in enumerate(present):
            for j, k in enumerate(present):
                if i != j:
                    coincidence[values.index(c), values.index(k)] += 1 / (present.size - 1)
    n = coincidence.sum()
    marginals = coincidence.sum(axis=1)
    observed = coincidence.sum() - np.trace(coincidence)
    expected = (n * n - (marginals ** 2).sum()) / (n - 1)
    assert krippendorff_alpha(KRIPPENDORFF_2011, "nominal") == pytest.approx(1 - observed / expected, abs=1e-12)


def test_alpha_of_labels_uses_their_order_on_the_scale() -> None:
    scale = Scale(ScaleKind.CATEGORICAL, labels=("bad", "ok", "good"))
    as_text = [["bad", "ok", "good", "good"], ["bad", "good", "good", "ok"]]
    as_numbers = [[0, 1, 2, 2], [0, 2, 2, 1]]
    assert krippendorff_alpha(as_text, "ordinal", scale) == pytest.approx(krippendorff_alpha(as_numbers, "ordinal"))
    assert math.isnan(krippendorff_alpha([[1, 1, 1], [1, 1, None]], "nominal"))


def test_categorical_agreement_counts_exclusions_and_ties() -> None:
    judge = [1, 0, 1, None, 1, 0, 1]
    human = [1, 0, 0, 1, None, 0, 1]
    tied = [False, True, False, True, True, False, False]
    result = categorical_agreement(judge, human, tied=tied)
    assert (result.n, result.n_excluded, result.n_ties) == (5, 2, 1)
    assert result.percent_agreement == pytest.approx(4 / 5)
    assert result.kappa == pytest.approx(cohen_kappa([1, 0, 1, 0, 1], [1, 0, 0, 0, 1]))
    assert result.alpha == pytest.approx(krippendorff_alpha([[1, 0, 1, 0, 1], [1, 0, 0, 0, 1]], "nominal"))
    empty = categorical_agreement([None], [1])
    assert empty.n == 0 and empty.reason and math.isnan(empty.kappa)
