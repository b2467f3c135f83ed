"""The bootstrap of Pearson r, Spearman rho and Kendall tau-b on many items (10^4 to 10^6), exactly.

:mod:`.bootstrap` builds each resample's item multiplicities and sorts both sides again for every
block of resamples; on 100,000 items that is most of an export's time. Here the same coefficients of
the same resamples are computed with less work, and no approximation:

* Pearson r needs only weighted sums, and the items of one resampled unit (a context) share its
  multiplicity: the sums are taken per unit once, then one (resamples x units) product.
* Spearman rho: the data are sorted once by ``x``; a block of resamples gathers the multiplicities in
  that order, and the weighted ranks are cumulative sums (tied copies share the average rank), as in
  :func:`.bootstrap.weighted_spearman`. The other side has few distinct values as a rule (pooled human
  labels): its ranks are computed per value, from the drawn weight of each value.
* Kendall tau-b: its numerator sum_ij w_i w_j sign(x_i - x_j) sign(y_i - y_j) is split by the
  distinct values of the side with fewer of them (``levels``), halving the range of levels at each
  step: the pairs across the halves are counted with one cumulative sum along the other side's order,
  the pairs within each half recursively. O(B n log L) for L levels instead of O(B n^2), and exact:
  every count is an integer held exactly in float64 (below 2^53).

Multiplicities are integers and ranks half-integers, so the rank sums are exact whatever the order of
the additions, and Spearman's and Kendall's values equal those of :mod:`.bootstrap` (Kendall's those of
scipy's ``kendalltau`` on the expanded resample) up to the rounding of the final division; Pearson's
sums are added in another order and agree to about 1e-15. tests/core/test_stats_bootstrap_large.py
checks all three against the plain computations.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import bootstrap as bs

#: Resamples are taken this many (resample, item) cells at a time: the few arrays of a block then stay in
#: the processor's cache between the passes over them (measured at 100,000 items: 2x faster
#: than blocks of ``bootstrap.BLOCK_CELLS``; 8 MB an array).
CACHE_CELLS = 1 << 20


#: Distinct values of the sparser side up to which Kendall's pairs are counted by halving its levels
#: (a recursion this deep in Python per block); above, scipy on each expanded resample, as before.
KENDALL_MAX_LEVELS = 128


def item_coefficients(x: np.ndarray, y: np.ndarray, resampling: bs.Resampling,
                      kendall_resamples: int | None = None) -> dict[str, np.ndarray]:
    """Pearson, Spearman and Kendall tau-b of every resample of the paired items ``x``, ``y``;
    Kendall of the first ``kendall_resamples`` only (all when None)."""
    n_boot = resampling.n_boot
    n_kendall = n_boot if kendall_resamples is None else min(kendall_resamples, n_boot)
    pearson = unit_pearson(x, y, resampling)
    # Kendall splits by the side with fewer distinct values and sorts by the other; Spearman is
    # symmetric too, so both use that orientation.
    if np.unique(x).size < np.unique(y).size:
        x, y = y, x
    sides = _Sides(x, y, resampling.unit_of_item)
    level_weights = resampling.unit_weights @ sides.unit_levels  # (B, L): exact, integer counts
    spearman = np.empty(n_boot)
    kendall = np.empty(n_kendall)
    rows = max(1, CACHE_CELLS // max(x.size, 1))
    buffers = (np.empty((rows, sides.n_blocks)), np.empty((rows, sides.n_blocks)))
    for start in range(0, n_boot, rows):
        stop = min(start + rows, n_boot)
        # np.take: a C-ordered result (fancy indexing of columns gives Fortran order, 3x slower to sum along).
        weights = np.take(resampling.unit_weights[start:stop], sides.unit_of_sorted, axis=1)  # (b, n), x order
        block_weight = weights if sides.x_starts is None else np.add.reduceat(weights, sides.x_starts, axis=1)
        spearman[start:stop] = _spearman(weights, block_weight, level_weights[start:stop], sides, buffers)
        if start < n_kendall and sides.n_levels <= KENDALL_MAX_LEVELS:
            end = min(stop, n_kendall)
            kendall[start:end] = _kendall(weights[:end - start], block_weight[:end - start],
                                          level_weights[start:end], sides)
    if sides.n_levels > KENDALL_MAX_LEVELS:
        kendall = bs._kendall_loop(x, y, np.take(resampling.unit_weights[:n_kendall], resampling.unit_of_item, axis=1))
    return {"pearson": pearson, "spearman": spearman, "kendall": kendall}


def unit_pearson(x: np.ndarray, y: np.ndarray, resampling: bs.Resampling) -> np.ndarray:
    """:func:`.bootstrap.weighted_pearson` of the resamples' item weights, from per-unit sums."""
    xs, ys = bs._standardized(x), bs._standardized(y)
    columns = np.stack([np.ones_like(xs), xs, ys, xs * xs, ys * ys, xs * ys], axis=1)
    per_unit = np.zeros((resampling.n_units, columns.shape[1]))
    np.add.at(per_unit, resampling.unit_of_item, columns)
    total, sx, sy, sxx, syy, sxy = (resampling.unit_weights @ per_unit).T
    with np.errstate(invalid="ignore", divide="ignore"):
        var_x = sxx / total - (sx / total) ** 2
        var_y = syy / total - (sy / total) ** 2
        cov = sxy / total - (sx / total) * (sy / total)
        r = cov / np.sqrt(var_x * var_y)
    r[~(var_x > bs.CONSTANT_VARIANCE) | ~(var_y > bs.CONSTANT_VARIANCE)] = np.nan
    return np.clip(r, -1.0, 1.0)


