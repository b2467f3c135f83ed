"""Can the judge replace an annotator? The alternative annotator test.

From Calderon, Reichart and Dror, "The Alternative Annotator Test for
LLM-as-a-Judge: How to Statistically Justify Replacing Human Annotators with
LLMs" (ACL 2025). Implemented from the paper's definitions (as summarised in its
FAQ and public description), not from its code:

1. Leave annotator ``j`` out. On every item ``i`` that ``j`` rated and at least
   one other annotator rated too, score how well the judge and how well ``j``
   represent the remaining annotators ``H_i^{-j}`` with an alignment function:

   * label scales (binary, categorical): ``ACC(x) = mean_k 1[x == h_k]``;
   * graded scales (ordinal, continuous): ``-RMSE(x) = -sqrt(mean_k (x - h_k)^2)``.

2. ``W^f_i = 1`` when the judge aligns at least as well as ``j``
   (``S_f >= S_j``), ``W^h_i = 1`` when ``j`` aligns at least as well as the
   judge; a tie counts for both. ``rho^f_j = mean W^f`` is the judge's advantage
   probability against ``j``.
3. With ``d_i = W^h_i - W^f_i``, a one-sided one-sample t-test of
   ``H0: mean(d) >= epsilon`` against ``H1: mean(d) < epsilon``: the judge
   "wins" against ``j`` when H0 is rejected, i.e. ``rho^f_j > rho^h_j - epsilon``.
   ``epsilon`` is the cost-benefit margin the paper gives the cheaper judge.
4. The p-values of all annotators are corrected for multiple comparisons at
   level ``q``. The paper uses Benjamini–Yekutieli (valid whatever the
   dependence between the annotators' tests, which share items); Benjamini–
   Hochberg can be chosen instead.
5. Winning rate ``omega`` = share of the tested annotators the judge wins
   against; the judge passes when ``omega >= 0.5``. The average advantage
   probability ``rho = mean_j rho^f_j`` compares judges (it does not depend on
   ``epsilon``).

The paper recommends at least 3 annotators and 30 items per annotator (for the
t-test's normal approximation; below that it suggests a rank test): annotators
with fewer items are not tested and are listed with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from scipy import stats

from ..model import RatingValue, Scale, ScaleKind

Measure = Literal["accuracy", "neg_rmse"]
FdrMethod = Literal["by", "bh"]

#: The paper's rule of thumb for the margin: higher where humans cost more.
EPSILON_BY_ANNOTATORS: Mapping[str, float] = {"expert": 0.2, "skilled": 0.15, "crowd": 0.1}
#: The strictest preset: a judge that passes with it passes with the others.
DEFAULT_ANNOTATORS = "crowd"
DEFAULT_Q = 0.05
#: Items per annotator below which the t-test's normal approximation is not trusted (the paper's advice).
MIN_ITEMS = 30
#: Two alignments closer than this are a tie (sums of squares are not exact in floating point).
TIE_TOLERANCE = 1e-9


def measure_for(scale: Scale | None) -> Measure:
    """The paper's alignment measure for a scale: accuracy for labels, -RMSE for graded values."""
    if scale is None or scale.kind in (ScaleKind.BINARY, ScaleKind.CATEGORICAL):
        return "accuracy"
    return "neg_rmse"


def alignment(value: RatingValue, others: Sequence[RatingValue], measure: Measure) -> float:
    """How well ``value`` represents ``others`` (higher is better)."""
    if not others:
        raise ValueError("alignment needs at least one other annotation")
    if measure == "accuracy":
        return sum(1.0 for h in others if _same_label(value, h)) / len(others)
    x = _number(value)
    return -math.sqrt(sum((x - _number(h)) ** 2 for h in others) / len(others))


def _number(value: RatingValue) -> float:
    if value is None or isinstance(value, str):
        raise ValueError(f"a graded alignment needs numbers, got {value!r}")
    return float(value)


def _same_label(a: RatingValue, b: RatingValue) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return str(a) == str(b)


@dataclass(frozen=True)
class AnnotatorTest:
    """The judge against one left-out annotator."""

    annotator: str
    n: int
    #: rho^f_j: share of items where the judge represents the others at least as well as this annotator.
    judge_advantage: float
    #: rho^h_j: share of items where this annotator does at least as well as the judge.
    human_advantage: float
    #: Mean alignment of the judge and of the annotator with the others (accuracy, or -RMSE).
    judge_alignment: float
    human_alignment: float
    t: float
    p_value: float
    #: After the multiple-comparison correction: the judge wins against this annotator.
    judge_wins: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"annotator": self.annotator, "n": self.n, "judge_advantage": self.judge_advantage,
                "human_advantage": self.human_advantage, "judge_alignment": self.judge_alignment,
                "human_alignment": self.human_alignment, "t": _clean(self.t), "p_value": self.p_value,
                "judge_wins": self.judge_wins}


