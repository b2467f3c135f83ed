"""Is a judge's probability a probability? Reliability bins, ECE and Brier score.

For probability scoring of a binary quality (p(yes), or a normalised score read
as the probability that the human label is positive): items are put in equal
width bins of predicted probability; a calibrated judge's items in the bin
[0.7, 0.8) are positive about 75% of the time. The expected calibration error
is the bin-size weighted mean gap |observed rate - mean prediction| (Naeini et
al. 2015; Guo et al. 2017); the Brier score is the mean squared difference
between prediction and outcome (Brier 1950), and for K classes the sum over
classes of the squared differences to the one-hot outcome.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class ReliabilityBin:
    low: float
    high: float
    n: int
    #: Mean predicted probability of the bin's items (NaN when empty).
    mean_predicted: float
    #: Share of the bin's items whose outcome is positive (NaN when empty).
    observed_rate: float

    @property
    def gap(self) -> float:
        return self.observed_rate - self.mean_predicted


@dataclass(frozen=True)
class Calibration:
    bins: tuple[ReliabilityBin, ...]
    ece: float
    brier: float
    n: int
    #: Items left out (no prediction, no outcome, or a prediction outside 0-1).
    n_excluded: int
    #: Share of positive outcomes (the Brier score of always predicting it is rate * (1 - rate)).
    base_rate: float

    def to_records(self) -> list[dict[str, Any]]:
        return [{"low": b.low, "high": b.high, "n": b.n, "mean_predicted": _clean(b.mean_predicted),
                 "observed_rate": _clean(b.observed_rate)} for b in self.bins]


def reliability(probabilities: Sequence[float | None], outcomes: Sequence[float | bool | None], *,
                n_bins: int = 10) -> Calibration:
    """Reliability diagram bins, ECE and Brier score of binary predictions.

    ``outcomes`` are 1/True (positive) or 0/False; None or NaN on either side
    excludes the item. Bins are [k/n_bins, (k+1)/n_bins), the last one closed.
    """
    if n_bins < 1:
        raise ValueError(f"n_bins must be at least 1, not {n_bins}")
    if len(probabilities) != len(outcomes):
        raise ValueError(f"{len(probabilities)} probabilities but {len(outcomes)} outcomes")
    p = np.array([np.nan if v is None else float(v) for v in probabilities], dtype=np.float64)
    o = np.array([np.nan if v is None else float(v) for v in outcomes], dtype=np.float64)
    keep = np.isfinite(p) & np.isfinite(o) & (p >= 0) & (p <= 1)
    bad_outcome = keep & ~np.isin(o, (0.0, 1.0))
    if bad_outcome.any():
        raise ValueError(f"outcomes must be 0 or 1, got {o[bad_outcome][0]!r}")
    p, o = p[keep], o[keep]
    n = int(p.size)
    index = np.minimum((p * n_bins).astype(np.intp), n_bins - 1)
    bins = []
    ece = 0.0
    for k in range(n_bins):
        inside = index == k
        count = int(inside.sum())
        mean_p = float(p[inside].mean()) if count else math.nan
        rate = float(o[inside].mean()) if count else math.nan
        if count:
            ece += count / n * abs(rate - mean_p)
        bins.append(ReliabilityBin(k / n_bins, (k + 1) / n_bins, count, mean_p, rate))
    return Calibration(tuple(bins), ece if n else math.nan, float(np.mean((p - o) ** 2)) if n else math.nan, n,
                       int((~keep).sum()), float(o.mean()) if n else math.nan)


def brier_multiclass(probabilities: Sequence[Sequence[float]], outcomes: Sequence[int]) -> float:
    """Mean over items of sum_k (p_k - [outcome == k])^2; ``outcomes`` are class indices."""
    p = np.asarray(probabilities, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != len(outcomes):
        raise ValueError(f"need one row of class probabilities per outcome, got shape {p.shape} "
                         f"for {len(outcomes)} outcomes")
    onehot = np.zeros_like(p)
    onehot[np.arange(len(outcomes)), np.asarray(outcomes, dtype=np.intp)] = 1.0
    return float(np.mean(np.sum((p - onehot) ** 2, axis=1)))


def _clean(value: float) -> float | None:
    return None if math.isnan(value) else value
