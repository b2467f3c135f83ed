"""An evaluator's agreement with the humans at three levels, and what a permutation test and a
context bootstrap need of each.

* **global** — Pearson's r over every item.
* **within-context** — the responses to one context ranked against each other: Kendall's τ-b of the
  evaluator and the humans within each context, averaged over the contexts where it is defined (a
  context whose responses the evaluator, or the humans, all tie has no τ-b; such contexts are counted,
  not silently averaged in). Beside it the tie-calibrated pairwise accuracy of Deutsch, Foster & Freitag
  ("Ties Matter", EMNLP 2023), computed over all pairs of responses to the same context: the evaluator
  calls a pair tied when its scores differ by at most ε, ε is chosen on one half of the contexts and the
  accuracy is measured on the other half, then the halves swap (:func:`tie_calibrated_pairwise_accuracy`).
* **system** — where the data names the system behind each response: Pearson's r over the system
  means, pairwise accuracy over system pairs (the two orderings agree, a tie agreeing only with a tie),
  and Soft Pairwise Accuracy (Thompson et al., 2024: the mean over system pairs of 1 − |p_eval − p_human|,
  each p the one-sided p-value of a paired permutation test that the first system beats the second).

Every level's statistic is defined on :class:`Items` (the human label, context and system of each
item), with the evaluator's scores as an aligned float array (NaN: no score). A level also gives the
statistic of every bootstrap resample of contexts (``resampled``) and the difference B − A of two
evaluators under every assignment of a swap of their scores within contexts (``swap_deltas``), so one
permutation test (:mod:`.significance_clusters`) serves all levels.
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import bootstrap as bs

GLOBAL, CONTEXT, SYSTEM = "global", "context", "system"
LEVELS = (GLOBAL, CONTEXT, SYSTEM)


@dataclass(frozen=True, eq=False)
class Items:
    """The items of one comparison: ``human[i]`` the humans' label of item i, ``contexts[i]`` its
    context (numbered 0..n_contexts-1), ``systems[i]`` its system (numbered into ``system_names``;
    -1: none named). A subset keeps the numbering, so resamples of contexts stay aligned."""

    human: np.ndarray
    contexts: np.ndarray
    n_contexts: int
    systems: np.ndarray
    system_names: tuple[str, ...] = ()

    @classmethod
    def build(cls, human: Sequence[float], contexts: Sequence[Hashable],
              systems: Sequence[str | None] | None = None) -> Items:
        numbers: dict[Hashable, int] = {}
        context_index = np.array([numbers.setdefault(c, len(numbers)) for c in contexts], dtype=np.intp)
        names = sorted({s for s in systems or () if s})
        position = {name: i for i, name in enumerate(names)}
        system_index = np.array([position.get(s, -1) if s else -1 for s in systems] if systems is not None
                                else [-1] * len(context_index), dtype=np.intp)
        return cls(np.asarray(human, dtype=float), context_index, len(numbers), system_index, tuple(names))

    @property
    def n(self) -> int:
        return int(self.human.size)

    def subset(self, keep: np.ndarray) -> Items:
        return Items(self.human[keep], self.contexts[keep], self.n_contexts, self.systems[keep], self.system_names)

    def with_human(self, human: np.ndarray) -> Items:
        return Items(np.asarray(human, dtype=float), self.contexts, self.n_contexts, self.systems, self.system_names)

    def contexts_present(self) -> int:
        return int(np.unique(self.contexts).size)

    @cached_property
    def context_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every unordered pair (i, j) of items of the same context, and that context."""
        order = np.argsort(self.contexts, kind="stable")
        firsts, seconds, owners = [], [], []
        bounds = np.flatnonzero(np.r_[True, np.diff(self.contexts[order]) != 0, True])
        for start, stop in zip(bounds[:-1], bounds[1:]):
            members = order[start:stop]
            i, j = np.triu_indices(members.size, k=1)
            firsts.append(members[i])
            seconds.append(members[j])
            owners.append(np.full(i.size, self.contexts[members[0]], dtype=np.intp))
        if not firsts:
            empty = np.zeros(0, dtype=np.intp)
            return empty, empty, empty
        return np.concatenate(firsts), np.concatenate(seconds), np.concatenate(owners)


