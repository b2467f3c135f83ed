"""Seeded bootstrap resampling, vectorised.

A resample is stored as *multiplicities*: how many times each item was drawn.
That one representation serves item resampling and group resampling alike (a
drawn group gives every one of its items the group's multiplicity, so groups
stay whole), and lets every coefficient of all resamples be computed with a few
array operations instead of a Python loop:

* Pearson: weighted sums, O(B*n).
* Spearman: ranks of a resample are weighted ranks (tied copies share the
  average rank), one sort of the data plus cumulative sums, O(B*n).
* Kendall tau-b: with P[i, j] = sign(x_i - x_j) * sign(y_i - y_j), the pair sum
  of a resample with multiplicities w is w @ P @ w / 2, so all resamples are one
  matrix product, O(B*U^2) for U resampled units (items, or groups: the pair
  matrix is first summed into a U x U one). Beyond ``KENDALL_MATRIX_MAX_UNITS``
  units (or ``KENDALL_MATRIX_MAX_ITEMS`` items) that is too big, and only the
  first ``KENDALL_LOOP_MAX_RESAMPLES`` resamples are computed, one by one with
  scipy; ``Coefficient.n_resamples`` shows how many were used. A judge's
  correlation there (core/stats/correlation.py) computes the same values of
  the same resamples with less work: :mod:`.bootstrap_large`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable, Iterator, Sequence

import numpy as np

from .small_samples import expanded_tail, too_few_contexts

#: Above this many resampled units the O(U^2) pair matrices cost more memory and
#: time than looping over resamples with scipy's O(n log n) Kendall (measured:
#: 1000 resamples of 1500 items take about 0.3 s this way, 200 by loop 0.23 s).
KENDALL_MATRIX_MAX_UNITS = 1500
#: The item x item sign matrices are built before they are summed into groups;
#: this bounds their memory (3000^2 float32 = 36 MB each).
KENDALL_MATRIX_MAX_ITEMS = 3000
#: How many resamples the scipy loop does at most (it is the slow path).
KENDALL_LOOP_MAX_RESAMPLES = 200
#: Matrices of resamples x items (or units) are built at most this many cells at a time: the
#: whole 1000 x 100,000 matrix of a 100,000-item dataset would take 800 MB, and several at once
#: several GB. Each resample's coefficient depends on its own row only, so blocks give the
#: same values.
BLOCK_CELLS = 4_000_000


@dataclass(frozen=True)
class Resampling:
    """``n_boot`` bootstrap resamples of ``n_items`` items.

    ``unit_weights[b, u]`` is how often unit ``u`` (an item, or a group of items)
    was drawn in resample ``b``; ``unit_of_item[i]`` is the unit item ``i`` belongs to.
    """

    unit_weights: np.ndarray
    unit_of_item: np.ndarray
    by_group: bool
    #: Results that depend only on these resamples and the human side, shared
    #: by every evaluator scored on the same items (keyed by the human values).
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def n_boot(self) -> int:
        return int(self.unit_weights.shape[0])

    @property
    def n_units(self) -> int:
        return int(self.unit_weights.shape[1])

    @property
    def n_items(self) -> int:
        return int(self.unit_of_item.shape[0])

    @property
    def item_weights(self) -> np.ndarray:
        """(n_boot, n_items) multiplicity of every item in every resample."""
        return self.unit_weights[:, self.unit_of_item]

    def item_weights_of(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` of :attr:`item_weights`, without building the others."""
        return self.unit_weights[start:stop][:, self.unit_of_item]

    def blocks(self) -> Iterator[tuple[int, int]]:
        """(start, stop) of consecutive resamples whose item weights fit in BLOCK_CELLS cells."""
        rows = max(1, BLOCK_CELLS // max(self.n_items, 1))
        for start in range(0, self.n_boot, rows):
            yield start, min(start + rows, self.n_boot)


def unit_index(groups: Sequence[Hashable] | None, n_items: int) -> tuple[np.ndarray, bool]:
    """Number the resampling units: one per item, or one per distinct group id
    (in order of first appearance)."""
    if groups is None:
        return np.arange(n_items), False
    if len(groups) != n_items:
        raise ValueError(f"{len(groups)} group ids for {n_items} items")
    numbers: dict[Hashable, int] = {}
    index = np.fromiter((numbers.setdefault(g, len(numbers)) for g in groups), dtype=np.intp, count=n_items)
    return index, True


def resample(n_items: int, groups: Sequence[Hashable] | None = None, *, n_boot: int, seed: int) -> Resampling:
    """Draw ``n_boot`` resamples: items with replacement, or, when ``groups`` is
    given, whole groups with replacement (as many draws as there are groups)."""
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, not {n_boot}")
    unit_of_item, by_group = unit_index(groups, n_items)
    n_units = int(unit_of_item.max()) + 1 if n_items else 0
    rng = np.random.default_rng(seed)
    counts = np.empty((n_boot, n_units), dtype=np.float64)
    rows = max(1, BLOCK_CELLS // max(n_units, 1))
    # Drawn a block of rows at a time (the generator gives the same numbers as one big draw).
    for start in range(0, n_boot, rows):
        stop = min(start + rows, n_boot)
        draws = rng.integers(0, max(n_units, 1), size=(stop - start, n_units))
        # One bincount over row-offset draws counts every row of the block at once.
        offsets = np.arange(stop - start)[:, None] * n_units
        counts[start:stop] = np.bincount((draws + offsets).ravel(),
                                         minlength=(stop - start) * n_units).reshape(stop - start, n_units)
    return Resampling(counts, unit_of_item, by_group)


# -- weighted coefficients: one value per resample --------------------------------


def weighted_pearson(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Pearson r of every resample. ``x``/``y`` are (n,) or (B, n); NaN where a
    side of the resample is constant."""
    x, y = _standardized(x), _standardized(y)
    total = weights.sum(axis=1)
    if x.ndim == 1 and y.ndim == 1:
        sums = product(weights, np.stack([x, y, x * x, y * y, x * y], axis=1))
        sx, sy, sxx, syy, sxy = sums.T
    else:
        wx, wy = weights * x, weights * y
        sx, sy = wx.sum(axis=1), wy.sum(axis=1)
        sxx, syy = _rowdot(wx, x), _rowdot(wy, y)
        sxy = _rowdot(wx, y)
    with np.errstate(invalid="ignore", divide="ignore"):
        var_x = sxx / total - (sx / total) ** 2
        var_y = syy / total - (sy / total) ** 2
        cov = sxy / total - (sx / total) * (sy / total)
        r = cov / np.sqrt(var_x * var_y)
    # After standardising, a resample that drew a single distinct value has a
    # variance of rounding size only; any real spread is many orders larger.
    r[~(var_x > CONSTANT_VARIANCE) | ~(var_y > CONSTANT_VARIANCE)] = np.nan
    return np.clip(r, -1.0, 1.0)


#: Variance (in units of the data's own variance) below which a resample counts as constant.
CONSTANT_VARIANCE = 1e-12


def _standardized(values: np.ndarray) -> np.ndarray:
    """Centre and scale by the whole data so the sums formula keeps its precision."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return values
    spread = finite.std()
    return (values - finite.mean()) / (spread if spread > 0 else 1.0)


#: Below this inner size a plain loop beats BLAS, whose threads cost more to
#: start than the work itself (badly so when the cores are shared).
BLAS_MIN_INNER = 160


def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for (B, n) x (n, k), done without BLAS where that is faster."""
    if a.shape[1] >= BLAS_MIN_INNER and b.shape[1] >= BLAS_MIN_INNER:
        return a @ b
    return np.einsum("bn,nk->bk", a, b)


def _rowdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("bn,bn->b", a, b)


def _rank_blocks(x: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted ranks, and each resample's weighted sum of squared ranks."""
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    new_block = np.r_[True, sorted_x[1:] != sorted_x[:-1]]
    block_starts = np.flatnonzero(new_block)
    block_of_sorted = np.cumsum(new_block) - 1
    sorted_weights = weights[:, order]
    no_ties = block_starts.size == x.size
    block_weight = sorted_weights if no_ties else np.add.reduceat(sorted_weights, block_starts, axis=1)
    block_rank = np.cumsum(block_weight, axis=1)
    block_rank -= (block_weight - 1.0) / 2.0  # the middle of the block's rank positions
    ranks = np.empty_like(weights, dtype=np.float64)
    ranks[:, order] = block_rank if no_ties else block_rank[:, block_of_sorted]
    return ranks, _rowdot(block_weight, block_rank * block_rank)


def weighted_spearman(x: np.ndarray, y: np.ndarray, weights: np.ndarray,
                      memo: dict[Any, Any] | None = None) -> np.ndarray:
    """Spearman rho of every resample: Pearson r of the weighted ranks, using
    that ranks of T drawn items always have mean (T + 1) / 2. ``memo`` keeps
    the ranks of ``y`` for the next call with the same ``y``; it must belong to
    these weights (``Resampling.memo``)."""
    total = weights.sum(axis=1)
    rank_x, square_x = _rank_blocks(x, weights)
    rank_y, square_y = _remember(memo, ("ranks", y.tobytes()), lambda: _rank_blocks(y, weights))
    mean_rank_squared = ((total + 1.0) / 2.0) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        var_x = square_x / total - mean_rank_squared
        var_y = square_y / total - mean_rank_squared
        cov = _rowdot(weights * rank_x, rank_y) / total - mean_rank_squared
        rho = cov / np.sqrt(var_x * var_y)
    # A constant resample has every rank equal to the mean: zero variance up to rounding.
    limit = CONSTANT_VARIANCE * mean_rank_squared
    rho[~(var_x > limit) | ~(var_y > limit)] = np.nan
    return np.clip(rho, -1.0, 1.0)


def bootstrap_kendall(x: np.ndarray, y: np.ndarray, resampling: Resampling,
                      memo: dict[Any, Any] | None = None) -> np.ndarray:
    """Kendall tau-b of every resample (fewer, via scipy, for very many units)."""
    if resampling.n_units > KENDALL_MATRIX_MAX_UNITS or resampling.n_items > KENDALL_MATRIX_MAX_ITEMS:
        return _kendall_loop(x, y, resampling.item_weights_of(0, KENDALL_LOOP_MAX_RESAMPLES))
    w = resampling.unit_weights.astype(np.float32)

    def quadratic_form(matrix: np.ndarray) -> np.ndarray:
        # float32 is exact here: multiplicities and pair counts are small integers.
        return np.einsum("bu,bu->b", w, product(w, _to_units(matrix, resampling)), dtype=np.float64)

    sign_x = _signs(x)
    sign_y = _remember(memo, ("signs", y.tobytes()), lambda: _signs(y))
    untied_y = _remember(memo, ("untied", y.tobytes()), lambda: quadratic_form(np.abs(sign_y)))
    with np.errstate(invalid="ignore", divide="ignore"):
        denominator = np.sqrt(quadratic_form(np.abs(sign_x)) * untied_y)
        tau = np.where(denominator > 0, quadratic_form(sign_x * sign_y) / denominator, np.nan)
    return np.clip(tau, -1.0, 1.0)


def blockwise_item_coefficients(x: np.ndarray, y: np.ndarray, resampling: Resampling) -> dict[str, np.ndarray]:
    """Pearson and Spearman of every resample, computed BLOCK_CELLS at a time. The memo of the
    human side's ranks (shared by every evaluator) is kept only when one block holds them all:
    for more, it would hold the whole matrix this avoids."""
    blocks = list(resampling.blocks())
    if len(blocks) <= 1:
        weights = resampling.item_weights
        return {"pearson": weighted_pearson(x, y, weights),
                "spearman": weighted_spearman(x, y, weights, resampling.memo)}
    pearson, spearman = [], []
    for start, stop in blocks:
        weights = resampling.item_weights_of(start, stop)
        pearson.append(weighted_pearson(x, y, weights))
        spearman.append(weighted_spearman(x, y, weights))
    return {"pearson": np.concatenate(pearson), "spearman": np.concatenate(spearman)}


def _signs(values: np.ndarray) -> np.ndarray:
    return np.sign(values[:, None] - values[None, :]).astype(np.float32)


def _remember(memo: dict[Any, Any] | None, key: Any, compute: Any) -> Any:
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def _to_units(pair_matrix: np.ndarray, resampling: Resampling) -> np.ndarray:
    """Sum an item x item matrix into unit x unit blocks."""
    if not resampling.by_group:
        return pair_matrix
    order = np.argsort(resampling.unit_of_item, kind="stable")
    sorted_units = resampling.unit_of_item[order]
    starts = np.flatnonzero(np.r_[True, sorted_units[1:] != sorted_units[:-1]])
    blocks = np.add.reduceat(np.add.reduceat(pair_matrix[np.ix_(order, order)], starts, axis=0), starts, axis=1)
    # Units are numbered 0..U-1, so after sorting the blocks are already in unit order.
    return blocks


def unit_sums(resampling: Resampling, values: np.ndarray, column: np.ndarray, n_columns: int) -> np.ndarray:
    """(B, n_columns): for each resample, the sum of ``values`` over the drawn
    items (with multiplicity) falling in each column (a system, say)."""
    per_unit = np.zeros((resampling.n_units, n_columns))
    np.add.at(per_unit, (resampling.unit_of_item, column), values)
    return product(resampling.unit_weights, per_unit)


def _kendall_loop(x: np.ndarray, y: np.ndarray, item_weights: np.ndarray) -> np.ndarray:
    from scipy.stats import kendalltau

    out = np.full(item_weights.shape[0], np.nan)
    for b, w in enumerate(item_weights.astype(np.intp)):
        xs, ys = np.repeat(x, w), np.repeat(y, w)
        if xs.size >= 2 and np.ptp(xs) > 0 and np.ptp(ys) > 0:
            out[b] = kendalltau(xs, ys).statistic
    return out


# -- coefficients of explicit (B, m) matrices (system-level resamples) -------------


def rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return weighted_pearson(x, y, np.ones_like(x))


def rowwise_spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return rowwise_pearson(rankdata(x, axis=1), rankdata(y, axis=1))


def rowwise_kendall(x: np.ndarray, y: np.ndarray, chunk: int = 256) -> np.ndarray:
    """tau-b of each row pair by brute force over the m^2 pairs (m is small: systems)."""
    out = np.empty(x.shape[0])
    for start in range(0, x.shape[0], chunk):
        xs, ys = x[start:start + chunk], y[start:start + chunk]
        sx = np.sign(xs[:, :, None] - xs[:, None, :])
        sy = np.sign(ys[:, :, None] - ys[:, None, :])
        with np.errstate(invalid="ignore", divide="ignore"):
            denominator = np.sqrt(np.abs(sx).sum(axis=(1, 2)) * np.abs(sy).sum(axis=(1, 2)))
            out[start:start + chunk] = np.where(denominator > 0, (sx * sy).sum(axis=(1, 2)) / denominator, np.nan)
    return np.clip(out, -1.0, 1.0)


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float, int]:
    """Percentile CI over the resamples where the coefficient is defined."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return float("nan"), float("nan"), 0
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return float(low), float(high), int(finite.size)


#: Narrower than this, an interval is a rounding artefact (every resample gave the same value).
ZERO_WIDTH = 1e-12


def small_sample_interval(values: np.ndarray, confidence: float, n_units: int,
                          min_units: int | None = None) -> tuple[float, float, int]:
    """The expanded percentile CI (see :mod:`.small_samples`) over the resamples where the coefficient
    is defined; NaN below ``min_units`` (default ``MIN_CONTEXTS``) resampling units, and NaN rather
    than a zero-width interval."""
    finite = values[np.isfinite(values)]
    if finite.size == 0 or too_few_contexts(n_units, minimum=min_units):
        return float("nan"), float("nan"), int(finite.size)
    tail = expanded_tail(confidence, n_units) * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    if not high - low > ZERO_WIDTH:
        return float("nan"), float("nan"), int(finite.size)
    return float(low), float(high), int(finite.size)