class _Sides:
    """The data sorted once by ``x``, and ``y`` as level codes (its distinct values, ascending)."""

    def __init__(self, x: np.ndarray, y: np.ndarray, unit_of_item: np.ndarray) -> None:
        order = np.argsort(x, kind="stable")
        sorted_x = x[order]
        new_block = np.r_[True, sorted_x[1:] != sorted_x[:-1]]
        #: Column where each run of equal x starts (None: no ties in x).
        self.x_starts = None if new_block.all() else np.flatnonzero(new_block)
        #: The x block of each sorted item (its run of equal x values).
        self.x_block = np.cumsum(new_block) - 1
        #: Distinct values of x.
        self.n_blocks = int(self.x_block[-1]) + 1 if x.size else 0
        self.unit_of_sorted = unit_of_item[order]
        _values, codes = np.unique(y, return_inverse=True)
        self.n_levels = int(_values.size)
        #: y's level of each item, in x order.
        self.level = codes.ravel()[order]
        #: (U, L): how many items of each unit have each level.
        self.unit_levels = np.zeros((int(unit_of_item.max()) + 1 if x.size else 0, self.n_levels))
        np.add.at(self.unit_levels, (unit_of_item, codes.ravel()), 1.0)

    @cached_property
    def kendall_plan(self) -> _Split | None:
        return _plan(np.arange(self.level.size), self, 0, self.n_levels)


def _average_ranks(block_weight: np.ndarray, out: np.ndarray | None = None,
                   scratch: np.ndarray | None = None) -> np.ndarray:
    """Each block's average rank among the drawn copies, cumsum - (w - 1) / 2 (as
    :func:`.bootstrap._rank_blocks`: half-integers, exact). ``out`` and ``scratch``: buffers of
    ``block_weight``'s shape to reuse (fresh arrays of 10^6 cells cost their page faults)."""
    rank = np.cumsum(block_weight, axis=1, out=out)
    half = np.multiply(block_weight, 0.5, out=scratch)
    rank -= half
    rank += 0.5
    return rank


