"""An exact randomization test of "A and B agree equally well with the humans", over contexts.

Under the null hypothesis the two evaluators are exchangeable: within any context,
A's scores could as well have been B's. Swapping A and B within each context
(both sides of every candidate of the context at once, so the candidates of a
context stay together) gives 2^k equally likely assignments for k contexts; the
p-value is the share of them whose |Δ| is at least the observed one. Deutsch,
Dror & Roth ("A Statistical Analysis of Summarization Evaluation Metrics using
Resampling Methods", TACL 2021) recommend this permutation test for comparing
two metrics' correlations with humans.

* Up to ``EXACT_MAX_CONTEXTS`` contexts every assignment is enumerated (the test is
  exact: with k contexts its smallest two-sided p is 2 / 2^k, so 3 contexts can never
  give less than 0.25). Beyond, ``n_draws`` random assignments are drawn (seeded)
  and p = (1 + extreme draws) / (1 + n_draws).
* The scores are swapped as they are (raw) and every coefficient is recomputed on the
  mixed columns, so the test is exact: under H0 the data are exchangeable within a
  context, the set of 2^k assignments is the same from any of them, and so is the
  p-value (``tests/core/test_stats_randomization.py`` checks this). Making the two
  sides comparable first (each side z-scored or ranked on its own, as an earlier
  version did) is not swap-invariant, because a side's ranks depend on its other
  contexts: in simulation that test claimed a difference between equally good judges
  in 6.2% of datasets at 10 contexts x 6 candidates (nominal 5%; docs/calibration.md).
  Pearson's and Spearman's coefficients are invariant to one affine or monotone map
  applied to both sides, so nothing is lost where the two share a scale. Where their
  scales differ (a 1-5 rating against a p(yes)), a swapped context carries its scale
  with it, the swapped assignments spread wider and the test is conservative: it
  claims a difference less often, never more (``bench/null_comparisons.py`` measures
  both cases on USR Topical-Chat).
* Pearson and Spearman are computed row by row for all assignments (Pearson from
  per-context sums), Kendall's tau-b as quadratic forms of context-block concordance
  matrices (one per pair of sides), so all 2^k assignments cost one small matrix
  product.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import bootstrap as bs

#: Contexts up to which all 2^k swap assignments are enumerated (4,096 at 12).
EXACT_MAX_CONTEXTS = 12
#: Random assignments beyond that (Deutsch et al. drew 1,000; the Monte-Carlo error of a p-value near
#: 0.05 is then about 0.007).
DEFAULT_DRAWS = 1000
#: Items up to which Kendall's context-block matrices are built (n^2 float32 each).
KENDALL_MAX_ITEMS = 3000
#: Items x assignments computed at once (memory bound).
_CHUNK_CELLS = 2_000_000


@dataclass(frozen=True)
class RandomizationTest:
    """The two-sided p-value of H0: Δ = 0 by swapping A and B within contexts."""

    p_value: float
    n_contexts: int
    #: Assignments evaluated: 2^k when exact, else the random draws.
    n_assignments: int
    exact: bool

    @property
    def description(self) -> str:
        if self.exact:
            return f"exact randomization test over {self.n_contexts} contexts, all {self.n_assignments:,} swaps of A and B"
        return f"randomization test over {self.n_contexts} contexts, {self.n_assignments:,} random swaps of A and B"

    @property
    def smallest_possible_p(self) -> float:
        return 2.0 / self.n_assignments if self.exact else 1.0 / (self.n_assignments + 1)


def randomization_test(method: str, x_a: np.ndarray, x_b: np.ndarray, y: np.ndarray, units: np.ndarray, *,
                       n_draws: int = DEFAULT_DRAWS, seed: int = 0,
                       exact_max_contexts: int = EXACT_MAX_CONTEXTS) -> RandomizationTest:
    """``units[i]`` numbers item i's context 0..k-1; ``x_a``/``x_b`` are the two evaluators' scores
    and ``y`` the human labels of the same items."""
    k = int(units.max()) + 1 if units.size else 0
    exact = k <= exact_max_contexts
    if exact:
        assignments = ((np.arange(2 ** k)[:, None] >> np.arange(k)[None, :]) & 1).astype(bool)
    else:
        rng = np.random.default_rng(seed)
        assignments = np.vstack([np.zeros((1, k), dtype=bool), rng.random((n_draws, k)) < 0.5])
    a, b = _pooled_standardised(np.asarray(x_a, dtype=float), np.asarray(x_b, dtype=float))
    deltas = _deltas(method, a, b, y, units, assignments)
    observed = deltas[0]
    if not math.isfinite(observed):
        return RandomizationTest(float("nan"), k, int(assignments.shape[0] - (0 if exact else 1)), exact)
    # An undefined coefficient counts as extreme (the conservative side); a relative tolerance keeps an
    # assignment equal to the observed one (the full swap gives exactly -Δ) from missing by rounding.
    extreme = ~(np.abs(deltas) < abs(observed) - 1e-12 * max(1.0, abs(observed)))
    if exact:
        return RandomizationTest(float(extreme.sum() / extreme.size), k, int(extreme.size), True)
    return RandomizationTest(float((extreme[1:].sum() + 1) / (n_draws + 1)), k, n_draws, False)


def _pooled_standardised(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both sides centred and scaled by the mean and sd of all their scores together: one map for
    both, which swapping does not change (so the test stays exact), and which keeps Pearson's
    per-context sums from losing digits on large scores. No coefficient changes."""
    pooled = np.concatenate([a, b])
    spread = pooled.std()
    scale = spread if spread > 0 else 1.0
    return (a - pooled.mean()) / scale, (b - pooled.mean()) / scale