def scored(x: np.ndarray, items: Items) -> np.ndarray:
    """The items with both a score and a human label."""
    return np.isfinite(x) & np.isfinite(items.human)


class Level(ABC):
    """One level's statistic, its bootstrap over contexts and its swap distribution."""

    name: str
    statistic: str

    def applies(self, items: Items) -> str | None:
        """Why the level cannot be computed on these items (None: it can)."""
        return None

    @abstractmethod
    def value(self, x: np.ndarray, items: Items) -> float:
        """The statistic of scores ``x`` (aligned with ``items``, all finite)."""

    @abstractmethod
    def resampled(self, x: np.ndarray, items: Items, unit_weights: np.ndarray) -> np.ndarray:
        """The statistic in every resample; ``unit_weights[b, c]``: how often context c was drawn."""

    @abstractmethod
    def swap_deltas(self, xa: np.ndarray, xb: np.ndarray, items: Items, assignments: np.ndarray) -> np.ndarray:
        """statistic(B') − statistic(A') per assignment (row; True: the context's scores swapped);
        ``items`` have contexts numbered 0..k-1 with k the assignments' columns."""


class GlobalLevel(Level):
    name = GLOBAL
    statistic = "Pearson r over all items"

    def value(self, x: np.ndarray, items: Items) -> float:
        return _pearson(x, items.human)

    def resampled(self, x: np.ndarray, items: Items, unit_weights: np.ndarray) -> np.ndarray:
        return bs.weighted_pearson(x, items.human, unit_weights[:, items.contexts])

    def swap_deltas(self, xa: np.ndarray, xb: np.ndarray, items: Items, assignments: np.ndarray) -> np.ndarray:
        # Each side is z-scored on its own first (Pearson's r is unchanged), so evaluators on different scales
        # (1-5, 0-1, a token count) are swapped on one footing, as Deutsch et al. standardise metrics before
        # swapping; raw, a swapped context would carry its scale along and the test lose power.
        # Every sum over items is a sum of per-context sums, A's or B's: a swap moves the context's share
        # (A's minus B's) from one side to the other, so one (assignments x contexts) product gives all.
        a, b = standardised(xa), standardised(xb)
        y = items.human - items.human.mean()
        spread = y.std()
        y = y / (spread if spread > 0 else 1.0)
        k = assignments.shape[1]

        def per_context(x: np.ndarray) -> np.ndarray:
            return np.stack([np.bincount(items.contexts, weights=w, minlength=k) for w in (x, x * x, x * y)], axis=1)

        sums_a, sums_b = per_context(a), per_context(b)
        moved = bs.product(assignments.astype(np.float64), sums_a - sums_b)
        n = float(a.size)
        syy = float((y * y).sum())  # y is centred: its sum is 0

        def pearson(sums: np.ndarray) -> np.ndarray:
            sx, sxx, sxy = sums[:, 0], sums[:, 1], sums[:, 2]
            with np.errstate(invalid="ignore", divide="ignore"):
                return sxy / np.sqrt((sxx - sx * sx / n) * syy)

        return pearson(sums_b.sum(axis=0) + moved) - pearson(sums_a.sum(axis=0) - moved)


