"""Agreement on labels: percent agreement, Cohen's kappa, Krippendorff's alpha.

Used between a judge's labels and pooled (usually majority-voted) human labels,
and among annotators for the human ceiling. Missing labels (None, NaN) are
excluded pairwise and counted. Undefined values are NaN with a reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..model import RatingValue, Scale
from .human import label_codes

NAN = float("nan")
ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")
KAPPA_WEIGHTS = (None, "linear", "quadratic")


def is_missing(value: Any) -> bool:
    """None or a NaN of any float type; labels (text) are never missing."""
    if value is None:
        return True
    if isinstance(value, str):
        return False
    try:
        return math.isnan(value)
    except TypeError:
        return False


def percent_agreement(a: Sequence[RatingValue], b: Sequence[RatingValue]) -> float:
    """Share of the pairs (both present) with equal labels; NaN when there are none."""
    pairs = _pairs(a, b)
    if not pairs:
        return NAN
    return sum(1 for x, y in pairs if x == y) / len(pairs)


def cohen_kappa(a: Sequence[RatingValue], b: Sequence[RatingValue], *,
                weights: str | None = None, categories: Sequence[RatingValue] | None = None) -> float:
    """Cohen's kappa of two raters over the pairs where both gave a label.

    ``weights`` "linear" or "quadratic" gives weighted kappa for ordered
    categories, whose order is ``categories`` when given, else the sorted labels.
    NaN when chance agreement is already perfect (both raters used one label).
    """
    if weights not in KAPPA_WEIGHTS:
        raise ValueError(f"unknown kappa weights {weights!r}: use None, 'linear' or 'quadratic'")
    pairs = _pairs(a, b)
    if not pairs:
        return NAN
    labels = list(categories) if categories is not None else sorted({v for p in pairs for v in p}, key=_order)
    index = {label: k for k, label in enumerate(labels)}
    unknown = {v for p in pairs for v in p if v not in index}
    if unknown:
        raise ValueError(f"labels {sorted(map(str, unknown))} are not among the categories {labels}")
    k = len(labels)
    table = np.zeros((k, k))
    for x, y in pairs:
        table[index[x], index[y]] += 1
    table /= len(pairs)
    expected = np.outer(table.sum(axis=1), table.sum(axis=0))
    distance = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    if weights is None:
        disagreement = (distance > 0).astype(float)
    elif weights == "linear":
        disagreement = distance
    else:
        disagreement = distance ** 2
    expected_disagreement = float((disagreement * expected).sum())
    if expected_disagreement == 0:
        return NAN
    return 1.0 - float((disagreement * table).sum()) / expected_disagreement


def krippendorff_alpha(reliability: Sequence[Sequence[RatingValue]] | np.ndarray, level: str = "nominal",
                       scale: Scale | None = None) -> float:
    """Krippendorff's alpha of coders x units data (None/NaN = missing).

    Labels that are not numbers are coded by their position in ``scale.labels``
    (or sorted order). NaN when fewer than two distinct values occur or no unit
    has two values.
    """
    import krippendorff

    if level not in ALPHA_LEVELS:
        raise ValueError(f"unknown level {level!r}: use one of {', '.join(ALPHA_LEVELS)}")
    data = _as_matrix(reliability, scale)
    if alpha_undefined_reason(data):
        return NAN
    measurement: Any = level  # checked against ALPHA_LEVELS above; the library types it as a Literal
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=measurement))


def alpha_undefined_reason(data: np.ndarray) -> str | None:
    if data.size == 0:
        return "no ratings"
    pairable = (np.isfinite(data).sum(axis=0) >= 2)
    if not pairable.any():
        return "no unit has two values"
    values = data[:, pairable]
    if np.unique(values[np.isfinite(values)]).size < 2:
        return "only one distinct value was given"
    return None


@dataclass(frozen=True)
class CategoricalResult:
    """Agreement of one rater's labels with pooled human labels."""

    percent_agreement: float
    kappa: float
    alpha: float
    alpha_level: str
    n: int
    n_excluded: int
    #: Paired items whose human majority vote was a tie.
    n_ties: int = 0
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "percent_agreement": _none_if_nan(self.percent_agreement),
            "kappa": _none_if_nan(self.kappa),
            "alpha": _none_if_nan(self.alpha),
            "alpha_level": self.alpha_level,
            "n": self.n,
            "excluded": self.n_excluded,
            "ties": self.n_ties,
            "reason": self.reason,
        }


def categorical_agreement(
    labels: Sequence[RatingValue],
    human: Sequence[RatingValue],
    *,
    level: str = "nominal",
    tied: Sequence[bool] | None = None,
    scale: Scale | None = None,
    kappa_weights: str | None = None,
) -> CategoricalResult:
    """Percent agreement, Cohen's kappa and Krippendorff's alpha of ``labels``
    against ``human`` (pooled labels). ``tied[i]`` marks items whose human label
    came from a tied vote; those among the paired items are counted."""
    if len(labels) != len(human):
        raise ValueError(f"{len(labels)} labels but {len(human)} human labels")
    if tied is not None and len(tied) != len(human):
        raise ValueError(f"{len(tied)} tie flags for {len(human)} human labels")
    keep = [not is_missing(a) and not is_missing(b) for a, b in zip(labels, human)]
    a = [v for v, k in zip(labels, keep) if k]
    b = [v for v, k in zip(human, keep) if k]
    n = len(a)
    n_ties = sum(1 for t, k in zip(tied or (), keep) if t and k)
    if n == 0:
        return CategoricalResult(NAN, NAN, NAN, level, 0, len(keep), n_ties, "no item has both labels")
    kappa = cohen_kappa(a, b, weights=kappa_weights)
    alpha = krippendorff_alpha([a, b], level, scale)
    reason = None
    if math.isnan(kappa) or math.isnan(alpha):
        reason = "only one distinct label was given"
    return CategoricalResult(percent_agreement(a, b), kappa, alpha, level, n, len(keep) - n, n_ties, reason)


def _pairs(a: Sequence[RatingValue], b: Sequence[RatingValue]) -> list[tuple[RatingValue, RatingValue]]:
    if len(a) != len(b):
        raise ValueError(f"{len(a)} labels against {len(b)}")
    return [(x, y) for x, y in zip(a, b) if not is_missing(x) and not is_missing(y)]


def _as_matrix(reliability: Sequence[Sequence[RatingValue]] | np.ndarray, scale: Scale | None) -> np.ndarray:
    if (isinstance(reliability, np.ndarray) and reliability.ndim == 2 and reliability.dtype.kind == "f"
            and (scale is None or scale.is_numeric)):
        # Already numbers, NaN where missing (the ceiling's annotator matrix): what the loop below gives.
        return reliability.astype(np.float64, copy=True)
    rows = [list(r) for r in reliability]
    flat = [v for r in rows for v in r if not is_missing(v)]
    if scale is None and any(isinstance(v, str) for v in flat):
        codes = label_codes(None, flat)
    else:
        codes = label_codes(scale, flat) if scale is not None else {}
    out = np.full((len(rows), max((len(r) for r in rows), default=0)), np.nan)
    for i, row in enumerate(rows):
        for j, v in enumerate(row):
            if not is_missing(v):
                out[i, j] = codes[v] if codes else float(v)
    return out


def _order(value: RatingValue) -> tuple[int, float, str]:
    if isinstance(value, (int, float)):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def _none_if_nan(value: float) -> float | None:
    return None if math.isnan(value) else value
