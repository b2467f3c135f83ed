"""The confidence interval of the numeric human ceiling (leave-one-annotator-out r, ρ, τ).

The estimand: the leave-one-out coefficient averaged over the annotators, on infinitely many
contexts rated by the same annotators. It is estimated by the same context bootstrap that gives
the judges' CIs (:mod:`.bootstrap`: whole contexts drawn with replacement, one set of draws
for every annotator), recomputing the leave-one-out ceiling on each resample: each annotator's
values against the mean of the others, item by item, weighted by the item's multiplicity, then
averaged over the annotators defined in that resample, each weighted by its items in the resample
(:mod:`.rater_pairs`). The graded pairwise Spearman between annotators gets its CI from the same
bootstrap (:func:`bootstrap_interval`, used by :mod:`.rater_spearman`). The interval is the expanded percentile
one (:mod:`.small_samples`), and none is shown below ``MIN_CONTEXTS_CEILING`` contexts
(docs/calibration.md, design "loo ceiling": coverage measured by simulation).

Above ``CEILING_CI_MAX_ITEMS`` items the bootstrap runs on a seeded subsample of whole contexts
holding about that many items, its interval re-centred on the full-data ceiling and scaled by
sqrt(m / n) for m of n contexts: the m-out-of-n bootstrap the live CIs use
(:mod:`.running`; Bickel, Götze & van Zwet 1997). ``CeilingInterval.method`` says which was used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Hashable, Sequence

import numpy as np

from . import bootstrap as bs
from .correlation import METHODS
from .small_samples import MIN_CONTEXTS, too_few_contexts

#: Contexts below which the ceiling shows no CI. The judges' floor: in simulation (three
#: annotators, bench/calibration.py --parts loo-ceiling) the expanded interval of the leave-one-out
#: ceiling covered >= 0.926 in every cell from 6 contexts on (docs/calibration.md, 1,000 datasets per cell).
MIN_CONTEXTS_CEILING = MIN_CONTEXTS
#: Items up to which the ceiling's CI is the full bootstrap; above, the m-out-of-n bootstrap. At 100,000
#: items (3 annotators) the CI then adds 0.25x the ceiling's own time and 0.04x one judge's correlation
#: with its CI (``python -m bench.ceiling_cost``); a full bootstrap there would cost far more than the
#: ceiling (Kendall's tau alone falls back to a 200-resample scipy loop per annotator).
#: (Measured before the graded pairwise Spearman's CI joined the ceiling's; with it, one run on the loaded
#: shared machine gave 0.81x and 0.15x: to re-measure on a quiet one.)
CEILING_CI_MAX_ITEMS = 1000

BOOTSTRAP = "bootstrap"


@dataclass(frozen=True)
class CeilingInterval:
    #: (method, low, high) for each coefficient with a CI.
    intervals: tuple[tuple[str, float, float], ...]
    #: Resampled units: contexts (or items when there are none).
    n_units: int
    by_group: bool
    #: "bootstrap", or the m-out-of-n description; None without a CI.
    method: str | None
    #: Why no CI is shown; None when one is.
    reason: str | None


def leave_one_out_sides(values: np.ndarray, annotator: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Annotator's own values and the mean of the others on the items both cover (the others'
    mean over those of them who rated the item), as two aligned arrays, and their item indices."""
    others = np.delete(values, annotator, axis=0)
    covered = np.isfinite(others).any(axis=0) & np.isfinite(values[annotator])
    index = np.flatnonzero(covered)
    others_mean = np.nanmean(others[:, index], axis=0) if index.size else np.empty(0)
    return values[annotator, index], others_mean, index


def resampled_ceiling(values: np.ndarray, annotators: Sequence[int],
                      resampling: bs.Resampling) -> dict[str, np.ndarray]:
    """The leave-one-out ceiling (mean over ``annotators`` weighted by their items) of every resample,
    per coefficient; NaN where no annotator's coefficient is defined in a resample."""
    n_boot = resampling.n_boot
    sums = {m: np.zeros(n_boot) for m in METHODS}
    counts = {m: np.zeros(n_boot) for m in METHODS}
    for a in annotators:
        own, others_mean, index = leave_one_out_sides(values, a)
        if index.size < 2:
            continue
        sub = restricted(resampling, index)
        weights = sub.item_weights
        # The slot counts by its items in this resample, as the point estimate counts by its items.
        slot_weight = weights.sum(axis=1)
        coefficients = {
            "pearson": bs.weighted_pearson(own, others_mean, weights),
            "spearman": bs.weighted_spearman(own, others_mean, weights),
            "kendall": bs.bootstrap_kendall(own, others_mean, sub),
        }
        for m, values_m in coefficients.items():
            # The Kendall loop path computes fewer resamples than asked (see bootstrap.py).
            defined = np.isfinite(values_m)
            sums[m][:values_m.size] += np.where(defined, values_m, 0.0) * slot_weight[:values_m.size]
            counts[m][:values_m.size] += defined * slot_weight[:values_m.size]
            if values_m.size < n_boot:
                counts[m][values_m.size:] = np.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        return {m: np.where(counts[m] > 0, sums[m] / counts[m], np.nan) for m in METHODS}