class ContextLevel(Level):
    name = CONTEXT
    statistic = "mean per-context Kendall τ-b"

    def applies(self, items: Items) -> str | None:
        if items.context_pairs[0].size == 0:
            return "no context has two responses to rank"
        return None

    def per_context(self, x: np.ndarray, items: Items) -> np.ndarray:
        """Kendall's τ-b of each context (NaN where either side ties all its responses, or fewer than two)."""
        first, second, owner = items.context_pairs
        sign_x = np.sign(x[first] - x[second])
        sign_y = np.sign(items.human[first] - items.human[second])
        k = items.n_contexts
        concordance = np.bincount(owner, weights=sign_x * sign_y, minlength=k)
        untied_x = np.bincount(owner, weights=np.abs(sign_x), minlength=k)
        untied_y = np.bincount(owner, weights=np.abs(sign_y), minlength=k)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = concordance / np.sqrt(untied_x * untied_y)
        tau[~((untied_x > 0) & (untied_y > 0))] = np.nan
        return tau

    def value(self, x: np.ndarray, items: Items) -> float:
        tau = self.per_context(x, items)
        defined = np.isfinite(tau)
        return float(tau[defined].mean()) if defined.any() else math.nan

    def resampled(self, x: np.ndarray, items: Items, unit_weights: np.ndarray) -> np.ndarray:
        tau = self.per_context(x, items)
        defined = np.isfinite(tau)
        weights = unit_weights[:, defined]
        with np.errstate(invalid="ignore", divide="ignore"):
            return (weights @ tau[defined]) / weights.sum(axis=1)

    def swap_deltas(self, xa: np.ndarray, xb: np.ndarray, items: Items, assignments: np.ndarray) -> np.ndarray:
        # A context's τ-b depends on its own scores only: swapping it swaps the two τ's, so the test is a
        # sign flip of the per-context differences (contexts where both are defined).
        tau_a, tau_b = self.per_context(xa, items), self.per_context(xb, items)
        both = np.isfinite(tau_a) & np.isfinite(tau_b)
        if not both.any():
            return np.full(assignments.shape[0], np.nan)
        difference = np.where(both, tau_b - tau_a, 0.0)
        signs = 1.0 - 2.0 * assignments.astype(np.float64)
        return bs.product(signs, difference[:, None])[:, 0] / both.sum()


class SystemLevel(Level):
    name = SYSTEM
    statistic = "Pearson r over system means"

    def applies(self, items: Items) -> str | None:
        present = np.unique(items.systems[items.systems >= 0]).size
        if present < 3:
            return f"the data names {present} system{'s' if present != 1 else ''} (a correlation over systems needs 3)"
        return None

    def means(self, x: np.ndarray, items: Items) -> tuple[np.ndarray, np.ndarray]:
        """Each named system's mean score and mean human label (NaN for a system without items)."""
        named = items.systems >= 0
        s = len(items.system_names)
        counts = np.bincount(items.systems[named], minlength=s).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_x = np.bincount(items.systems[named], weights=x[named], minlength=s) / counts
            mean_y = np.bincount(items.systems[named], weights=items.human[named], minlength=s) / counts
        return mean_x, mean_y

    def value(self, x: np.ndarray, items: Items) -> float:
        mean_x, mean_y = self.means(x, items)
        present = np.isfinite(mean_x)
        return _pearson(mean_x[present], mean_y[present]) if present.sum() >= 3 else math.nan

    def resampled(self, x: np.ndarray, items: Items, unit_weights: np.ndarray) -> np.ndarray:
        named = items.systems >= 0
        onehot = np.zeros((int(named.sum()), len(items.system_names)))
        onehot[np.arange(onehot.shape[0]), items.systems[named]] = 1.0
        weights = unit_weights[:, items.contexts[named]]
        counts = weights @ onehot
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_x = (weights * x[named]) @ onehot / counts
            mean_y = (weights * items.human[named]) @ onehot / counts
        present = counts > 0
        r = bs.weighted_pearson(np.where(present, mean_x, 0.0), np.where(present, mean_y, 0.0),
                                present.astype(float))
        r[present.sum(axis=1) < 3] = np.nan
        return r

    def swap_deltas(self, xa: np.ndarray, xb: np.ndarray, items: Items, assignments: np.ndarray) -> np.ndarray:
        named = items.systems >= 0
        s, k = len(items.system_names), assignments.shape[1]
        cell = items.contexts[named] * s + items.systems[named]

        def sums(values: np.ndarray) -> np.ndarray:
            return np.bincount(cell, weights=values[named], minlength=k * s).reshape(k, s)

        counts = sums(np.ones_like(xa)).sum(axis=0)
        present = counts > 0
        # z-scored on each side, as at the global level (r over system means is unchanged by it).
        sums_a, sums_b = sums(standardised(xa))[:, present], sums(standardised(xb))[:, present]
        _, mean_y = self.means(xa, items)
        moved = bs.product(assignments.astype(np.float64), sums_b - sums_a)
        means_a = (sums_a.sum(axis=0) + moved) / counts[present]
        means_b = (sums_b.sum(axis=0) - moved) / counts[present]
        y = np.broadcast_to(mean_y[present], means_a.shape)
        return bs.rowwise_pearson(means_b, y) - bs.rowwise_pearson(means_a, y)


