"""A cascade of two judges with a guaranteed agreement with people (Trust or Escalate).

From Jung, Brahman and Choi, "Trust or Escalate: LLM Judges with Provable Guarantees for Human
Agreement" (2024), cascaded selective evaluation: the cheap judge decides an item where its
confidence reaches its threshold; below it the item is escalated to the strong judge, which decides
where its own confidence reaches *its* threshold; below both, the item abstains (it goes to people).

Each threshold is chosen by fixed-sequence testing on labelled items (:func:`selective_threshold`):
the cheap judge's on every labelled item, the strong judge's on the labelled items the cheap judge
escalates (where the strong judge is asked). Each test keeps the disagreement on what its judge
decides at or below ``1 - target`` with probability ``1 - delta / 2``; by the union bound both hold
with probability ``1 - delta``, and then the agreement on every item the cascade decides (a mixture
of the two) is at least ``target``.

A judgment without a confidence (failed, or no answer probabilities) counts as confidence 0: the
cheap judge escalates it and the strong judge abstains on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from .selective import SelectiveThreshold, selective_threshold

DEFAULT_TARGET = 0.8
DEFAULT_DELTA = 0.1
CHEAP, STRONG, ABSTAIN = "cheap", "strong", "abstain"


@dataclass(frozen=True)
class CascadeThresholds:
    target: float
    delta: float
    cheap: SelectiveThreshold
    strong: SelectiveThreshold

    @property
    def risk(self) -> float:
        return 1.0 - self.target

    def route(self, cheap_confidence: ArrayLike, strong_confidence: ArrayLike) -> np.ndarray:
        """Who decides each item: CHEAP, STRONG or ABSTAIN."""
        c1 = _confidences(cheap_confidence)
        c2 = _confidences(strong_confidence)
        by_cheap = c1 >= self.cheap.threshold if self.cheap.threshold is not None else np.zeros(c1.shape, bool)
        by_strong = (~by_cheap & (c2 >= self.strong.threshold) if self.strong.threshold is not None
                     else np.zeros(c2.shape, bool))
        return np.where(by_cheap, CHEAP, np.where(by_strong, STRONG, ABSTAIN))


def _confidences(values: ArrayLike) -> np.ndarray:
    c = np.asarray(values, dtype=float)
    return np.where(np.isfinite(c), c, 0.0)


def cascade_thresholds(cheap_confidence: ArrayLike, cheap_agrees: ArrayLike, strong_confidence: ArrayLike,
                       strong_agrees: ArrayLike, *, target: float = DEFAULT_TARGET, delta: float = DEFAULT_DELTA
                       ) -> CascadeThresholds:
    """Both thresholds from the labelled items: each judge's confidence and whether it agreed with people
    (a judge without a verdict on an item does not agree)."""
    if not 0.0 < target < 1.0 or not 0.0 < delta < 1.0:
        raise ValueError("the target agreement and delta must be in (0, 1)")
    c2 = _confidences(strong_confidence)
    a2 = np.asarray(strong_agrees, dtype=bool)
    risk, each = 1.0 - target, delta / 2.0
    cheap = cheap_threshold(cheap_confidence, cheap_agrees, target=target, delta=delta)
    up = escalated(cheap, cheap_confidence)
    if up.any():
        strong = selective_threshold(c2[up], a2[up], alpha=risk, delta=each)
    else:
        strong = SelectiveThreshold(risk, each, None, 0, 0, 0.0, 0, "the cheap judge decides every labelled item")
    return CascadeThresholds(target, delta, cheap, strong)


def cheap_threshold(cheap_confidence: ArrayLike, cheap_agrees: ArrayLike, *, target: float = DEFAULT_TARGET,
                    delta: float = DEFAULT_DELTA) -> SelectiveThreshold:
    """The cheap judge's threshold alone (its half of the union bound): all a live cascade needs to know
    which items to ask the strong judge about, before asking it anything."""
    if not 0.0 < target < 1.0 or not 0.0 < delta < 1.0:
        raise ValueError("the target agreement and delta must be in (0, 1)")
    return selective_threshold(_confidences(cheap_confidence), np.asarray(cheap_agrees, dtype=bool),
                               alpha=1.0 - target, delta=delta / 2.0)


def escalated(cheap: SelectiveThreshold, cheap_confidence: ArrayLike) -> np.ndarray:
    """The items the cheap judge passes on to the strong one: below its threshold (every item when it has none)."""
    c1 = _confidences(cheap_confidence)
    return c1 < cheap.threshold if cheap.threshold is not None else np.ones(c1.shape, bool)


@dataclass(frozen=True)
class Proportion:
    """``hits`` of ``n`` with an exact (Clopper–Pearson) 95% interval."""

    hits: int
    n: int

    @property
    def value(self) -> float:
        return self.hits / self.n if self.n else math.nan

    @property
    def ci(self) -> tuple[float, float] | None:
        if not self.n:
            return None
        low = 0.0 if self.hits == 0 else float(stats.beta.ppf(0.025, self.hits, self.n - self.hits + 1))
        high = 1.0 if self.hits == self.n else float(stats.beta.ppf(0.975, self.hits + 1, self.n - self.hits))
        return low, high


def covered_agreement(route: np.ndarray, cheap_agrees: ArrayLike, strong_agrees: ArrayLike,
                      labelled: ArrayLike | None = None) -> Proportion:
    """Agreement with people on the (labelled) items the cascade decided: the deciding judge's."""
    a1, a2 = np.asarray(cheap_agrees, dtype=bool), np.asarray(strong_agrees, dtype=bool)
    keep = np.ones(route.shape, bool) if labelled is None else np.asarray(labelled, dtype=bool)
    decided = keep & (route != ABSTAIN)
    agrees = np.where(route == CHEAP, a1, a2)
    return Proportion(int((agrees & decided).sum()), int(decided.sum()))


__all__ = ["ABSTAIN", "CHEAP", "CascadeThresholds", "DEFAULT_DELTA", "DEFAULT_TARGET", "Proportion", "STRONG",
           "cascade_thresholds", "cheap_threshold", "covered_agreement", "escalated"]
