"""Correlations that grow one score at a time, for live display during a run.

Pearson comes from running sums (O(1) per score, shifted by the first values
seen so the sums keep their precision). Spearman and Kendall are kept up to
date incrementally and exactly (:mod:`.running_ranks`: the scores grouped by
label value, counted in integers), so a refresh at 100,000 items costs about a
millisecond instead of scipy's O(n log n) recomputation; with more than
``running_ranks.MAX_GROUPS`` distinct labels they are recomputed with scipy
when a snapshot asks and the data changed. The scores are also kept in growing
numpy columns (no rebuilding from dicts) for the CIs. Point estimates equal
:func:`.correlation.correlate` on the same pairs.

Confidence intervals (``snapshot(ci=True)``): up to ``live_ci_max_items``
paired items they are the batch result itself (the same bootstrap). Above
that, a full bootstrap of Kendall's tau costs about a second at 10,000 items,
too slow for a live refresh, so the live CI is an *m-out-of-n bootstrap*
(Bickel, Goetze & van Zwet 1997): the same bootstrap on a fixed pseudo-random
subsample of whole groups holding about ``live_ci_max_items`` items, its
interval re-centred on the full-data estimate and its width scaled by
sqrt(m / n) for m of n resampled units. The snapshot says so in
``ci_method``; the final report's CIs come from the full bootstrap.
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Hashable, Mapping

import numpy as np

from .correlation import (
    METHODS,
    MIN_POINTS,
    Coefficient,
    CorrelationResult,
    correlate,
    degenerate_reason,
    item_correlation,
    point_estimates,
)
from .running_ranks import MAX_GROUPS, RankConcordance

NAN = float("nan")

#: Paired items up to which a live CI is the full bootstrap (a few ms); above it an
#: m-out-of-n bootstrap on a subsample of about this many items.
LIVE_CI_MAX_ITEMS = 300

CI_FULL = "bootstrap"


@dataclass(frozen=True)
class Snapshot:
    evaluator: str
    #: Scores paired with a human label.
    n: int
    #: Scores that came back as None (the evaluator failed on the example).
    failures: int
    #: Scores for examples that have no human label.
    excluded: int
    pearson: float
    #: None when the snapshot was taken without rank correlations.
    spearman: float | None
    kendall: float | None
    #: The full result with p-values and bootstrap CIs, when asked for.
    result: CorrelationResult | None = None
    reason: str | None = None
    #: How the CIs of ``result`` were made: "bootstrap" (the batch computation), or a
    #: description of the m-out-of-n approximation; None without CIs.
    ci_method: str | None = None

    @property
    def ci_approximate(self) -> bool:
        return self.ci_method is not None and self.ci_method != CI_FULL


@dataclass
class _Sums:
    """Shifted sums of x, y, x^2, y^2, xy; values can be removed again."""

    shift_x: float
    shift_y: float
    n: int = 0
    x: float = 0.0
    y: float = 0.0
    xx: float = 0.0
    yy: float = 0.0
    xy: float = 0.0

    def add(self, x: float, y: float, sign: int = 1) -> None:
        dx, dy = x - self.shift_x, y - self.shift_y
        self.n += sign
        self.x += sign * dx
        self.y += sign * dy
        self.xx += sign * dx * dx
        self.yy += sign * dy * dy
        self.xy += sign * dx * dy

    def pearson(self) -> float:
        n = self.n
        sxx = self.xx - self.x * self.x / n
        syy = self.yy - self.y * self.y / n
        sxy = self.xy - self.x * self.y / n
        if sxx <= 0 or syy <= 0:
            return NAN
        return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


class _Columns:
    """Paired values in growing numpy arrays; a removed row is filled with the last one."""

    def __init__(self) -> None:
        self.slot: dict[str, int] = {}
        self.ids: list[str] = []
        self.x = np.empty(64)
        self.y = np.empty(64)
        self.priority = np.empty(64)
        self.unit = np.empty(64, dtype=np.intp)
        #: Rows per resampling unit (group, or item without groups).
        self.unit_rows: Counter = Counter()

    @property
    def n(self) -> int:
        return len(self.ids)

    def add(self, example_id: str, x: float, y: float, unit: int, priority: float) -> None:
        n = self.n
        if n == self.x.size:
            self.x, self.y = np.resize(self.x, 2 * n), np.resize(self.y, 2 * n)
            self.priority, self.unit = np.resize(self.priority, 2 * n), np.resize(self.unit, 2 * n)
        self.slot[example_id] = n
        self.ids.append(example_id)
        self.x[n], self.y[n], self.unit[n], self.priority[n] = x, y, unit, priority
        self.unit_rows[unit] += 1

    def remove(self, example_id: str) -> None:
        at = self.slot.pop(example_id)
        unit = int(self.unit[at])
        self.unit_rows[unit] -= 1
        if not self.unit_rows[unit]:
            del self.unit_rows[unit]
        last_id = self.ids.pop()
        if last_id != example_id:
            last = len(self.ids)
            self.slot[last_id] = at
            self.ids[at] = last_id
            for column in (self.x, self.y, self.unit, self.priority):
                column[at] = column[last]

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        n = self.n
        return self.x[:n], self.y[:n]


@dataclass
class _Series:
    scores: dict[str, float] = field(default_factory=dict)
    columns: _Columns = field(default_factory=_Columns)
    failed: set[str] = field(default_factory=set)
    unlabelled: set[str] = field(default_factory=set)
    sums: _Sums | None = None
    distinct_x: Counter = field(default_factory=Counter)
    distinct_y: Counter = field(default_factory=Counter)
    concordance: RankConcordance = field(default_factory=RankConcordance)
    version: int = 0
    ranks_at: int = -1
    ranks: tuple[float, float] = (NAN, NAN)
    ci_at: int = -1
    ci: tuple[CorrelationResult, str] | None = None
    #: The last subsample's bootstrap, by the subsample's bytes: a new score outside the subsample
    #: (most of them, at 100,000 items) leaves it as it was, and it is not redone.
    sub_ci: tuple[bytes, CorrelationResult] | None = None


class RunningCorrelations:
    """Live correlation of several evaluators with fixed human labels.

    ``human`` maps example ids to pooled human labels (None/NaN = no label);
    ``groups`` maps example ids to group ids for the bootstrap of ``snapshot(ci=True)``.
    Adding a second value for the same evaluator and example replaces the first
    (a retry that succeeded after a failure, say). ``live_ci_max_items``: see the
    module's note on confidence intervals.
    """

    def __init__(self, human: Mapping[str, float | None], groups: Mapping[str, Hashable] | None = None, *,
                 n_boot: int = 200, seed: int = 0, confidence: float = 0.95,
                 live_ci_max_items: int = LIVE_CI_MAX_ITEMS) -> None:
        self._human = {k: float(v) for k, v in human.items() if v is not None and math.isfinite(float(v))}
        self._groups = groups
        self.n_boot = n_boot
        self.seed = seed
        self.confidence = confidence
        if live_ci_max_items < 2 * MIN_POINTS:
            raise ValueError(f"live_ci_max_items must be at least {2 * MIN_POINTS}, not {live_ci_max_items}")
        self.live_ci_max_items = live_ci_max_items
        self._series: dict[str, _Series] = {}
        #: Per resampling unit (group, or item without groups): its number and priority.
        self._units: dict[Hashable, tuple[int, float]] = {}

    @property
    def evaluators(self) -> list[str]:
        return list(self._series)

    def add(self, evaluator: str, example_id: str, score: float | None) -> None:
        series = self._series.setdefault(evaluator, _Series())
        self._forget(series, example_id)
        series.version += 1
        if score is None or (isinstance(score, float) and math.isnan(score)):
            series.failed.add(example_id)
            return
        human = self._human.get(example_id)
        if human is None:
            series.unlabelled.add(example_id)
            return
        value = float(score)
        if series.sums is None:
            series.sums = _Sums(value, human)
        series.sums.add(value, human)
        series.scores[example_id] = value
        series.columns.add(example_id, value, human, *self._unit(example_id))
        series.distinct_x[value] += 1
        series.distinct_y[human] += 1
        series.concordance.add(value, human)

    def snapshot(self, evaluator: str | None = None, ci: bool = False,
                 ranks: bool = True) -> Snapshot | dict[str, Snapshot]:
        """The current values of one evaluator, or of every evaluator (a dict).

        ``ranks=False`` skips Spearman/Kendall (Pearson only, O(1));
        ``ci=True`` adds the full result with a small bootstrap (``n_boot``).
        """
        if evaluator is None:
            return {name: self._snapshot(name, ci, ranks) for name in self._series}
        if evaluator not in self._series:
            raise KeyError(f"no scores for evaluator {evaluator!r} yet")
        return self._snapshot(evaluator, ci, ranks)

    def _snapshot(self, evaluator: str, ci: bool, ranks: bool) -> Snapshot:
        series = self._series[evaluator]
        n = len(series.scores)
        reason = self._reason(series)
        pearson = spearman = kendall = NAN
        if reason is None and series.sums is not None:
            pearson = series.sums.pearson()
        result = ci_method = None
        if ci:
            if series.ci_at != series.version or series.ci is None:
                series.ci = self._with_ci(series)
                series.ci_at = series.version
            result, ci_method = series.ci
            if reason is None and series.ranks_at != series.version:
                series.ranks = (result.spearman.value, result.kendall.value)
                series.ranks_at = series.version
        if ranks:
            if reason is None and series.ranks_at != series.version:
                series.ranks = self._rank_coefficients(series)
                series.ranks_at = series.version
            spearman, kendall = series.ranks if reason is None else (NAN, NAN)
        return Snapshot(evaluator, n, len(series.failed), len(series.unlabelled), pearson,
                        spearman if ranks else None, kendall if ranks else None, result, reason, ci_method)

    def _with_ci(self, series: _Series) -> tuple[CorrelationResult, str]:
        """The full result: the batch computation, or the m-out-of-n approximation for many items."""
        if len(series.scores) <= self.live_ci_max_items or self.n_boot == 0 or self._reason(series):
            ids = list(series.scores)
            groups = [self._groups.get(i, i) for i in ids] if self._groups is not None else None
            return correlate([series.scores[i] for i in ids], [self._human[i] for i in ids], groups,
                             n_boot=self.n_boot, seed=self.seed, confidence=self.confidence), CI_FULL
        return self._subsample_ci(series)

    def _subsample_ci(self, series: _Series) -> tuple[CorrelationResult, str]:
        columns = series.columns
        x, y = columns.arrays
        n_units = len(columns.unit_rows)
        # Whole units in a fixed pseudo-random order (by priority), up to about m items: the
        # subsample grows with the data but keeps the units it already holds.
        priority = columns.priority[:columns.n]
        # The m-th smallest priority in O(n), then the units under it in priority order (as a full argsort).
        cutoff = np.partition(priority, self.live_ci_max_items - 1)[self.live_ci_max_items - 1]
        chosen = np.flatnonzero(priority <= cutoff)
        chosen = chosen[np.argsort(priority[chosen], kind="stable")]
        sub_units = columns.unit[chosen]
        m_units = len(np.unique(sub_units))
        by_group = self._groups is not None
        sub_x, sub_y = x[chosen], y[chosen]
        key = b"".join((sub_x.tobytes(), sub_y.tobytes(), sub_units.tobytes()))
        if series.sub_ci is not None and series.sub_ci[0] == key:
            sub = series.sub_ci[1]
        else:
            sub = item_correlation(sub_x, sub_y, sub_units.tolist() if by_group else None,
                                   n_excluded=0, n_boot=self.n_boot, seed=self.seed, confidence=self.confidence)
            series.sub_ci = (key, sub)
        scale = math.sqrt(m_units / n_units)
        full = self._point_estimates(series)
        coefficients = {}
        for method in METHODS:
            value, p_value = full[method]
            part = sub.coefficient(method)
            low, high = (NAN, NAN) if not (math.isfinite(part.ci_low) and math.isfinite(part.ci_high)) else (
                max(-1.0, value + (part.ci_low - part.value) * scale),
                min(1.0, value + (part.ci_high - part.value) * scale))
            coefficients[method] = Coefficient(value, p_value, low, high, part.n_resamples)
        result = CorrelationResult(
            coefficients["pearson"], coefficients["spearman"], coefficients["kendall"],
            n=len(x), n_excluded=0, n_items=len(x), n_groups=n_units if by_group else None,
            n_boot=self.n_boot, confidence=self.confidence, seed=self.seed)
        unit = "groups" if by_group else "items"
        method = (f"m-out-of-n bootstrap: {len(chosen)} of {len(x)} items ({m_units} of {n_units} {unit}), "
                  f"interval scaled by sqrt({m_units}/{n_units})")
        return result, method

    def _rank_coefficients(self, series: _Series) -> tuple[float, float]:
        if series.concordance.n_groups <= MAX_GROUPS:
            return series.concordance.coefficients()
        return rank_coefficients(*series.columns.arrays)

    def _point_estimates(self, series: _Series) -> dict[str, tuple[float, float]]:
        """:func:`.correlation.point_estimates` of the series, with rho, tau and their p-values from the
        incremental counts (scipy's O(n log n) recomputation cost tens of ms at 100,000 items)."""
        from scipy import special

        x, y = series.columns.arrays
        concordance = series.concordance
        if concordance.n_groups > MAX_GROUPS or series.sums is None:
            return point_estimates(x, y)
        rho, tau = concordance.coefficients()
        p_values = concordance.p_values(rho, tau)
        if p_values is None:  # few pairs without ties: scipy's exact p-value of tau
            return point_estimates(x, y)
        # Pearson's r from the running sums, and scipy.stats.pearsonr's p-value: under the null, r
        # follows a beta distribution on (-1, 1) with a = b = n/2 - 1 (two-sided).
        r = series.sums.pearson()
        half = len(x) / 2 - 1
        p_r = min(1.0, 2 * float(special.betainc(half, half, (1 - abs(r)) / 2))) if math.isfinite(r) else NAN
        return {"pearson": (r, p_r), "spearman": (rho, p_values[0]), "kendall": (tau, p_values[1])}

    def _unit(self, example_id: str) -> tuple[int, float]:
        """The item's resampling unit (its group; itself without groups) and the unit's fixed
        pseudo-random priority, from the seed."""
        unit = self._groups.get(example_id, example_id) if self._groups is not None else example_id
        found = self._units.get(unit)
        if found is None:
            digest = zlib.crc32(f"{self.seed}\x00{unit!r}".encode("utf-8"))
            found = self._units[unit] = (len(self._units), digest / 2**32)
        return found

    def _reason(self, series: _Series) -> str | None:
        n = len(series.scores)
        if n < MIN_POINTS:
            return f"only {n} paired items; at least {MIN_POINTS} are needed"
        if len(series.distinct_x) < 2 or len(series.distinct_y) < 2:
            x, y = series.columns.arrays
            return degenerate_reason(x, y, "items")
        return None

    def _forget(self, series: _Series, example_id: str) -> None:
        """Remove an earlier value for this example, wherever it was counted."""
        series.failed.discard(example_id)
        series.unlabelled.discard(example_id)
        old = series.scores.pop(example_id, None)
        if old is None:
            return
        series.columns.remove(example_id)
        human = self._human[example_id]
        assert series.sums is not None
        series.sums.add(old, human, sign=-1)
        series.concordance.remove(old, human)
        for counter, value in ((series.distinct_x, old), (series.distinct_y, human)):
            counter[value] -= 1
            if not counter[value]:
                del counter[value]


def rank_coefficients(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Spearman's rho and Kendall's tau-b, the same scipy calls as :func:`.correlation.point_estimates`
    without its p-values and Pearson."""
    from scipy import stats

    return float(stats.spearmanr(x, y).statistic), float(stats.kendalltau(x, y).statistic)
