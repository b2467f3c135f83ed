"""Simulated judges for a jury and a cascade, at the score level, with their truth in closed form.

**Jury.** A pass/fail label per item (the humans'); each member gives the right label with its own
probability ``accuracy[j]``, independently of the others, or fails (abstains) with probability
``failure[j]``. The majority of three independent members right with probability p is right with
probability p^3 + 3 p^2 (1 - p) (:func:`majority_accuracy`): more than p whenever p > 1/2.

**Cascade.** Two judges, each with a confidence drawn uniformly on [``low``, 1] per item and right
with probability ``bias + slope * confidence`` (capped at 1), independently of each other
(:class:`CascadeJudge`). For thresholds (t1, t2) the agreement on the items the cascade decides is
an integral over those uniform confidences (:func:`cascade_truth`): the truth a simulated cascade's
guarantee is checked against.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PanelBatch:
    """``labels[d, i]`` 0/1; ``scores[d, j, i]`` member j's 0/1 verdict or NaN (abstained)."""

    labels: np.ndarray
    scores: np.ndarray


def simulate_panel(accuracy: Sequence[float], n_items: int, n_datasets: int, seed: int, *,
                   failure: Sequence[float] | None = None) -> PanelBatch:
    rng = np.random.default_rng(seed)
    labels = (rng.random((n_datasets, n_items)) < 0.5).astype(float)
    fails = failure if failure is not None else [0.0] * len(accuracy)
    scores = np.empty((n_datasets, len(accuracy), n_items))
    for j, (p, f) in enumerate(zip(accuracy, fails)):
        right = rng.random((n_datasets, n_items)) < p
        verdict = np.where(right, labels, 1.0 - labels)
        scores[:, j, :] = np.where(rng.random((n_datasets, n_items)) < f, np.nan, verdict)
    return PanelBatch(labels, scores)


def majority_accuracy(p: float) -> float:
    """P(the majority of three independent judges, each right with probability p, is right)."""
    return p ** 3 + 3 * p ** 2 * (1 - p)


@dataclass(frozen=True)
class CascadeJudge:
    """Confidence ~ U[low, 1]; right with probability min(1, bias + slope * confidence)."""

    low: float = 0.5
    bias: float = 0.0
    slope: float = 1.0

    def p_right(self, confidence: np.ndarray) -> np.ndarray:
        return np.minimum(1.0, self.bias + self.slope * confidence)

    def draw(self, rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        confidence = rng.uniform(self.low, 1.0, shape)
        return confidence, rng.random(shape) < self.p_right(confidence)

    def covered(self, threshold: float | None) -> tuple[float, float]:
        """(share of items at or above the threshold, mean P(right) over them), by a fine quadrature."""
        if threshold is None or threshold > 1.0:
            return 0.0, 0.0
        t = max(threshold, self.low)
        share = (1.0 - t) / (1.0 - self.low)
        if share <= 0:
            return 0.0, 0.0
        grid = t + (np.arange(20_000) + 0.5) / 20_000 * (1.0 - t)
        return share, float(self.p_right(grid).mean())


def cascade_truth(cheap: CascadeJudge, strong: CascadeJudge, t1: float | None, t2: float | None
                  ) -> tuple[float, float, float]:
    """(agreement on the decided items, share the cheap judge decides, share the strong one decides)."""
    share1, right1 = cheap.covered(t1)
    share2, right2 = strong.covered(t2)
    by_strong = (1.0 - share1) * share2
    decided = share1 + by_strong
    agreement = (share1 * right1 + by_strong * right2) / decided if decided else float("nan")
    return agreement, share1, by_strong


__all__ = ["CascadeJudge", "PanelBatch", "cascade_truth", "majority_accuracy", "simulate_panel"]
