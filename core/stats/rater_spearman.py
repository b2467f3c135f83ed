"""Graded pairwise Spearman between annotators, with its CI: the ceiling statistic many papers quote.

For every annotator pair sharing at least ``MIN_SHARED_ITEMS`` items (:mod:`.rater_pairs`),
Spearman's ρ on the items both rated (scipy's, ties averaged); the figure is their mean weighted by
the shared items. Its CI is the context bootstrap of the leave-one-out ceiling's
(:func:`.ceiling_ci.bootstrap_interval`): whole contexts drawn with replacement, one set of draws
for every pair, each pair's ρ recomputed on the resample's items (weighted by their multiplicity)
and the pairs averaged weighted by their items in the resample; the expanded percentile interval,
none below ``MIN_CONTEXTS_CEILING`` contexts. Its coverage is measured by simulation
(``python -m bench.calibration --parts loo-ceiling``, docs/calibration.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Sequence

import numpy as np

from . import bootstrap as bs
from .ceiling_ci import CeilingInterval, bootstrap_interval, restricted
from .correlation import degenerate_reason
from .rater_pairs import MIN_SHARED_ITEMS, NAN, Pooled, RaterPair, pool_pairs, shared_pairs

SPEARMAN = "spearman"


@dataclass(frozen=True)
class PairwiseSpearman:
    """Spearman's ρ between annotators, averaged over pairs weighted by their shared items."""

    pooled: Pooled
    #: Every pair sharing at least the minimum of items, with its own ρ (NaN: one of them constant there).
    pairs: tuple[RaterPair, ...]
    interval: CeilingInterval | None = None

    @property
    def value(self) -> float:
        return self.pooled.value

    def ci(self) -> tuple[float, float]:
        for _name, low, high in self.interval.intervals if self.interval is not None else ():
            return low, high
        return NAN, NAN

    @property
    def ci_reason(self) -> str | None:
        return self.interval.reason if self.interval is not None else None

    def to_dict(self) -> dict[str, object]:
        low, high = self.ci()
        return {**self.pooled.to_dict(), "lo": None if math.isnan(low) else low,
                "hi": None if math.isnan(high) else high,
                "ci_method": self.interval.method if self.interval is not None else None,
                "ci_reason": self.ci_reason,
                "pairs": [{"annotators": [p.first, p.second], "n": p.n,
                           "spearman": None if math.isnan(p.value) else p.value} for p in self.pairs]}


def pairwise_spearman(values: np.ndarray, names: Sequence[str], groups: Sequence[Hashable] | None, *,
                      n_boot: int, seed: int, confidence: float,
                      min_shared_items: int = MIN_SHARED_ITEMS) -> PairwiseSpearman:
    """The graded pairwise Spearman of the (annotators, items) matrix ``values`` (NaN where an annotator
    did not rate an item); ``groups``: each item's context, the bootstrap's unit (None: items); pairs
    count from ``min_shared_items`` shared items."""
    from scipy import stats

    pairs, left_out = shared_pairs(values, min_shared_items)
    figures = []
    for a, b, index in pairs:
        x, y = values[a, index], values[b, index]
        rho = NAN if degenerate_reason(x, y, "items") else float(stats.spearmanr(x, y).statistic)
        figures.append((a, b, index, rho))
    pooled, listed = pool_pairs(names, figures, left_out)
    if n_boot == 0 or math.isnan(pooled.value):
        return PairwiseSpearman(pooled, listed)
    defined = [(a, b) for a, b, _index, rho in figures if not math.isnan(rho)]
    interval = bootstrap_interval(values, groups, lambda v, rs: {SPEARMAN: resampled_pairwise(v, defined, rs)},
                                  {SPEARMAN: pooled.value}, n_boot=n_boot, seed=seed, confidence=confidence)
    return PairwiseSpearman(pooled, listed, interval)


def resampled_pairwise(values: np.ndarray, pairs: Sequence[tuple[int, int]], resampling: bs.Resampling) -> np.ndarray:
    """The pairs' mean ρ, weighted by their items, in every resample; NaN where no pair's ρ is defined."""
    sums = np.zeros(resampling.n_boot)
    weights = np.zeros(resampling.n_boot)
    for a, b in pairs:
        index = np.flatnonzero(np.isfinite(values[a]) & np.isfinite(values[b]))
        if index.size < 2:
            continue
        item_weights = restricted(resampling, index).item_weights
        rho = bs.weighted_spearman(values[a, index], values[b, index], item_weights)
        defined = np.isfinite(rho)
        pair_weight = item_weights.sum(axis=1) * defined
        sums += np.where(defined, rho, 0.0) * pair_weight
        weights += pair_weight
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(weights > 0, sums / weights, np.nan)