@dataclass(frozen=True)
class AltTestResult:
    measure: Measure
    epsilon: float
    q: float
    fdr: FdrMethod
    tested: tuple[AnnotatorTest, ...]
    #: Annotators not tested, with why (too few items).
    skipped: tuple[tuple[str, str], ...] = ()
    reasons: tuple[str, ...] = field(default=())

    @property
    def winning_rate(self) -> float:
        """omega: share of the tested annotators the judge wins against (NaN when none was tested)."""
        if not self.tested:
            return math.nan
        return sum(t.judge_wins for t in self.tested) / len(self.tested)

    @property
    def advantage_probability(self) -> float:
        """rho: the judge's advantage probability averaged over annotators."""
        if not self.tested:
            return math.nan
        return float(np.mean([t.judge_advantage for t in self.tested]))

    @property
    def passed(self) -> bool:
        return bool(self.tested) and self.winning_rate >= 0.5

    @property
    def verdict(self) -> str:
        if not self.tested:
            return "not tested"
        return "passes" if self.passed else "fails"

    def to_dict(self) -> dict[str, Any]:
        return {"measure": self.measure, "epsilon": self.epsilon, "q": self.q, "fdr": self.fdr,
                "winning_rate": _clean(self.winning_rate), "advantage_probability": _clean(self.advantage_probability),
                "verdict": self.verdict, "annotators": [t.to_dict() for t in self.tested],
                "skipped": [{"annotator": a, "reason": r} for a, r in self.skipped], "reasons": list(self.reasons)}


def alt_test(judge: Mapping[Any, RatingValue], annotations: Mapping[str, Mapping[Any, RatingValue]],
             *, measure: Measure = "accuracy", epsilon: float = EPSILON_BY_ANNOTATORS[DEFAULT_ANNOTATORS],
             q: float = DEFAULT_Q, fdr: FdrMethod = "by", min_items: int = MIN_ITEMS) -> AltTestResult:
    """Run the alternative annotator test.

    ``judge`` maps item -> the judge's value on the humans' scale (missing or
    None: the item is left out); ``annotations`` maps annotator -> item -> value.
    """
    if not 0.0 <= epsilon < 1.0:
        raise ValueError(f"epsilon must be in [0, 1), got {epsilon}")
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be in (0, 1), got {q}")
    present = {a: {i: v for i, v in items.items() if v is not None} for a, items in annotations.items()}
    raw: list[tuple[str, int, float, float, float, float, float, float]] = []
    skipped: list[tuple[str, str]] = []
    for left_out, items in present.items():
        judge_wins: list[float] = []
        human_wins: list[float] = []
        judge_scores: list[float] = []
        human_scores: list[float] = []
        for item, value in items.items():
            judged = judge.get(item)
            others = [o[item] for a, o in present.items() if a != left_out and item in o]
            if judged is None or not others:
                continue
            s_f = alignment(judged, others, measure)
            s_h = alignment(value, others, measure)
            tie = abs(s_f - s_h) <= TIE_TOLERANCE
            judge_wins.append(1.0 if tie or s_f > s_h else 0.0)
            human_wins.append(1.0 if tie or s_h > s_f else 0.0)
            judge_scores.append(s_f)
            human_scores.append(s_h)
        n = len(judge_wins)
        if n < max(min_items, 2):
            skipped.append((left_out, f"{n} items with the judge and another annotator (the test needs "
                                      f"{max(min_items, 2)})"))
            continue
        d = np.asarray(human_wins) - np.asarray(judge_wins)
        t, p = _one_sided_t(d, epsilon)
        raw.append((left_out, n, float(np.mean(judge_wins)), float(np.mean(human_wins)),
                    float(np.mean(judge_scores)), float(np.mean(human_scores)), t, p))
    rejected = fdr_reject([r[7] for r in raw], q, fdr)
    tested = tuple(AnnotatorTest(a, n, rf, rh, sf, sh, t, p, judge_wins=bool(rej))
                   for (a, n, rf, rh, sf, sh, t, p), rej in zip(raw, rejected))
    reasons: list[str] = []
    if len(present) < 3:
        reasons.append(f"only {len(present)} annotators: the paper recommends at least 3, so that the others form "
                       "a consensus to represent")
    if not tested:
        reasons.append("no annotator could be tested")
    return AltTestResult(measure, epsilon, q, fdr, tested, tuple(skipped), tuple(reasons))


def _one_sided_t(d: np.ndarray, epsilon: float) -> tuple[float, float]:
    """t statistic and p-value of H0: mean(d) >= epsilon against H1: mean(d) < epsilon."""
    n = d.size
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        # Every item gave the same difference: no sampling variation is seen, so the
        # test is decided by the sign alone (scipy would return NaN).
        if mean < epsilon:
            return -math.inf, 0.0
        return (math.inf if mean > epsilon else math.nan), 1.0
    t = (mean - epsilon) / (sd / math.sqrt(n))
    return t, float(stats.t.cdf(t, df=n - 1))


def fdr_reject(p_values: Sequence[float], q: float, method: FdrMethod = "by") -> list[bool]:
    """Step-up false-discovery-rate control: which hypotheses are rejected at level ``q``.

    Benjamini–Hochberg rejects the k smallest p-values for the largest k with
    ``p_(k) <= k q / m``; Benjamini–Yekutieli divides ``q`` by ``sum_{i<=m} 1/i``.
    """
    m = len(p_values)
    if m == 0:
        return []
    if method not in ("by", "bh"):
        raise ValueError(f"unknown FDR method {method!r}: use 'by' or 'bh'")
    level = q / sum(1.0 / i for i in range(1, m + 1)) if method == "by" else q
    order = sorted(range(m), key=lambda i: p_values[i])
    largest = 0
    for rank, index in enumerate(order, start=1):
        if p_values[index] <= rank * level / m:
            largest = rank
    chosen = set(order[:largest])
    return [i in chosen for i in range(m)]


def _clean(x: float) -> float | None:
    return None if math.isnan(x) or math.isinf(x) else x
