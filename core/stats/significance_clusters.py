"""Many evaluators ranked into significance clusters: which are really better, which are tied.

* **The test of a pair**: a paired permutation test over contexts (Deutsch, Dror & Roth, "A
  Statistical Analysis of Summarization Evaluation Metrics using Resampling Methods", TACL 2021):
  on the items both evaluators scored, each context's scores of the two are swapped (all of the
  context's responses at once, so the responses to a context stay together; for a Pearson statistic
  each side z-scored on those items first, as Deutsch et al. standardise metrics, so that evaluators on
  different scales are swapped on one footing), and the two-sided
  p-value is the share of assignments whose |Δ| reaches the observed one. With k contexts there are
  2^k assignments; up to ``exact_limit`` they are all enumerated (the smallest p is then 2 / 2^k),
  beyond it N random ones are drawn (seeded) and p = (1 + extreme) / (1 + N), which is valid at any N.
* **Enough permutations for the family**: with m pairs, Holm's first threshold is α / m; N is at
  least ``PERMUTATIONS_PER_THRESHOLD`` · m / α (and ``MIN_PERMUTATIONS``), so a p-value can fall to a
  tenth of that threshold.
* **Family-wise error control**: Holm's step-down adjustment over all m pairs (Holm 1979), which
  holds the chance of any false "different" at α whatever the dependence between the tests.
* **The cluster rule** (mt-metrics-eval's greedy rule): walk the evaluators from the best statistic
  down; the first opens cluster 1; each next one joins the current cluster unless it is significantly
  worse (Holm-adjusted p < α, and below on the statistic) than some member of that cluster, in which
  case it opens the next cluster. "Not significantly different" is not transitive, so a cluster is
  defined by this walk, not by a partition into mutually indistinguishable sets: two members of one
  cluster may differ significantly.
* **The floor**: when no pair can reach Holm's first threshold (too few contexts for an exact test to
  give so small a p), no clusters are given, with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .meta_levels import Items, Level, scored

ALPHA = 0.05
MIN_PERMUTATIONS = 1000
#: N ≥ this · m / α: the smallest Monte-Carlo p reaches a tenth of Holm's first threshold α / m.
PERMUTATIONS_PER_THRESHOLD = 10
#: Contexts up to which all 2^k swaps are enumerated (or more, while 2^k ≤ N).
EXACT_LIMIT = 12
#: Swap assignments x contexts evaluated at once (memory bound).
CHUNK_CELLS = 2_000_000

TEST_TEXT = ("paired permutation test over contexts (Deutsch, Dror & Roth, TACL 2021): each context's scores of "
             "the two evaluators (z-scored, for Pearson) swapped together, on the items both scored")
CONTROL_TEXT = "Holm's step-down adjustment over all pairs (family-wise error at {alpha:g})"
RULE_TEXT = ("greedy rule of mt-metrics-eval: walking down the ranking, an evaluator opens a new cluster when it is "
             "significantly worse than some member of the current cluster")


@dataclass(frozen=True)
class PairTest:
    """Evaluator ``a`` against ``b`` (indices into the columns) on the items both scored."""

    a: int
    b: int
    #: statistic(b) − statistic(a) on those items.
    delta: float
    p_value: float
    adjusted_p: float
    n_items: int
    n_contexts: int
    n_assignments: int
    exact: bool
    #: Why the pair has no test (too few shared items); None when it has one.
    reason: str | None = None

    @property
    def smallest_p(self) -> float:
        if self.n_assignments == 0:
            return 1.0
        return 2.0 / self.n_assignments if self.exact else 1.0 / (self.n_assignments + 1)


@dataclass(frozen=True)
class Clustering:
    """Cluster numbers (1 = best) per column, None where the column is unranked or no clusters are given."""

    clusters: tuple[int | None, ...]
    #: Column indices from the best statistic down (columns with a statistic only).
    order: tuple[int, ...]
    tests: tuple[PairTest, ...]
    alpha: float
    permutations: int
    #: Why there are no clusters (the floor), or None.
    reason: str | None = None
    #: The pair test, named under the table.
    test_text: str = TEST_TEXT
    #: What the test swaps (contexts, or prompts).
    units: str = "contexts"

    def test_of(self, a: int, b: int) -> PairTest | None:
        for t in self.tests:
            if {t.a, t.b} == {a, b}:
                return t
        return None

    @property
    def method_lines(self) -> list[str]:
        lines = [f"significance: {self.test_text}; {self.permutations:,} random swaps per pair unless all 2^k are "
                 f"enumerated (k ≤ {EXACT_LIMIT} {self.units} or 2^k ≤ that number)",
                 "multiplicity: " + CONTROL_TEXT.format(alpha=self.alpha)
                 + f", {len(self.tests)} pair{'s' if len(self.tests) != 1 else ''}",
                 "clusters: " + RULE_TEXT]
        if self.reason:
            lines.append("no clusters: " + self.reason)
        return lines


def permutations_for(n_pairs: int, alpha: float = ALPHA) -> int:
    """Random swaps per pair for a family of ``n_pairs`` tests (see the module doc)."""
    return max(MIN_PERMUTATIONS, math.ceil(PERMUTATIONS_PER_THRESHOLD * max(n_pairs, 1) / alpha))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (monotone step-down; NaN stays NaN and counts in m)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (math.isnan(p_values[i]), p_values[i]))
    adjusted = [math.nan] * m
    running = 0.0
    for rank, i in enumerate(order):
        if math.isnan(p_values[i]):
            continue
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def greedy_clusters(order: Sequence[int], worse: set[tuple[int, int]]) -> dict[int, int]:
    """Cluster number per column walking ``order`` (best first); ``(i, j)`` in ``worse``: j is
    significantly worse than i."""
    out: dict[int, int] = {}
    current: list[int] = []
    number = 0
    for column in order:
        if not current or any((member, column) in worse for member in current):
            number += 1
            current = []
        current.append(column)
        out[column] = number
    return out


def swap_assignments(k: int, permutations: int, *, seed: int, exact_limit: int = EXACT_LIMIT
                     ) -> tuple[np.ndarray, bool]:
    """All 2^k swap assignments (row 0: none swapped) when k ≤ ``exact_limit`` or 2^k ≤ N, else the
    identity followed by N random ones."""
    if k <= exact_limit or 2 ** k <= permutations:
        return ((np.arange(2 ** k)[:, None] >> np.arange(k)[None, :]) & 1).astype(bool), True
    rng = np.random.default_rng(seed)
    return np.vstack([np.zeros((1, k), dtype=bool), rng.random((permutations, k)) < 0.5]), False


def pair_test(level: Level, xa: np.ndarray, xb: np.ndarray, items: Items, *, permutations: int, seed: int = 0,
              a: int = 0, b: int = 1) -> PairTest:
    """The permutation test of one pair on the items both scored (see the module doc)."""
    both = scored(xa, items) & scored(xb, items)
    shared = items.subset(both)
    # Contexts renumbered 0..k-1 over the shared items: an empty context is no assignment.
    present, compact = np.unique(shared.contexts, return_inverse=True)
    k = int(present.size)
    shared = Items(shared.human, compact.astype(np.intp), k, shared.systems, shared.system_names)
    n = int(both.sum())
    if k < 2:
        return PairTest(a, b, math.nan, math.nan, math.nan, n, k, 0, True,
                        f"{k} shared context{'s' if k != 1 else ''}: nothing to swap")
    xa, xb = xa[both], xb[both]
    exact = k <= EXACT_LIMIT or 2 ** k <= permutations
    if exact:
        assignments, _ = swap_assignments(k, permutations, seed=seed)
        deltas = level.swap_deltas(xa, xb, shared, assignments)
    else:
        deltas = level.swap_deltas(xa, xb, shared, np.zeros((1, k), dtype=bool))
    observed = float(deltas[0])
    if not math.isfinite(observed):
        return PairTest(a, b, observed, math.nan, math.nan, n, k, 0, exact, "the statistic is undefined on the shared items")

    def extreme(values: np.ndarray) -> np.ndarray:
        # An undefined Δ counts as extreme (the conservative side); the tolerance keeps the full swap (−Δ)
        # from missing by rounding.
        return ~(np.abs(values) < abs(observed) - 1e-12 * max(1.0, abs(observed)))

    if exact:
        p = float(extreme(deltas).sum() / deltas.size)
        used = int(deltas.size)
    else:
        # Drawn a block at a time (the same stream as one draw of N rows): N x contexts can be large.
        rng = np.random.default_rng(seed)
        rows = max(1, CHUNK_CELLS // k)
        hits = 0
        for start in range(0, permutations, rows):
            draws = rng.random((min(rows, permutations - start), k)) < 0.5
            hits += int(extreme(level.swap_deltas(xa, xb, shared, draws)).sum())
        used = permutations
        p = float((hits + 1) / (used + 1))
    return PairTest(a, b, observed, p, math.nan, n, k, used, exact)


def cluster_evaluators(level: Level, columns: Sequence[np.ndarray], statistics: Sequence[float], items: Items, *,
                       alpha: float = ALPHA, seed: int = 0) -> Clustering:
    """Every pair of ``columns`` (scores aligned with ``items``, NaN: none) tested, Holm-adjusted, and the
    columns with a finite statistic clustered by the greedy rule over ``statistics``."""
    ranked = [i for i, s in enumerate(statistics) if math.isfinite(s)]
    order = tuple(sorted(ranked, key=lambda i: -statistics[i]))
    pairs = [(i, j) for pos, i in enumerate(order) for j in order[pos + 1:]]
    permutations = permutations_for(len(pairs), alpha)
    raw = [pair_test(level, columns[i], columns[j], items, permutations=permutations, seed=seed + n, a=i, b=j)
           for n, (i, j) in enumerate(pairs)]
    return clusters_of_tests(order, raw, len(columns), alpha=alpha, permutations=permutations)


def clusters_of_tests(order: Sequence[int], raw: Sequence[PairTest], n_columns: int, *, alpha: float,
                      permutations: int, test_text: str = TEST_TEXT, units: str = "contexts") -> Clustering:
    """Holm's adjustment of the pair tests ``raw`` (one per pair of ``order``, the better first) and the
    greedy rule's clusters, or none below the floor."""
    adjusted = holm([t.p_value for t in raw])
    tests = tuple(PairTest(t.a, t.b, t.delta, t.p_value, q, t.n_items, t.n_contexts, t.n_assignments, t.exact,
                           t.reason) for t, q in zip(raw, adjusted))
    none: tuple[int | None, ...] = (None,) * n_columns
    order = tuple(order)

    def made(clusters: tuple[int | None, ...], reason: str | None = None) -> Clustering:
        return Clustering(clusters, order, tests, alpha, permutations, reason, test_text, units)

    if len(order) < 2:
        return made(none if not order else tuple(1 if i == order[0] else None for i in range(n_columns)),
                    None if order else "no evaluator has a statistic")
    threshold = alpha / len(tests)
    testable = [t for t in tests if t.n_assignments]
    if not testable or min(t.smallest_p for t in testable) > threshold:
        shared = max((t.n_contexts for t in tests), default=0)
        return made(none, f"with {shared} shared {units} the smallest p-value a permutation test can give is "
                          f"{min((t.smallest_p for t in testable), default=1.0):.3g}, above Holm's first threshold "
                          f"{alpha:g}/{len(tests)} = {threshold:.3g}: no pair can be told apart")
    # (i, j): j (lower in the ranking) is significantly worse than i.
    worse = {(t.a, t.b) for t in tests if t.adjusted_p < alpha and t.delta < 0}
    numbers = greedy_clusters(order, worse)
    return made(tuple(numbers.get(i) for i in range(n_columns)))


__all__ = ["ALPHA", "CONTROL_TEXT", "Clustering", "PairTest", "RULE_TEXT", "TEST_TEXT", "cluster_evaluators",
           "clusters_of_tests",
           "greedy_clusters", "holm", "pair_test", "permutations_for", "swap_assignments"]