def _spearman(weights: np.ndarray, block_weight: np.ndarray, level_weights: np.ndarray, sides: _Sides,
              buffers: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """:func:`.bootstrap.weighted_spearman` of one block of resamples."""
    total = level_weights.sum(axis=1)
    ranks, scratch = (b[:block_weight.shape[0], :block_weight.shape[1]] for b in buffers)
    rank_x = _average_ranks(block_weight, ranks, scratch)
    weighted_rank_x = np.multiply(block_weight, rank_x, out=scratch)
    square_x = bs._rowdot(weighted_rank_x, rank_x)
    rank_y = _average_ranks(level_weights)
    square_y = bs._rowdot(level_weights, rank_y * rank_y)
    if sides.x_starts is not None:
        weighted_rank_x = weights * np.take(rank_x, sides.x_block, axis=1)
    # sum_i w_i rank_x(i) rank_y(i), rank_y read per item from its level (faster than a product with
    # the one-hot levels, and on one core).
    cross = bs._rowdot(weighted_rank_x, np.take(rank_y, sides.level, axis=1))
    mean_rank_squared = ((total + 1.0) / 2.0) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        var_x = square_x / total - mean_rank_squared
        var_y = square_y / total - mean_rank_squared
        cov = cross / total - mean_rank_squared
        rho = cov / np.sqrt(var_x * var_y)
    limit = bs.CONSTANT_VARIANCE * mean_rank_squared
    rho[~(var_x > limit) | ~(var_y > limit)] = np.nan
    return np.clip(rho, -1.0, 1.0)


def _kendall(weights: np.ndarray, block_weight: np.ndarray, level_weights: np.ndarray, sides: _Sides) -> np.ndarray:
    """Kendall tau-b of one block of resamples: the concordant minus discordant pairs of drawn copies
    over the square root of the pairs untied in x times those untied in y (all over ordered pairs)."""
    total = level_weights.sum(axis=1)
    squared = total * total
    untied_x = squared - bs._rowdot(block_weight, block_weight)
    untied_y = squared - bs._rowdot(level_weights, level_weights)
    numerator = 2.0 * _cross_pairs(weights, sides.kendall_plan)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where((untied_x > 0) & (untied_y > 0), numerator / np.sqrt(untied_x * untied_y), np.nan)
    return np.clip(tau, -1.0, 1.0)


@dataclass(frozen=True)
class _Split:
    """One step of Kendall's count: the columns of a node (x order) whose levels lie in [low, high),
    split at the middle level. ``lower``/``upper``: the positions of the two halves among the node's
    columns; ``before``/``through``: for each upper column, how many lower columns have a smaller x,
    and a smaller or equal one (None without ties in x: the same)."""

    lower: np.ndarray
    upper: np.ndarray
    before: np.ndarray
    through: np.ndarray | None
    lower_split: _Split | None
    upper_split: _Split | None


def _plan(columns: np.ndarray, sides: _Sides, low: int, high: int) -> _Split | None:
    """The splits of ``columns`` (levels in [low, high)) down to single levels: the same for every block
    of resamples, so made once."""
    if high - low < 2 or columns.size < 2:
        return None
    middle = (low + high) // 2
    is_low = sides.level[columns] < middle
    lower, upper = np.flatnonzero(is_low), np.flatnonzero(~is_low)
    lower_blocks, upper_blocks = sides.x_block[columns[lower]], sides.x_block[columns[upper]]
    before = np.searchsorted(lower_blocks, upper_blocks, side="left")
    through = None if sides.x_starts is None else np.searchsorted(lower_blocks, upper_blocks, side="right")
    return _Split(lower, upper, before, through, _plan(columns[lower], sides, low, middle),
                  _plan(columns[upper], sides, middle, high))


def _cross_pairs(weights: np.ndarray, split: _Split | None) -> np.ndarray:
    """sum over pairs i, j of a node's columns (``weights`` their multiplicities) with level_i < level_j
    of w_i w_j sign(x_j - x_i): the pairs across the lower and upper half of its levels, then those
    within each half."""
    if split is None:
        return np.zeros(weights.shape[0])
    lower_weights, upper_weights = np.take(weights, split.lower, axis=1), np.take(weights, split.upper, axis=1)
    # Lower-half copies up to each lower column, after a zero: below[:, k] is the weight of the first k.
    below = np.zeros((weights.shape[0], split.lower.size + 1))
    np.cumsum(lower_weights, axis=1, out=below[:, 1:])
    # For an upper item j: the lower copies with x < x_j count +1, those with x > x_j -1, those tied with
    # it in x 0; i.e. w_j * (before_j + through_j - all), through_j counting those with x <= x_j.
    before = np.take(below, split.before, axis=1)
    through = before if split.through is None else np.take(below, split.through, axis=1)
    across = bs._rowdot(upper_weights, before + through) - below[:, -1] * upper_weights.sum(axis=1)
    return across + _cross_pairs(lower_weights, split.lower_split) + _cross_pairs(upper_weights, split.upper_split)