LEVEL_OBJECTS: dict[str, Level] = {GLOBAL: GlobalLevel(), CONTEXT: ContextLevel(), SYSTEM: SystemLevel()}


def level_named(name: str) -> Level:
    try:
        return LEVEL_OBJECTS[name]
    except KeyError:
        raise ValueError(f"unknown level {name!r}: use one of {', '.join(LEVELS)}") from None


def standardised(x: np.ndarray) -> np.ndarray:
    """``x`` centred and scaled to unit standard deviation (a constant stays centred at 0)."""
    spread = x.std()
    return (x - x.mean()) / (spread if spread > 0 else 1.0)


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(np.clip(np.corrcoef(x, y)[0, 1], -1.0, 1.0))


# -- tie-calibrated pairwise accuracy within contexts ------------------------------------------

@dataclass(frozen=True)
class TieCalibratedAccuracy:
    """Held-out pairwise accuracy with ties (see the module doc)."""

    #: Correct pairs over all pairs tested (each pair is tested once, in the fold it was held out in).
    correct: int
    n_pairs: int
    #: The tie band ε chosen on each half (and applied to the other).
    epsilons: tuple[float, ...]

    @property
    def accuracy(self) -> float:
        return self.correct / self.n_pairs if self.n_pairs else math.nan


def best_tie_band(margins: np.ndarray, human_signs: np.ndarray) -> tuple[float, int]:
    """The ε maximising the pairs called right (tie when |margin| ≤ ε, else the margin's sign),
    the smallest of equals; and how many that calls right."""
    size = np.abs(margins)
    candidates = np.unique(np.r_[0.0, size])
    tied_sizes = np.sort(size[human_signs == 0])
    right_sizes = np.sort(size[(human_signs != 0) & (np.sign(margins) == human_signs)])
    correct = (np.searchsorted(tied_sizes, candidates, side="right")
               + right_sizes.size - np.searchsorted(right_sizes, candidates, side="right"))
    best = int(np.argmax(correct))
    return float(candidates[best]), int(correct[best])


def _called_right(margins: np.ndarray, human_signs: np.ndarray, epsilon: float) -> int:
    calls = np.where(np.abs(margins) <= epsilon, 0.0, np.sign(margins))
    return int((calls == human_signs).sum())


