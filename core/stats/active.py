"""Which items to label next: active statistical inference.

From Zrnic and Candès, "Active Statistical Inference" (ICML 2024), for the mean
human label. Every item ``i`` of ``N`` has a judge score ``f_i`` and an
uncertainty ``u_i`` (how far the judge may be from the humans). Each item is
labelled independently with a known probability ``pi_i`` proportional to its
uncertainty, scaled so that the expected number of labels is the budget
(Poisson sampling). With ``xi_i = 1`` when item ``i`` was drawn,

    theta = (1/N) sum_i [ lam f_i + (Y_i - lam f_i) xi_i / pi_i ]

is unbiased for the mean of ``Y`` over the N items whatever the judge and the
uncertainties, because ``E[xi_i / pi_i] = 1`` (inverse-probability weighting).
The terms are independent, so the normal interval uses their sample variance.
``lam`` is power-tuned (the variance-minimising weight estimated from the same
terms), as the paper does; ``lam = 1`` is the plain estimator. A floor on the
probabilities (``min_probability``) keeps the weights bounded, so a confident
but wrong judge cannot make the estimate explode.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from .ppi import DEFAULT_CONFIDENCE, Estimate

DEFAULT_MIN_PROBABILITY = 0.05


def label_probabilities(uncertainty: ArrayLike, budget: float, *,
                        min_probability: float = DEFAULT_MIN_PROBABILITY) -> np.ndarray:
    """Probabilities proportional to ``uncertainty``, at least ``min_probability`` and at most 1,
    summing to ``budget`` (the expected number of labels)."""
    u = np.asarray(uncertainty, dtype=float)
    n = u.size
    if n == 0:
        return u
    if not np.all(np.isfinite(u)) or np.any(u < 0):
        raise ValueError("uncertainties must be finite and non-negative")
    if not 0 < budget <= n:
        raise ValueError(f"the label budget must be in (0, {n}], got {budget}")
    floor = min(min_probability, budget / n)
    spare = budget - floor * n
    if u.sum() == 0 or spare <= 0:
        return np.full(n, budget / n)
    # Proportional allocation of the spare mass, capped at 1 with the excess passed on (water-filling).
    pi = np.full(n, floor)
    free = np.ones(n, dtype=bool)
    for _ in range(n):
        weights = np.where(free, u, 0.0)
        if weights.sum() == 0:
            pi[free] += spare / free.sum()
            break
        proposal = pi + spare * weights / weights.sum()
        over = free & (proposal > 1.0)
        if not over.any():
            pi = proposal
            break
        spare -= float((1.0 - pi[over]).sum())
        pi[over] = 1.0
        free &= ~over
    return np.minimum(pi, 1.0)


def draw_labels(probabilities: ArrayLike, seed: int) -> np.ndarray:
    """Which items to label (Poisson sampling: each independently with its probability)."""
    pi = np.asarray(probabilities, dtype=float)
    return np.random.default_rng(seed).random(pi.size) < pi


def active_mean(judged: ArrayLike, probabilities: ArrayLike, drawn: ArrayLike, labels: Mapping[int, float],
                *, lam: float | None = None, confidence: float = DEFAULT_CONFIDENCE) -> Estimate:
    """The inverse-probability-weighted estimate of the mean label.

    ``labels`` maps the index of every drawn item to its human label (an item
    drawn but not yet labelled is an error: leaving it out would bias the estimate).
    """
    f = np.asarray(judged, dtype=float)
    pi = np.asarray(probabilities, dtype=float)
    xi = np.asarray(drawn, dtype=bool)
    if not (f.shape == pi.shape == xi.shape):
        raise ValueError("judge scores, probabilities and draws must have one entry per item")
    if np.any(pi[xi] <= 0):
        raise ValueError("a drawn item has probability 0")
    missing = [i for i in np.flatnonzero(xi).tolist() if i not in labels]
    if missing:
        raise ValueError(f"{len(missing)} drawn items have no label yet (first: item {missing[0]}); label them or "
                         "leave the estimate until they are")
    y = np.zeros_like(f)
    for i, value in labels.items():
        y[i] = value
    weight = np.where(xi, 1.0 / np.where(pi > 0, pi, 1.0), 0.0)
    labelled_part = y * weight
    judge_part = f * (1.0 - weight)
    if lam is None:
        var_j = float(np.var(judge_part, ddof=1))
        lam = 0.0 if var_j == 0 else -float(np.cov(labelled_part, judge_part, ddof=1)[0, 1]) / var_j
    terms = labelled_part + lam * judge_part
    n = terms.size
    value = float(terms.mean())
    se = float(terms.std(ddof=1) / math.sqrt(n))
    half = float(stats.norm.ppf(0.5 + confidence / 2)) * se
    return Estimate("active (IPW)", value, value - half, value + half, se, int(xi.sum()), int(n - xi.sum()),
                    lam, confidence)


def distribution_spread(distribution: Mapping[str, float] | None, values: Mapping[str, float]) -> float | None:
    """The standard deviation of the judge's answer distribution on the answers' values: how unsure it is,
    in the units of the scale (the paper's uncertainty for a mean is the expected error's size)."""
    if not distribution:
        return None
    pairs = [(values[a], p) for a, p in distribution.items() if a in values and p > 0]
    total = sum(p for _, p in pairs)
    if not pairs or total <= 0:
        return None
    mean = sum(v * p for v, p in pairs) / total
    return math.sqrt(sum(p * (v - mean) ** 2 for v, p in pairs) / total)


@dataclass(frozen=True)
class Proposal:
    """The order in which to label items, with each item's known probability of being drawn."""

    item_ids: tuple[str, ...]
    probabilities: tuple[float, ...]
    drawn: tuple[bool, ...]
    seed: int

    def to_label(self) -> list[str]:
        """The drawn items, most uncertain (highest probability) first."""
        order = sorted((i for i, d in enumerate(self.drawn) if d), key=lambda i: -self.probabilities[i])
        return [self.item_ids[i] for i in order]


def propose(item_ids: Sequence[str], uncertainty: ArrayLike, budget: float, *, seed: int = 0,
            min_probability: float = DEFAULT_MIN_PROBABILITY) -> Proposal:
    """Draw the items to label for a budget; the probabilities are kept for the estimate."""
    pi = label_probabilities(uncertainty, budget, min_probability=min_probability)
    drawn = draw_labels(pi, seed)
    return Proposal(tuple(item_ids), tuple(float(p) for p in pi), tuple(bool(d) for d in drawn), seed)