def restricted(resampling: bs.Resampling, index: np.ndarray) -> bs.Resampling:
    """The same resamples seen on a subset of the items (units renumbered, empty ones dropped)."""
    if index.size == resampling.n_items:
        return resampling
    units, unit_of_item = np.unique(resampling.unit_of_item[index], return_inverse=True)
    return bs.Resampling(resampling.unit_weights[:, units], unit_of_item.ravel(), resampling.by_group)


def ceiling_interval(values: np.ndarray, groups: Sequence[Hashable] | None, annotators: Sequence[int],
                     point: dict[str, float], *, n_boot: int, seed: int, confidence: float) -> CeilingInterval:
    """The CI of the leave-one-out ceiling of the (annotators, items) matrix ``values`` (NaN where an
    annotator did not rate an item); ``annotators``: those whose coefficient is defined on all the
    data, ``point``: the ceiling itself, per coefficient."""
    chosen = list(annotators)
    return bootstrap_interval(values, groups, lambda v, rs: resampled_ceiling(v, chosen, rs),
                              point if chosen else {}, n_boot=n_boot, seed=seed, confidence=confidence)


#: A statistic of the (annotators, items) matrix on every resample: name -> (n_boot,) values.
Resampled = Callable[[np.ndarray, bs.Resampling], dict[str, np.ndarray]]


def bootstrap_interval(values: np.ndarray, groups: Sequence[Hashable] | None, resampled: Resampled,
                       point: dict[str, float], *, n_boot: int, seed: int, confidence: float) -> CeilingInterval:
    """The context-bootstrap CI of each statistic ``resampled`` computes from the (annotators, items)
    matrix ``values``, around ``point`` (name -> value on all the data; empty: nothing to bound).
    Above ``CEILING_CI_MAX_ITEMS`` items, the m-out-of-n bootstrap (module docstring)."""
    n_items = values.shape[1]
    unit_of_item, by_group = bs.unit_index(groups, n_items)
    n_units = int(unit_of_item.max()) + 1 if n_items else 0
    reason = too_few_contexts(n_units, "for a CI", minimum=MIN_CONTEXTS_CEILING)
    if n_boot == 0 or not point or reason:
        return CeilingInterval((), n_units, by_group, None, reason if n_boot and point else None)
    chosen = _subsample_units(unit_of_item, n_units, seed)
    if n_items <= CEILING_CI_MAX_ITEMS or chosen.size == n_units:
        boot = resampled(values, bs.resample(n_items, groups, n_boot=n_boot, seed=seed))
        return _interval(boot, point, confidence, n_units, n_units, by_group, BOOTSTRAP)
    keep = np.isin(unit_of_item, chosen)
    sub_values = values[:, keep]
    sub_units = unit_of_item[keep]
    m_units = int(chosen.size)
    whole = bs.Resampling(np.ones((1, n_units)), sub_units, by_group)
    sub_point = {m: float(v[0]) for m, v in resampled(sub_values, _compact(whole)).items()}
    rs = bs.resample(int(keep.sum()), sub_units.tolist() if by_group else None, n_boot=n_boot, seed=seed)
    boot = resampled(sub_values, rs)
    # Re-centre on the full-data ceiling: shift the subsample's resamples to it, scaled by sqrt(m/n).
    scale = math.sqrt(m_units / n_units)
    shifted = {m: point[m] + (boot[m] - sub_point[m]) * scale for m in point}
    unit = "contexts" if by_group else "items"
    method = (f"m-out-of-n bootstrap: {int(keep.sum())} of {n_items} items ({m_units} of {n_units} {unit}), "
              f"interval scaled by sqrt({m_units}/{n_units})")
    return _interval(shifted, point, confidence, m_units, n_units, by_group, method)


def _compact(resampling: bs.Resampling) -> bs.Resampling:
    units, unit_of_item = np.unique(resampling.unit_of_item, return_inverse=True)
    return bs.Resampling(resampling.unit_weights[:, units], unit_of_item.ravel(), resampling.by_group)


def _subsample_units(unit_of_item: np.ndarray, n_units: int, seed: int) -> np.ndarray:
    """Whole units in a seeded random order, until they hold about ``CEILING_CI_MAX_ITEMS`` items
    (and at least ``MIN_CONTEXTS_CEILING`` units, so that the subsample can have a CI)."""
    order = np.random.default_rng(seed).permutation(n_units)
    held = np.cumsum(np.bincount(unit_of_item, minlength=n_units)[order])
    last = max(int(np.searchsorted(held, CEILING_CI_MAX_ITEMS)), MIN_CONTEXTS_CEILING - 1)
    return np.sort(order[:last + 1])


def _interval(boot: dict[str, np.ndarray], point: dict[str, float], confidence: float,
              resampled_units: int, n_units: int, by_group: bool, method: str) -> CeilingInterval:
    intervals = []
    for m in point:
        if not math.isfinite(point.get(m, math.nan)):
            continue
        low, high, _n = bs.small_sample_interval(boot[m], confidence, resampled_units,
                                                 min_units=MIN_CONTEXTS_CEILING)
        if math.isfinite(low) and math.isfinite(high):
            intervals.append((m, max(-1.0, low), min(1.0, high)))
    return CeilingInterval(tuple(intervals), n_units, by_group, method, None)
