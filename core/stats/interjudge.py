"""Do the judges agree with each other? Inter-judge agreement and the confusion matrix.

Before pooling several judge columns a user should see whether they measure the
same thing: the inter-judge matrix gives, for every pair of judges, Spearman's
ρ for graded scores or Cohen's κ (plain, linear- or quadratic-weighted, from
:func:`.categorical.cohen_kappa`) for labels, on the items both scored.

The confusion matrix counts judge label x human label, for the app and exports.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import RatingValue
from .categorical import cohen_kappa, is_missing

GRADED = "graded"
CATEGORICAL = "categorical"


@dataclass(frozen=True)
class InterJudgeMatrix:
    judges: tuple[str, ...]
    #: "spearman" or "kappa" / "kappa (linear)" / "kappa (quadratic)"
    measure: str
    #: values[i][j]: agreement of judges i and j (1 on the diagonal), NaN when undefined.
    values: tuple[tuple[float, ...], ...]
    #: n[i][j]: items both scored.
    n: tuple[tuple[int, ...], ...]

    def value(self, a: str, b: str) -> float:
        return self.values[self.judges.index(a)][self.judges.index(b)]

    def to_records(self) -> list[dict[str, Any]]:
        return [{"judge_a": a, "judge_b": b, "measure": self.measure,
                 "value": None if math.isnan(self.values[i][j]) else self.values[i][j], "n": self.n[i][j]}
                for i, a in enumerate(self.judges) for j, b in enumerate(self.judges) if i < j]


def inter_judge_matrix(columns: Mapping[str, Mapping[str, Any]], *, kind: str = GRADED,
                       kappa_weights: str | None = None) -> InterJudgeMatrix:
    """Pairwise agreement of the judge columns (item id -> score or label)."""
    from scipy.stats import spearmanr

    if kind not in (GRADED, CATEGORICAL):
        raise ValueError(f"unknown kind {kind!r}: use {GRADED!r} or {CATEGORICAL!r}")
    names = tuple(columns)
    values = [[math.nan] * len(names) for _ in names]
    counts = [[0] * len(names) for _ in names]
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if j < i:
                values[i][j], counts[i][j] = values[j][i], counts[j][i]
                continue
            shared = [k for k in columns[a] if k in columns[b]
                      and not is_missing(columns[a][k]) and not is_missing(columns[b][k])]
            counts[i][j] = len(shared)
            if i == j:
                values[i][j] = 1.0 if shared else math.nan
                continue
            xs, ys = [columns[a][k] for k in shared], [columns[b][k] for k in shared]
            if len(shared) < 2:
                continue
            if kind == GRADED:
                if len(set(xs)) > 1 and len(set(ys)) > 1:
                    values[i][j] = float(spearmanr([float(x) for x in xs], [float(y) for y in ys]).statistic)
            else:
                values[i][j] = cohen_kappa(xs, ys, weights=kappa_weights)
    measure = "spearman" if kind == GRADED else ("kappa" if not kappa_weights else f"kappa ({kappa_weights})")
    return InterJudgeMatrix(names, measure, tuple(map(tuple, values)), tuple(map(tuple, counts)))


@dataclass(frozen=True)
class ConfusionMatrix:
    #: Row labels are the judge's, columns the humans'; both in this order.
    labels: tuple[RatingValue, ...]
    counts: tuple[tuple[int, ...], ...]

    @property
    def n(self) -> int:
        return sum(map(sum, self.counts))

    def to_records(self) -> list[dict[str, Any]]:
        return [{"judge_label": a, "human_label": b, "count": self.counts[i][j]}
                for i, a in enumerate(self.labels) for j, b in enumerate(self.labels)]


def confusion_matrix(judge: Sequence[RatingValue], human: Sequence[RatingValue],
                     labels: Sequence[RatingValue] | None = None) -> ConfusionMatrix:
    """Counts of (judge label, human label); pairs with a missing side are skipped."""
    if len(judge) != len(human):
        raise ValueError(f"{len(judge)} judge labels but {len(human)} human labels")
    pairs = [(a, b) for a, b in zip(judge, human, strict=True) if not is_missing(a) and not is_missing(b)]
    order = tuple(labels) if labels is not None else tuple(sorted({v for p in pairs for v in p}, key=_order))
    position = {v: k for k, v in enumerate(order)}
    counts = [[0] * len(order) for _ in order]
    for a, b in pairs:
        if a in position and b in position:
            counts[position[a]][position[b]] += 1
    return ConfusionMatrix(order, tuple(map(tuple, counts)))


def _order(value: RatingValue) -> tuple[int, float, str]:
    try:
        return 0, float(value), ""  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1, 0.0, str(value)
