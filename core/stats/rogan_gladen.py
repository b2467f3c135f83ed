"""A judge's pass rate corrected for its errors: the Rogan–Gladen estimator.

Rogan and Gladen (1978), "Estimating prevalence from the results of a screening
test". A pass/fail judge with sensitivity ``s = P(judge pass | human pass)`` and
specificity ``c = P(judge fail | human fail)`` reports a pass rate
``p = theta s + (1 - theta)(1 - c)``; solving for the true pass rate gives

    theta = (p + c - 1) / (s + c - 1),

clipped to [0, 1]. ``s`` and ``c`` come from the labelled items, ``p`` from the
judged items without a label. The interval is a seeded percentile bootstrap that
resamples both sets (the labelled one for ``s`` and ``c``, the judged one for
``p``), so both sources of error are in it. A judge no better than chance
(``s + c <= 1``) cannot be corrected: the estimate is then undefined, as are
resamples where it happens (their share is reported).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .ppi import DEFAULT_CONFIDENCE, Estimate

DEFAULT_RESAMPLES = 2000
#: Too many undefined resamples make the percentile interval meaningless.
MAX_UNDEFINED_SHARE = 0.05


@dataclass(frozen=True)
class RoganGladen:
    estimate: Estimate | None
    sensitivity: float
    specificity: float
    judged_pass_rate: float
    #: Bootstrap resamples where the judge looked no better than chance (left out of the interval).
    undefined_share: float
    reason: str | None = None


def _binary(values: ArrayLike | Sequence[int] | Sequence[bool], name: str) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if not np.all(np.isin(a, (0.0, 1.0))):
        raise ValueError(f"{name} must be pass (1) or fail (0)")
    return a


def corrected_rate(labels: np.ndarray, judged_labelled: np.ndarray, judged_unlabelled: np.ndarray
                   ) -> tuple[float, float, float, float]:
    """(theta, sensitivity, specificity, judged pass rate); theta NaN when undefined."""
    positives = labels == 1
    negatives = ~positives
    sens = float(judged_labelled[positives].mean()) if positives.any() else math.nan
    spec = float(1.0 - judged_labelled[negatives].mean()) if negatives.any() else math.nan
    p = float(judged_unlabelled.mean())
    denominator = sens + spec - 1.0
    if not denominator > 0.0:
        return math.nan, sens, spec, p
    return min(max((p + spec - 1.0) / denominator, 0.0), 1.0), sens, spec, p


def _bootstrap(y: np.ndarray, f: np.ndarray, u: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """theta of ``n_boot`` resamples of both sets.

    Resampling binary pairs with replacement only changes how many of each of the
    four (label, verdict) kinds there are, so a resample is one multinomial draw of
    those counts (and one binomial draw of the unlabelled passes): the same
    distribution as drawing indices, without the (B x n) index arrays.
    """
    rng = np.random.default_rng(seed)
    cells = np.array([np.mean((y == 1) & (f == 1)), np.mean((y == 1) & (f == 0)),
                      np.mean((y == 0) & (f == 1)), np.mean((y == 0) & (f == 0))])
    counts = rng.multinomial(y.size, cells / cells.sum(), size=n_boot).astype(float)
    tp, fn, fp, tn = counts.T
    passes = rng.binomial(u.size, float(u.mean()), size=n_boot) / u.size
    with np.errstate(divide="ignore", invalid="ignore"):
        sens = tp / (tp + fn)
        spec = tn / (tn + fp)
        denominator = sens + spec - 1.0
        theta = np.clip((passes + spec - 1.0) / denominator, 0.0, 1.0)
    theta[~(denominator > 0.0)] = np.nan
    return theta


def rogan_gladen(labels: ArrayLike, judged_labelled: ArrayLike,
                 judged_unlabelled: ArrayLike, *, n_boot: int = DEFAULT_RESAMPLES,
                 seed: int = 0, confidence: float = DEFAULT_CONFIDENCE) -> RoganGladen:
    y = _binary(labels, "labels")
    f = _binary(judged_labelled, "judge verdicts on the labelled items")
    u = _binary(judged_unlabelled, "judge verdicts on the unlabelled items")
    if y.shape != f.shape:
        raise ValueError(f"{y.size} labels but {f.size} judge verdicts on the labelled items")
    if y.size == 0 or u.size == 0:
        raise ValueError("the Rogan–Gladen estimate needs labelled and judged items")
    theta, sens, spec, p = corrected_rate(y, f, u)
    if math.isnan(theta):
        why = ("the labelled items hold only one class, so sensitivity or specificity is unknown"
               if math.isnan(sens) or math.isnan(spec) else
               f"the judge is no better than chance on the labelled items (sensitivity {sens:.2f} + "
               f"specificity {spec:.2f} <= 1)")
        return RoganGladen(None, sens, spec, p, 1.0, why)
    thetas = _bootstrap(y, f, u, n_boot, seed)
    defined = thetas[~np.isnan(thetas)]
    undefined_share = 1.0 - defined.size / n_boot
    reason = None
    if undefined_share > MAX_UNDEFINED_SHARE:
        reason = (f"in {undefined_share:.0%} of the bootstrap resamples the judge looked no better than chance: "
                  "label more items before trusting this interval")
    if defined.size < 2:
        return RoganGladen(None, sens, spec, p, undefined_share, reason)
    tail = (1.0 - confidence) / 2 * 100
    low, high = (float(x) for x in np.percentile(defined, [tail, 100 - tail]))
    estimate = Estimate("Rogan–Gladen", theta, low, high, float(defined.std(ddof=1)), int(y.size), int(u.size),
                        confidence=confidence)
    return RoganGladen(estimate, sens, spec, p, undefined_share, reason)
