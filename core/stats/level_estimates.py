"""One evaluator's statistic at a level with its 95% CI and n, and the humans' own (the ceiling).

The CI is a percentile bootstrap over contexts (whole contexts drawn with replacement, so the
responses to one context, which are not independent, stay together); at system level the same
context resamples recompute the system means (systems are not resampled: with few systems a
resample of them says little). Below ``MIN_CONTEXTS`` contexts no CI is given, with the reason.

The ceiling is leave-one-out: each annotator's own ratings taken as an evaluator against the mean of
the other annotators, at the same level and with the same resamples, averaged over the annotators.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .bootstrap import percentile_interval, resample
from .meta_levels import Items, Level, scored
from .small_samples import too_few_contexts

DEFAULT_BOOT = 1000


@dataclass(frozen=True)
class Estimate:
    value: float
    ci: tuple[float, float] | None
    n_items: int
    n_contexts: int
    #: Why the value is undefined, or why it has no CI.
    reason: str | None = None


def _interval(values: np.ndarray, confidence: float) -> tuple[float, float] | None:
    low, high, used = percentile_interval(values, confidence)
    return (low, high) if used else None


def estimate(level: Level, x: np.ndarray, items: Items, *, n_boot: int = DEFAULT_BOOT, seed: int = 0,
             confidence: float = 0.95) -> Estimate:
    """``level``'s statistic of scores ``x`` (NaN: none) on the items they scored, with its CI."""
    keep = scored(x, items)
    sub = items.subset(keep)
    n, k = int(keep.sum()), sub.contexts_present()
    why = level.applies(sub)
    if why:
        return Estimate(math.nan, None, n, k, why)
    value = level.value(x[keep], sub)
    if not math.isfinite(value):
        return Estimate(value, None, n, k, "undefined: the scores or the labels do not vary")
    few = too_few_contexts(k, "for a CI")
    if few or n_boot <= 0:
        return Estimate(value, None, n, k, few)
    weights = resample(items.n_contexts, None, n_boot=n_boot, seed=seed).unit_weights
    return Estimate(value, _interval(level.resampled(x[keep], sub, weights), confidence), n, k)


def annotator_ceiling(level: Level, ratings: np.ndarray, items: Items, *, n_boot: int = DEFAULT_BOOT, seed: int = 0,
                      confidence: float = 0.95) -> Estimate:
    """Leave-one-out ceiling: ``ratings[a, i]`` annotator a's rating of item i (NaN: not rated)."""
    if ratings.shape[0] < 2:
        return Estimate(math.nan, None, 0, 0, "only one annotator: no leave-one-out agreement")
    weights = resample(items.n_contexts, None, n_boot=n_boot, seed=seed).unit_weights if n_boot > 0 else None
    values, resampled = [], []
    covered_items = np.zeros(items.n, dtype=bool)
    for a in range(ratings.shape[0]):
        others = np.delete(ratings, a, axis=0)
        rated = np.isfinite(others).any(axis=0) & np.isfinite(ratings[a])
        mean_others = np.where(rated, _finite_mean(others), np.nan)
        own_items = items.with_human(mean_others).subset(rated)
        if level.applies(own_items):
            continue
        value = level.value(ratings[a][rated], own_items)
        if not math.isfinite(value):
            continue
        covered_items |= rated
        values.append(value)
        if weights is not None:
            resampled.append(level.resampled(ratings[a][rated], own_items, weights))
    n, k = int(covered_items.sum()), items.subset(covered_items).contexts_present()
    if not values:
        return Estimate(math.nan, None, n, k, "no annotator's leave-one-out agreement is defined")
    value = float(np.mean(values))
    few = too_few_contexts(k, "for a CI")
    if few or not resampled:
        return Estimate(value, None, n, k, few)
    pooled = _finite_mean(np.vstack(resampled))
    return Estimate(value, _interval(pooled, confidence), n, k)


def _finite_mean(rows: np.ndarray) -> np.ndarray:
    """Column means over the finite entries (NaN where a column has none)."""
    finite = np.isfinite(rows)
    count = finite.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, np.where(finite, rows, 0.0).sum(axis=0) / count, np.nan)


__all__ = ["DEFAULT_BOOT", "Estimate", "annotator_ceiling", "estimate"]