def tie_calibrated_pairwise_accuracy(x: np.ndarray, items: Items, *, seed: int = 0) -> TieCalibratedAccuracy:
    """Pairs of responses to the same context, halves of contexts drawn with ``seed``."""
    first, second, owner = items.context_pairs
    if first.size == 0:
        return TieCalibratedAccuracy(0, 0, ())
    margins = x[first] - x[second]
    human_signs = np.sign(items.human[first] - items.human[second])
    contexts = sorted({int(c) for c in owner})
    random.Random(seed).shuffle(contexts)
    in_first = np.isin(owner, contexts[: len(contexts) // 2])
    correct = tested = 0
    epsilons = []
    for tune, test in ((in_first, ~in_first), (~in_first, in_first)):
        if not tune.any() or not test.any():
            continue
        epsilon, _ = best_tie_band(margins[tune], human_signs[tune])
        epsilons.append(epsilon)
        correct += _called_right(margins[test], human_signs[test], epsilon)
        tested += int(test.sum())
    return TieCalibratedAccuracy(correct, tested, tuple(epsilons))


# -- system level: pairwise accuracy and Soft Pairwise Accuracy -----------------------------------

@dataclass(frozen=True)
class SystemAgreement:
    n_systems: int
    pearson: float
    #: System pairs whose order the evaluator and the humans agree on (a tie agrees only with a tie).
    pairwise_accuracy: float
    #: Thompson et al. (2024): mean over system pairs of 1 − |p_evaluator − p_humans|.
    soft_pairwise_accuracy: float
    #: Permutations of each one-sided system-pair test (or all 2^k sign flips when fewer).
    n_permutations: int


def system_agreement(x: np.ndarray, items: Items, *, n_permutations: int = 1000, seed: int = 0) -> SystemAgreement:
    """The system-level statistics of scores ``x`` (finite) on ``items``."""
    level = SystemLevel()
    mean_x, mean_y = level.means(x, items)
    present = np.flatnonzero(np.isfinite(mean_x))
    if present.size < 2:
        return SystemAgreement(int(present.size), math.nan, math.nan, math.nan, 0)
    agree = soft = 0.0
    pairs = 0
    used = 0
    for a_pos, i in enumerate(present):
        for j in present[a_pos + 1:]:
            pairs += 1
            agree += np.sign(mean_x[i] - mean_x[j]) == np.sign(mean_y[i] - mean_y[j])
            p_eval, used = system_pair_p(x, items, int(i), int(j), n_permutations=n_permutations, seed=seed)
            p_human, _ = system_pair_p(items.human, items, int(i), int(j), n_permutations=n_permutations, seed=seed)
            soft += 1.0 - abs(p_eval - p_human)
    pearson = _pearson(mean_x[present], mean_y[present]) if present.size >= 3 else math.nan
    return SystemAgreement(int(present.size), pearson, agree / pairs, soft / pairs, used)


def system_pair_p(values: np.ndarray, items: Items, i: int, j: int, *, n_permutations: int = 1000,
                  seed: int = 0) -> tuple[float, int]:
    """One-sided p-value of "system i scores higher than system j" by a permutation test: paired by
    context (the signs of the per-context mean differences flipped) where the two share contexts, else
    the items' system labels shuffled. Returns the p-value and the permutations used."""
    in_i, in_j = items.systems == i, items.systems == j
    shared = np.intersect1d(items.contexts[in_i], items.contexts[in_j])
    rng = np.random.default_rng(seed)
    if shared.size:
        k = items.n_contexts
        counts_i = np.bincount(items.contexts[in_i], minlength=k)
        counts_j = np.bincount(items.contexts[in_j], minlength=k)
        mean_i = np.bincount(items.contexts[in_i], weights=values[in_i], minlength=k)[shared] / counts_i[shared]
        mean_j = np.bincount(items.contexts[in_j], weights=values[in_j], minlength=k)[shared] / counts_j[shared]
        difference = mean_i - mean_j
        if 2 ** shared.size <= n_permutations:
            signs = 1.0 - 2.0 * ((np.arange(2 ** shared.size)[:, None] >> np.arange(shared.size)[None, :]) & 1)
            flipped = signs @ difference
            return float(np.mean(flipped >= difference.sum() - 1e-12)), int(signs.shape[0])
        signs = np.where(rng.random((n_permutations, shared.size)) < 0.5, -1.0, 1.0)
        flipped = signs @ difference
        return float((1 + np.sum(flipped >= difference.sum() - 1e-12)) / (n_permutations + 1)), n_permutations
    pooled = np.concatenate([values[in_i], values[in_j]])
    n_i = int(in_i.sum())
    observed = pooled[:n_i].mean() - pooled[n_i:].mean()
    shuffled = np.array([rng.permutation(pooled) for _ in range(n_permutations)])
    drawn = shuffled[:, :n_i].mean(axis=1) - shuffled[:, n_i:].mean(axis=1)
    return float((1 + np.sum(drawn >= observed - 1e-12)) / (n_permutations + 1)), n_permutations


__all__ = ["CONTEXT", "GLOBAL", "LEVELS", "SYSTEM", "ContextLevel", "GlobalLevel", "Items", "Level",
           "SystemAgreement", "SystemLevel", "TieCalibratedAccuracy", "best_tie_band", "level_named", "scored",
           "system_agreement", "system_pair_p", "tie_calibrated_pairwise_accuracy"]
