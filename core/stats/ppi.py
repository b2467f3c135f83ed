"""Judge-assisted estimates from a few human labels: prediction-powered inference (PPI++).

From Angelopoulos, Duchi and Zrnic, "PPI++: Efficient Prediction-Powered
Inference" (2023), for the mean. With human labels ``Y`` and judge scores ``f``
on ``n`` labelled items, and judge scores ``f~`` on ``N`` other (unlabelled)
items drawn from the same population:

    theta_lambda = mean(Y - lambda f) + lambda mean(f~)

is unbiased for the mean human label whatever ``lambda`` and whatever the judge's
bias; its variance is ``lambda^2 Var(f)/N + Var(Y - lambda f)/n``. The
power-tuned ``lambda = Cov(Y, f) / ((1 + n/N) Var(f))`` minimises it, so the
estimate is never (asymptotically) worse than the labels alone (``lambda = 0``)
and is better the more the judge tracks the humans. The 95% interval is the
normal-theory one around it, with Student's t quantile (see ``_quantile``). A difference between two systems (or two runs) is the
difference of two independent estimates, each with its own ``lambda``; the
variances add.

The labels-only estimate and its t interval are always computed beside it,
so a reader sees what the judge adds (or, with a judge that tracks nothing,
that it adds nothing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its two-sided interval."""

    method: str
    value: float
    low: float
    high: float
    std_error: float
    n_labelled: int
    n_unlabelled: int = 0
    #: PPI++'s power-tuning weight on the judge (0: labels only).
    lam: float | None = None
    confidence: float = DEFAULT_CONFIDENCE

    @property
    def width(self) -> float:
        return self.high - self.low

    def covers(self, truth: float) -> bool:
        return self.low <= truth <= self.high

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "estimate": self.value, "low": self.low, "high": self.high,
                "width": self.width, "std_error": self.std_error, "n_labelled": self.n_labelled,
                "n_unlabelled": self.n_unlabelled, "lambda": self.lam, "confidence": self.confidence}


def _quantile(confidence: float, n_labelled: int) -> float:
    """Student's t quantile with ``n_labelled - 1`` degrees of freedom.

    The papers use the normal quantile (their intervals are asymptotic); with the
    few labels this module is for, the standard error itself is estimated from
    those few labels, and the t quantile keeps the coverage at its level (with 50
    labels the normal one covered 93.5% in the simulation of bench/label_estimates.py).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return float(stats.t.ppf(0.5 + confidence / 2, df=max(n_labelled - 1, 1)))


def _arrays(labels: ArrayLike, judged_labelled: ArrayLike, judged_unlabelled: ArrayLike
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = np.asarray(labels, dtype=float)
    f = np.asarray(judged_labelled, dtype=float)
    u = np.asarray(judged_unlabelled, dtype=float)
    if y.shape != f.shape:
        raise ValueError(f"{y.size} labels but {f.size} judge scores on the labelled items")
    if y.size < 2:
        raise ValueError("an interval needs at least 2 labelled items")
    if u.size < 2:
        raise ValueError("PPI needs at least 2 judged items without a label")
    for name, a in (("labels", y), ("judge scores", f), ("unlabelled judge scores", u)):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite numbers")
    return y, f, u


def _check_spread(se: float, n_labelled: int) -> None:
    """Refuse an interval of zero width: equal labels (and residuals) show no spread, and the spread
    of the population they come from cannot be estimated from them; [x, x] would claim certainty."""
    if not se > 0.0:
        raise ValueError(f"all {n_labelled} labels (and the judge's errors on them) are equal: no interval can be "
                         "estimated from them; label more items")


def labels_only_mean(labels: ArrayLike, *, confidence: float = DEFAULT_CONFIDENCE) -> Estimate:
    """The mean of the labels with the t interval (never of zero width)."""
    y = np.asarray(labels, dtype=float)
    if y.size < 2:
        raise ValueError("an interval needs at least 2 labelled items")
    se = float(y.std(ddof=1) / math.sqrt(y.size))
    _check_spread(se, int(y.size))
    mean = float(y.mean())
    half = _quantile(confidence, y.size) * se
    return Estimate("labels only", mean, mean - half, mean + half, se, int(y.size), confidence=confidence)


def power_tuned_lambda(labels: np.ndarray, judged_labelled: np.ndarray, judged_unlabelled: np.ndarray) -> float:
    """PPI++'s variance-minimising weight ``Cov(Y, f) / ((1 + n/N) Var(f))``.

    Var(f) is estimated on every judged item (labelled and not), Cov(Y, f) on the
    labelled ones. A judge with constant scores gets 0 (it carries no information).
    """
    n, big_n = labels.size, judged_unlabelled.size
    var_f = float(np.var(np.concatenate([judged_labelled, judged_unlabelled]), ddof=1))
    if var_f == 0.0:
        return 0.0
    cov = float(np.cov(labels, judged_labelled, ddof=1)[0, 1])
    return cov / ((1.0 + n / big_n) * var_f)


def ppi_mean(labels: ArrayLike, judged_labelled: ArrayLike, judged_unlabelled: ArrayLike, *,
             lam: float | None = None, confidence: float = DEFAULT_CONFIDENCE) -> Estimate:
    """PPI++ estimate of the mean human label, power-tuned unless ``lam`` is given (``lam=1``: plain PPI)."""
    y, f, u = _arrays(labels, judged_labelled, judged_unlabelled)
    weight = power_tuned_lambda(y, f, u) if lam is None else float(lam)
    value = float(np.mean(y - weight * f) + weight * np.mean(u))
    variance = weight ** 2 * float(np.var(u, ddof=1)) / u.size + float(np.var(y - weight * f, ddof=1)) / y.size
    se = math.sqrt(variance)
    _check_spread(se, int(y.size))
    half = _quantile(confidence, y.size) * se
    return Estimate("PPI++" if lam is None else f"PPI (lambda={weight:g})", value, value - half, value + half, se,
                    int(y.size), int(u.size), weight, confidence)


def difference(a: Estimate, b: Estimate, *, confidence: float | None = None) -> Estimate:
    """``a - b`` for two estimates from independent samples (two systems, or two runs on separate items)."""
    level = confidence if confidence is not None else a.confidence
    se = math.sqrt(a.std_error ** 2 + b.std_error ** 2)
    value = a.value - b.value
    # Welch–Satterthwaite degrees of freedom would need each side's n; the smaller side's n is the safe choice.
    half = _quantile(level, min(a.n_labelled, b.n_labelled)) * se
    return Estimate(f"{a.method} difference", value, value - half, value + half, se,
                    a.n_labelled + b.n_labelled, a.n_unlabelled + b.n_unlabelled, None, level)
