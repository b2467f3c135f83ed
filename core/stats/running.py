"""Correlations that grow one score at a time, for live display during a run.

Pearson comes from running sums (O(1) per score, shifted by the first values
seen so the sums keep their precision). Spearman and Kendall need the whole
arrays; they are recomputed with scipy only when a snapshot asks for them and
the data changed since the last one. A snapshot gives the same values as
:func:`.correlation.correlate` on the same pairs.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Hashable, Mapping

import numpy as np

from .correlation import MIN_POINTS, CorrelationResult, correlate, degenerate_reason, point_estimates

NAN = float("nan")


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


@dataclass
class _Series:
    scores: dict[str, float] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)
    unlabelled: set[str] = field(default_factory=set)
    sums: _Sums | None = None
    distinct_x: Counter = field(default_factory=Counter)
    distinct_y: Counter = field(default_factory=Counter)
    version: int = 0
    ranks_at: int = -1
    ranks: tuple[float, float] = (NAN, NAN)


class RunningCorrelations:
    """Live correlation of several evaluators with fixed human labels.

    ``human`` maps example ids to pooled human labels (None/NaN = no label);
    ``groups`` maps example ids to group ids for the bootstrap of ``snapshot(ci=True)``.
    Adding a second value for the same evaluator and example replaces the first
    (a retry that succeeded after a failure, say).
    """

    def __init__(self, human: Mapping[str, float | None], groups: Mapping[str, Hashable] | None = None, *,
                 n_boot: int = 200, seed: int = 0, confidence: float = 0.95) -> None:
        self._human = {k: float(v) for k, v in human.items() if v is not None and math.isfinite(float(v))}
        self._groups = groups
        self.n_boot = n_boot
        self.seed = seed
        self.confidence = confidence
        self._series: dict[str, _Series] = {}

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
        series.distinct_x[value] += 1
        series.distinct_y[human] += 1

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
        if ranks:
            if reason is None and series.ranks_at != series.version:
                x, y = self._arrays(series)
                points = point_estimates(x, y)
                series.ranks = (points["spearman"][0], points["kendall"][0])
                series.ranks_at = series.version
            spearman, kendall = series.ranks if reason is None else (NAN, NAN)
        result = None
        if ci:
            ids = list(series.scores)
            groups = [self._groups.get(i, i) for i in ids] if self._groups is not None else None
            result = correlate([series.scores[i] for i in ids], [self._human[i] for i in ids], groups,
                               n_boot=self.n_boot, seed=self.seed, confidence=self.confidence)
        return Snapshot(evaluator, n, len(series.failed), len(series.unlabelled), pearson,
                        spearman if ranks else None, kendall if ranks else None, result, reason)

    def _reason(self, series: _Series) -> str | None:
        n = len(series.scores)
        if n < MIN_POINTS:
            return f"only {n} paired items; at least {MIN_POINTS} are needed"
        if len(series.distinct_x) < 2 or len(series.distinct_y) < 2:
            x, y = self._arrays(series)
            return degenerate_reason(x, y, "items")
        return None

    def _arrays(self, series: _Series) -> tuple[np.ndarray, np.ndarray]:
        ids = list(series.scores)
        return (np.fromiter((series.scores[i] for i in ids), dtype=np.float64, count=len(ids)),
                np.fromiter((self._human[i] for i in ids), dtype=np.float64, count=len(ids)))

    def _forget(self, series: _Series, example_id: str) -> None:
        """Remove an earlier value for this example, wherever it was counted."""
        series.failed.discard(example_id)
        series.unlabelled.discard(example_id)
        old = series.scores.pop(example_id, None)
        if old is None:
            return
        human = self._human[example_id]
        assert series.sums is not None
        series.sums.add(old, human, sign=-1)
        for counter, value in ((series.distinct_x, old), (series.distinct_y, human)):
            counter[value] -= 1
            if not counter[value]:
                del counter[value]
