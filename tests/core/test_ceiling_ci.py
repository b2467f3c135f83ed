"""The numeric human ceiling's CI: a context bootstrap of the leave-one-annotator-out coefficients,
checked against a plain-Python bootstrap over the same draws, its floor, and the large-n path."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dialjudge.core.model import Example, Rating, Scale, ScaleKind
from dialjudge.core.stats import ceiling_ci
from dialjudge.core.stats.ceiling import human_ceiling
from dialjudge.core.stats.small_samples import expanded_tail

SCALE = Scale(ScaleKind.ORDINAL, 1, 5)
METHODS = ("pearson", "spearman", "kendall")
SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def rated(n_contexts: int, per_context: int, seed: int, *, gaps: bool = False) -> list[Example]:
    """Three annotators on 1-5 who see one latent quality through noise; ``gaps``: some ratings missing."""
    rng = np.random.default_rng(seed)
    out = []
    for c in range(n_contexts):
        for j in range(per_context):
            q = rng.normal()
            scores: list[float | None] = [float(np.clip(np.rint(3 + q + rng.normal(0, 0.7)), 1, 5)) for _ in range(3)]
            if gaps and (c + j) % 4 == 0:
                scores[(c + j) % 3] = None
            out.append(Example(f"c{c}-{j}", f"c{c}", (), "", ratings={"q": Rating(tuple(scores), SCALE)}))
    return out


def plain_ceiling(rows: list[list[float | None]], method: str) -> float:
    """Leave-one-out by hand: each annotator against the others' mean where both exist, scipy's
    coefficient, averaged over annotators weighted by their items (repeats counted)."""
    values, weights = [], []
    for a in range(3):
        own, others = [], []
        for row in rows:
            rest = [v for b, v in enumerate(row) if b != a and v is not None]
            if row[a] is not None and rest:
                own.append(row[a])
                others.append(sum(rest) / len(rest))
        if len(set(own)) > 1 and len(set(others)) > 1:
            values.append(float(SCIPY[method](own, others).statistic))
            weights.append(len(own))
    return sum(v * w for v, w in zip(values, weights)) / sum(weights) if values else math.nan


@pytest.mark.parametrize("gaps", [False, True])
def test_the_ci_is_a_plain_bootstrap_of_whole_contexts(gaps: bool) -> None:
    """The vectorised weighted coefficients give what a loop over explicit resamples gives: the same
    context draws (numpy's generator, as core.stats.bootstrap draws them), each resample's items
    listed out with repeats, the leave-one-out ceiling by scipy, the expanded percentile interval."""
    examples = rated(8, 3, seed=4, gaps=gaps)
    n_boot, seed = 300, 11
    ceiling = human_ceiling(examples, "q", n_boot=n_boot, seed=seed)
    contexts = sorted({ex.group_id for ex in examples}, key=lambda g: int(g[1:]))
    draws = np.random.default_rng(seed).integers(0, len(contexts), size=(n_boot, len(contexts)))
    tail = expanded_tail(0.95, len(contexts)) * 100
    for method in METHODS:
        boot = []
        for row in draws:
            rows = [list(ex.ratings["q"].scores) for c in row for ex in examples if ex.group_id == contexts[c]]
            boot.append(plain_ceiling(rows, method))
        finite = np.array([b for b in boot if not math.isnan(b)])
        low, high = np.percentile(finite, [tail, 100 - tail])
        assert ceiling.ci(method) == pytest.approx((low, high), abs=1e-9), method
        assert ceiling.coefficient(method) == pytest.approx(
            plain_ceiling([list(ex.ratings["q"].scores) for ex in examples], method), abs=1e-12)
    assert ceiling.n_contexts == 8 and ceiling.interval is not None and ceiling.interval.method == "bootstrap"


def test_no_ci_below_the_floor_and_the_reason_says_so() -> None:
    few = human_ceiling(rated(ceiling_ci.MIN_CONTEXTS_CEILING - 1, 3, seed=1), "q")
    assert not math.isnan(few.pearson)
    assert all(math.isnan(few.ci(m)[0]) for m in METHODS)
    assert few.ci_reason == (f"too few contexts for a CI: {ceiling_ci.MIN_CONTEXTS_CEILING - 1} "
                             f"(at least {ceiling_ci.MIN_CONTEXTS_CEILING} are needed)")
    assert few.to_dict()["ci_reason"] == few.ci_reason and few.to_dict()["pearson_lo"] is None
    enough = human_ceiling(rated(ceiling_ci.MIN_CONTEXTS_CEILING, 3, seed=1), "q")
    assert enough.ci_reason is None
    for m in METHODS:
        low, high = enough.ci(m)
        assert low < high and low <= enough.coefficient(m) <= high  # never zero-width
    assert enough.text("pearson").startswith(f"{enough.pearson:.3f} [")
    assert enough.n_text() == (f"n = 18 items in {ceiling_ci.MIN_CONTEXTS_CEILING} contexts, "
                               "3 raters in the set, 3 per item")


def test_no_ci_asked_for_no_ci_and_no_reason() -> None:
    ceiling = human_ceiling(rated(10, 2, seed=3), "q", n_boot=0)
    assert ceiling.ci_reason is None and math.isnan(ceiling.ci("spearman")[0])


def test_above_the_size_limit_an_m_out_of_n_bootstrap_rescaled_to_all_contexts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The interval is the subsample's bootstrap interval, re-centred on the full ceiling and
    scaled by sqrt(m/n): recomputed here from the subsample's own ceiling and CI."""
    examples = rated(40, 3, seed=7)
    monkeypatch.setattr(ceiling_ci, "CEILING_CI_MAX_ITEMS", 30)
    full = human_ceiling(examples, "q", n_boot=500, seed=5)
    assert full.interval is not None and full.interval.method is not None
    assert full.interval.method.startswith("m-out-of-n bootstrap: 30 of 120 items (10 of 40 contexts)")
    order = np.random.default_rng(5).permutation(40)[:10]
    chosen = {f"c{u}" for u in order}
    sub = human_ceiling([ex for ex in examples if ex.group_id in chosen], "q", n_boot=500, seed=5)
    scale = math.sqrt(10 / 40)
    for m in METHODS:
        low, high = sub.ci(m)
        expected = (full.coefficient(m) + (low - sub.coefficient(m)) * scale,
                    full.coefficient(m) + (high - sub.coefficient(m)) * scale)
        assert full.ci(m) == pytest.approx(expected, abs=1e-9), m


def test_the_ceiling_record_and_the_system_level_carry_no_stale_ci() -> None:
    ceiling = human_ceiling(rated(8, 2, seed=2), "q", level="system")
    assert ceiling.interval is None and ceiling.n_contexts is None
    record = human_ceiling(rated(8, 2, seed=2), "q").to_dict()
    assert record["n_contexts"] == 8 and record["pearson_lo"] < record["pearson"] < record["pearson_hi"]
