"""Baselines and biases beside an agreement table.

* ``response length``: an evaluator that scores a candidate by its number of
  tokens. A judge that correlates with the humans no better than this row is
  no better than counting words.
* Verbosity bias: the judge's correlation with length beside the humans'
  correlation with length, and the judge's agreement with the humans once
  length is partialled out (first-order partial correlation,
  r_xy.z = (r_xy - r_xz r_yz) / sqrt((1 - r_xz^2)(1 - r_yz^2)); for Spearman
  the same formula on the Spearman coefficients, i.e. on ranks).
* Human certainty: agreement on the items whose annotators agree (spread of
  their ratings, max - min, at most a threshold) and on those where they
  disagree, with n on each side.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..model import Example
from .correlation import CorrelationResult, correlate, degenerate_reason

#: The name of the length baseline's row in every agreement table.
LENGTH_EVALUATOR = "response length"

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def token_count(text: str) -> int:
    """Words and punctuation marks (a CJK character run counts as one \\w+ token)."""
    return len(_TOKEN.findall(text))


def length_scores(examples: Iterable[Example]) -> dict[str, float | None]:
    """Each candidate's token count; dialog-level items (no candidate) get None."""
    return {ex.id: (float(token_count(ex.candidate)) if ex.candidate is not None else None) for ex in examples}


def partial_correlation(r_xy: float, r_xz: float, r_yz: float) -> float:
    """Correlation of x and y with z partialled out (NaN when z explains x or y fully)."""
    denominator = (1.0 - r_xz ** 2) * (1.0 - r_yz ** 2)
    if not denominator > 0:
        return math.nan
    return (r_xy - r_xz * r_yz) / math.sqrt(denominator)


@dataclass(frozen=True)
class LengthBias:
    evaluator: str
    quality: str
    n: int
    #: Spearman and Pearson of the evaluator's scores with length.
    judge_length_rho: float
    judge_length_r: float
    #: ... of the human labels with length.
    human_length_rho: float
    human_length_r: float
    #: Evaluator vs humans, plain and with length partialled out.
    judge_human_rho: float
    partial_rho: float
    judge_human_r: float
    partial_r: float
    reason: str | None = None


def length_bias(scores: Mapping[str, float | None], human: Mapping[str, float | None],
                lengths: Mapping[str, float | None], *, evaluator: str = "", quality: str = "") -> LengthBias:
    """Verbosity bias of one evaluator on the items that have a score, a label and a length."""
    from scipy import stats

    ids = [i for i in human if _ok(human[i]) and _ok(scores.get(i)) and _ok(lengths.get(i))]
    x = np.array([float(scores[i]) for i in ids])  # type: ignore[arg-type]
    y = np.array([float(human[i]) for i in ids])  # type: ignore[arg-type]
    z = np.array([float(lengths[i]) for i in ids])  # type: ignore[arg-type]
    reason = degenerate_reason(x, y, "items") or degenerate_reason(z, y, "items")
    if reason:
        nan = math.nan
        return LengthBias(evaluator, quality, len(ids), nan, nan, nan, nan, nan, nan, nan, nan, reason)
    rho_xy, rho_xz, rho_yz = (float(stats.spearmanr(a, b).statistic) for a, b in ((x, y), (x, z), (y, z)))
    r_xy, r_xz, r_yz = (float(stats.pearsonr(a, b).statistic) for a, b in ((x, y), (x, z), (y, z)))
    return LengthBias(evaluator, quality, len(ids), rho_xz, r_xz, rho_yz, r_yz, rho_xy,
                      partial_correlation(rho_xy, rho_xz, rho_yz), r_xy, partial_correlation(r_xy, r_xz, r_yz))


def annotator_spread(examples: Iterable[Example], quality: str) -> dict[str, float]:
    """max - min of the annotators' numeric ratings of each item rated by at least two."""
    out: dict[str, float] = {}
    for ex in examples:
        rating = ex.ratings.get(quality)
        if rating is None:
            continue
        values = [float(v) for v in rating.present if _ok(v)]  # type: ignore[arg-type]
        if len(values) >= 2:
            out[ex.id] = max(values) - min(values)
    return out


@dataclass(frozen=True)
class CertaintySplit:
    evaluator: str
    quality: str
    #: Items whose annotators' spread is at most this are "agree".
    threshold: float
    agree: CorrelationResult
    disagree: CorrelationResult


def certainty_split(scores: Mapping[str, float | None], human: Mapping[str, float | None],
                    spread: Mapping[str, float], groups: Mapping[str, Hashable], *, threshold: float = 1.0,
                    evaluator: str = "", quality: str = "", n_boot: int = 1000, seed: int = 0) -> CertaintySplit:
    """The evaluator's correlation with the humans on items with spread <= threshold and > threshold."""
    def side(ids: Sequence[str]) -> CorrelationResult:
        return correlate([scores.get(i) for i in ids], [human[i] for i in ids], [groups.get(i, i) for i in ids],
                         n_boot=n_boot, seed=seed)

    rated = [i for i in human if i in spread]
    return CertaintySplit(evaluator, quality, threshold, side([i for i in rated if spread[i] <= threshold]),
                          side([i for i in rated if spread[i] > threshold]))


def _ok(value: object) -> bool:
    if value is None:
        return False
    try:
        return math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