def _deltas(method: str, a: np.ndarray, b: np.ndarray, y: np.ndarray, units: np.ndarray,
            assignments: np.ndarray) -> np.ndarray:
    """Δ = coefficient(B') - coefficient(A') for every assignment (row: True = context swapped)."""
    if method == "kendall":
        return _kendall_deltas(a, b, y, units, assignments)
    if method == "pearson":
        return _pearson_deltas(a, b, y, units, assignments)
    out = np.empty(assignments.shape[0])
    chunk = max(1, _CHUNK_CELLS // max(1, a.size))
    rank_y = None
    if method == "spearman":
        from scipy.stats import rankdata

        rank_y = rankdata(y)
    for start in range(0, assignments.shape[0], chunk):
        swapped = assignments[start:start + chunk][:, units]
        mixed_a, mixed_b = np.where(swapped, b, a), np.where(swapped, a, b)
        if method == "spearman":
            from scipy.stats import rankdata

            assert rank_y is not None
            ry = _tile(rank_y, mixed_a)
            out[start:start + chunk] = bs.rowwise_pearson(rankdata(mixed_b, axis=1), ry) - \
                bs.rowwise_pearson(rankdata(mixed_a, axis=1), ry)
        else:
            raise ValueError(f"unknown correlation {method!r}")
    return out


def _pearson_deltas(a: np.ndarray, b: np.ndarray, y: np.ndarray, units: np.ndarray,
                    assignments: np.ndarray) -> np.ndarray:
    """Pearson r of the mixed columns from per-context sums: every sum over items is a sum over
    contexts of either A's or B's context sum, so each assignment costs O(k), not O(n)."""
    k = assignments.shape[1]
    y = (y - y.mean()) / (y.std() if y.std() > 0 else 1.0)

    def per_context(values: np.ndarray) -> np.ndarray:
        return np.bincount(units, weights=values, minlength=k)

    sums = {side: (per_context(x), per_context(x * x), per_context(x * y)) for side, x in (("a", a), ("b", b))}
    n = float(a.size)
    syy = float((y * y).sum()) - float(y.sum()) ** 2 / n
    sy = float(y.sum())
    swapped = assignments.astype(np.float64)
    kept = 1.0 - swapped

    def pearson(own: np.ndarray, other: np.ndarray) -> np.ndarray:
        # ``own`` weights A's context sums, ``other`` B's.
        sx, sxx, sxy = (own @ sums["a"][i] + other @ sums["b"][i] for i in range(3))
        with np.errstate(invalid="ignore", divide="ignore"):
            return (sxy - sx * sy / n) / np.sqrt((sxx - sx * sx / n) * syy)

    return pearson(swapped, kept) - pearson(kept, swapped)


def _tile(values: np.ndarray, like: np.ndarray) -> np.ndarray:
    return np.broadcast_to(values, like.shape)


def _kendall_deltas(a: np.ndarray, b: np.ndarray, y: np.ndarray, units: np.ndarray,
                    assignments: np.ndarray) -> np.ndarray:
    """tau-b of the mixed columns: with s_u the side context u takes (0 = own, 1 = swapped), the
    concordance sum is sum_{u,v} C[s_u, s_v][u, v], C[s, t] the context-block sums of
    sign(x^s_i - x^t_j) sign(y_i - y_j); the ties term likewise with |sign|."""
    if a.size > KENDALL_MAX_ITEMS:
        return np.full(assignments.shape[0], np.nan)
    k = assignments.shape[1]
    sign_y = np.sign(y[:, None] - y[None, :]).astype(np.float32)
    untied_y = float(np.abs(sign_y).sum())
    sides = (a, b)
    concordance, untied = {}, {}
    for s in (0, 1):
        for t in (0, 1):
            sign_x = np.sign(sides[s][:, None] - sides[t][None, :]).astype(np.float32)
            concordance[s, t] = _blocks(sign_x * sign_y, units, k)
            untied[s, t] = _blocks(np.abs(sign_x), units, k)
    swapped = assignments.astype(np.float64)
    kept = 1.0 - swapped

    def quadratic(matrices: dict[tuple[int, int], np.ndarray], first: np.ndarray, second: np.ndarray) -> np.ndarray:
        # Side 0 of a context is "first" (its own evaluator's scores) where the context is not swapped.
        total = np.zeros(first.shape[0])
        for s, left in ((0, first), (1, second)):
            for t, right in ((0, first), (1, second)):
                total += np.einsum("pu,pu->p", left, bs.product(right, matrices[s, t].T))
        return total

    with np.errstate(invalid="ignore", divide="ignore"):
        # A' takes A's scores (side 0) where kept, B's (side 1) where swapped; B' the opposite.
        tau_a = quadratic(concordance, kept, swapped) / np.sqrt(quadratic(untied, kept, swapped) * untied_y)
        tau_b = quadratic(concordance, swapped, kept) / np.sqrt(quadratic(untied, swapped, kept) * untied_y)
    return tau_b - tau_a


def _blocks(matrix: np.ndarray, units: np.ndarray, k: int) -> np.ndarray:
    """Sum an item x item matrix into context x context blocks."""
    order = np.argsort(units, kind="stable")
    sorted_units = units[order]
    starts = np.flatnonzero(np.r_[True, sorted_units[1:] != sorted_units[:-1]])
    ordered = matrix[np.ix_(order, order)].astype(np.float64)
    # Units are numbered 0..k-1 and each has an item, so the blocks come out in unit order.
    return np.add.reduceat(np.add.reduceat(ordered, starts, axis=0), starts, axis=1)
