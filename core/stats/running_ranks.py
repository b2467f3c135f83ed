"""Spearman's rho and Kendall's tau-b kept up to date as scores arrive: exact, and incremental.

Recomputing both with scipy costs O(n log n) per refresh (about 80 ms at 100,000
items), too slow for a live panel. Human labels take few distinct values (a
rating scale, or the mean of a few annotators' ratings), a judge's scores any
number; with the items grouped by label value and each group's scores kept
sorted:

- Kendall's S = sum over pairs of sign(dx) * sign(dy) grows, when (x, y) arrives,
  by the sum over groups c of sign(y - c) * (#scores in c below x - #scores in c
  above x): binary searches in k sorted arrays.
- Spearman's rho is Pearson's r of the midranks. Labels are grouped, so
  sum(rank_x * rank_y) = sum over groups of rank_y(c) * R(c), where R(c) sums the
  score midranks of group c; a new score v raises by 1 the midrank of every score
  above v and by 1/2 that of every score equal to it, so each R(c) follows from
  the same counts. The sums of squared midranks follow from the tie counts
  (n(n+1)(2n+1)/6 - sum(t^3 - t)/12).

Everything is counted in exact integers (midranks doubled). New scores are
queued and applied in one vectorised pass when the coefficients are asked for.
With more than ``max_groups`` distinct labels the caller falls back to scipy.
The p-values use scipy's formulas (Student's t for rho, the normal
approximation with tie corrections for tau when there are ties or more than 33
items; otherwise scipy itself).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

#: Distinct label values up to which the incremental computation is used.
MAX_GROUPS = 64

_EMPTY = np.empty(0)


class _TieSums:
    """Sums over the distinct values' counts t: t(t-1)/2, t^3 - t, t(t-1)(t-2), t(t-1)(2t+5)."""

    def __init__(self) -> None:
        self.counts: Counter[float] = Counter()
        self.pairs = 0
        self.cubes = 0
        self.x0 = 0
        self.x1 = 0

    def change(self, value: float, sign: int) -> None:
        t = self.counts[value]
        u = t + sign
        self.pairs += u * (u - 1) // 2 - t * (t - 1) // 2
        self.cubes += (u ** 3 - u) - (t ** 3 - t)
        self.x0 += u * (u - 1) * (u - 2) - t * (t - 1) * (t - 2)
        self.x1 += u * (u - 1) * (2 * u + 5) - t * (t - 1) * (2 * t + 5)
        if u:
            self.counts[value] = u
        else:
            del self.counts[value]


class RankConcordance:
    """Exact Spearman and Kendall tau-b of (score, label) pairs added and removed one at a time."""

    def __init__(self) -> None:
        #: Each label value's scores, sorted (only the applied ones).
        self._groups: dict[float, np.ndarray] = {}
        #: Each label value's sum of doubled score midranks, over the applied pairs.
        self._rank_sums: dict[float, int] = {}
        self._s = 0  # Kendall's S over the applied pairs
        self._n_applied = 0
        self._queued_x: list[float] = []
        self._queued_y: list[float] = []
        self.x_ties = _TieSums()
        self.y_ties = _TieSums()

    @property
    def n(self) -> int:
        return self._n_applied + len(self._queued_x)

    @property
    def n_groups(self) -> int:
        return len(self.y_ties.counts)

    def add(self, x: float, y: float) -> None:
        x, y = float(x), float(y)
        self._queued_x.append(x)
        self._queued_y.append(y)
        self.x_ties.change(x, 1)
        self.y_ties.change(y, 1)

    def remove(self, x: float, y: float) -> None:
        """Take out one pair (x, y) that was added."""
        x, y = float(x), float(y)
        self.x_ties.change(x, -1)
        self.y_ties.change(y, -1)
        for i in range(len(self._queued_x) - 1, -1, -1):
            if self._queued_x[i] == x and self._queued_y[i] == y:
                del self._queued_x[i], self._queued_y[i]
                return
        group = self._groups[y]
        at = int(np.searchsorted(group, x))
        if at >= group.size or group[at] != x:
            raise KeyError(f"no pair ({x}, {y})")
        self._groups[y] = group = np.delete(group, at)
        self._n_applied -= 1
        rank = 1  # doubled midrank of x among the others, plus its own place: 2*below + equal + 1
        for label, scores in self._groups.items():
            below = int(np.searchsorted(scores, x, "left"))
            not_above = int(np.searchsorted(scores, x, "right"))
            above, equal = scores.size - not_above, not_above - below
            self._s -= _sign(y - label) * (below - above)
            self._rank_sums[label] -= 2 * above + equal  # the others' midranks fall
            rank += 2 * below + equal
        self._rank_sums[y] -= rank + 1  # its own midrank counted itself once among the equal ones
        if not group.size:
            del self._groups[y], self._rank_sums[y]

    def _apply_queued(self) -> None:
        if not self._queued_x:
            return
        xb = np.asarray(self._queued_x, dtype=float)
        yb = np.asarray(self._queued_y, dtype=float)
        self._queued_x, self._queued_y = [], []
        labels = sorted(set(self._groups) | set(np.unique(yb).tolist()))
        # Pairs between the new scores and the applied ones; the applied scores' midranks rise.
        rank = np.ones(xb.size, dtype=np.int64)  # doubled midranks of the new scores, built up below
        s = 0
        batch_groups: dict[float, np.ndarray] = {}
        for label in labels:
            sign = np.sign(yb - label).astype(np.int64)
            in_batch = np.sort(xb[yb == label])
            batch_groups[label] = in_batch
            for scores, applied in ((self._groups.get(label, _EMPTY), True), (in_batch, False)):
                if not scores.size:
                    continue
                below = np.searchsorted(scores, xb, "left")
                not_above = np.searchsorted(scores, xb, "right")
                above, equal = scores.size - not_above, not_above - below
                pairs = int(np.dot(sign, below - above))
                # Pairs within the batch are seen from both ends: counted twice.
                s += 2 * pairs if applied else pairs
                rank += 2 * below + equal
                if applied:
                    self._rank_sums[label] = self._rank_sums.get(label, 0) + int((2 * above + equal).sum())
        self._s += s // 2
        # rank = 2 * (scores below) + (scores equal, itself included) + 1: the doubled midrank.
        for label, in_batch in batch_groups.items():
            if not in_batch.size:
                continue
            mask = yb == label
            self._rank_sums[label] = self._rank_sums.get(label, 0) + int(rank[mask].sum())
            before = self._groups.get(label, _EMPTY)
            self._groups[label] = np.sort(np.concatenate([before, in_batch]), kind="stable")
        self._n_applied += xb.size

    def coefficients(self) -> tuple[float, float]:
        """(Spearman's rho, Kendall's tau-b); NaN where a variable is constant or n < 2."""
        self._apply_queued()
        n = self._n_applied
        if n < 2:
            return math.nan, math.nan
        # Spearman: Pearson's r of the doubled midranks.
        below = 0
        cross = 0
        for label in sorted(self._rank_sums):
            count = self.y_ties.counts[label]
            cross += (2 * below + count + 1) * self._rank_sums[label]
            below += count
        mean_term = n * (n + 1) ** 2
        squares = 4 * (n * (n + 1) * (2 * n + 1) // 6)
        var_x = squares - self.x_ties.cubes // 3 - mean_term
        var_y = squares - self.y_ties.cubes // 3 - mean_term
        cov = cross - mean_term
        rho = math.nan if var_x <= 0 or var_y <= 0 else max(-1.0, min(1.0, cov / math.sqrt(var_x) / math.sqrt(var_y)))
        total = n * (n - 1) // 2
        untied_x, untied_y = total - self.x_ties.pairs, total - self.y_ties.pairs
        tau = math.nan if untied_x <= 0 or untied_y <= 0 else (
            max(-1.0, min(1.0, self._s / math.sqrt(untied_x) / math.sqrt(untied_y))))
        return rho, tau

    @property
    def kendall_s(self) -> int:
        """Concordant minus discordant pairs."""
        self._apply_queued()
        return self._s

    def p_values(self, rho: float, tau: float) -> tuple[float, float] | None:
        """scipy's p-values of rho and tau for these pairs, or None where scipy computes them otherwise
        (tau's exact p-value without ties on at most 33 pairs, fewer than 3 pairs, an undefined
        coefficient): then the caller asks scipy, which is quick on so few or such pairs."""
        from scipy import stats

        n = self.n
        x_ties, y_ties = self.x_ties, self.y_ties
        if n < 3 or math.isnan(rho) or math.isnan(tau):
            return None
        if x_ties.pairs == 0 and y_ties.pairs == 0:
            total = n * (n - 1) // 2
            discordant = (total - self.kendall_s) // 2
            if n <= 33 or min(discordant, total - discordant) <= 1:
                return None
        dof = n - 2
        t = rho * math.sqrt(max(dof / ((rho + 1.0) * (1.0 - rho)), 0.0)) if abs(rho) < 1 else math.copysign(math.inf, rho)
        p_rho = min(1.0, 2 * float(stats.t.sf(abs(t), dof)))
        m = n * (n - 1.0)
        var = ((m * (2 * n + 5) - x_ties.x1 - y_ties.x1) / 18 + (2 * x_ties.pairs * y_ties.pairs) / m
               + x_ties.x0 * y_ties.x0 / (9 * m * (n - 2)))
        z = self.kendall_s / math.sqrt(var)
        p_tau = min(1.0, 2 * float(stats.norm.sf(abs(z))))
        return p_rho, p_tau


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)
