"""Human labels as the statistics need them: pooled per example, or per annotator.

Pooling uses :meth:`Rating.aggregate` (mean, median or majority vote, missing
values skipped); tied majority votes are recorded so tables can report them.
Annotators are identified by name when every rating of the quality names its
annotators, else by position (USR and FED list annotators in a fixed order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np

from ..model import Aggregate, Aggregation, Example, Rating, RatingValue, Scale, ScaleKind


@dataclass(frozen=True)
class HumanLabels:
    """The pooled human label of every example that carries a rating of ``quality``."""

    quality: str
    aggregation: Aggregation
    #: example id -> pooled label; None when no annotator gave a value.
    values: Mapping[str, RatingValue]
    #: Ids whose majority vote was a tie (broken towards the smallest value).
    tied: frozenset[str]
    scale: Scale | None

    @property
    def n_ties(self) -> int:
        return len(self.tied)

    @property
    def missing(self) -> frozenset[str]:
        return frozenset(i for i, v in self.values.items() if v is None)


def human_labels(examples: Iterable[Example], quality: str,
                 how: Aggregation = Aggregation.MEAN) -> HumanLabels:
    values: dict[str, RatingValue] = {}
    tied: set[str] = set()
    scale: Scale | None = None
    # A mean or median depends on the scores only, and at 10^5 items most score tuples recur: each
    # distinct one is pooled once. (Not a vote, whose winner keeps its type: 5 and 5.0 are equal keys.)
    pooled_of: dict[tuple[tuple[RatingValue, ...], Scale], Aggregate] = {}
    for ex in examples:
        rating = ex.ratings.get(quality)
        if rating is None:
            continue
        scale = scale or rating.scale
        averaged = how is not Aggregation.MAJORITY and rating.scale.is_numeric
        key = (rating.scores, rating.scale)
        pooled = pooled_of.get(key) if averaged else None
        if pooled is None:
            pooled = rating.aggregate(how)
            if averaged:
                pooled_of[key] = pooled
        values[ex.id] = pooled.value
        if pooled.is_tie:
            tied.add(ex.id)
    return HumanLabels(quality, how, values, frozenset(tied), scale)


@dataclass(frozen=True)
class AnnotatorMatrix:
    """Every annotator's value for every rated example of one quality.

    ``values[a][i]`` is annotator ``a``'s value for example ``example_ids[i]``
    (None when that annotator did not rate it).
    """

    quality: str
    annotators: tuple[str, ...]
    example_ids: tuple[str, ...]
    values: tuple[tuple[RatingValue, ...], ...]
    scale: Scale | None
    #: True when annotators are named in the data; False when known only by position.
    by_name: bool

    @property
    def n_items(self) -> int:
        return len(self.example_ids)

    def numeric(self) -> np.ndarray:
        """(annotators, items) floats, NaN where missing; labels of a
        categorical scale become their position (in ``scale.labels`` when
        given, else in sorted order)."""
        codes = label_codes(self.scale, (v for row in self.values for v in row))
        if not codes:
            # Numbers: one conversion (None becomes NaN), as float(v) for each value below.
            return np.array(self.values, dtype=np.float64).reshape(len(self.annotators), self.n_items)
        out = np.full((len(self.annotators), self.n_items), np.nan)
        for a, row in enumerate(self.values):
            for i, v in enumerate(row):
                if v is not None:
                    out[a, i] = codes[v] if codes else float(v)
        return out


def annotator_matrix(examples: Iterable[Example], quality: str) -> AnnotatorMatrix:
    ids: list[str] = []
    ratings: list[Rating] = []
    for ex in examples:
        rating = ex.ratings.get(quality)
        if rating is not None:
            ids.append(ex.id)
            ratings.append(rating)
    rated = list(zip(ids, ratings))
    # The annotator tuples in use ("()" where a rating names none): one set, at 10^5 items a few entries.
    named_by = {r.annotators for r in ratings}
    by_name = bool(ratings) and () not in named_by
    scale = ratings[0].scale if ratings else None
    if ratings:
        # The common case: every rating by the same annotators in the same order (or, unnamed, by as
        # many): the matrix is the transposed scores, as the general loop below builds it.
        first = ratings[0]
        keys = first.annotators if by_name else tuple(f"annotator {k + 1}" for k in range(len(first.scores)))
        same = len(named_by) == 1 if by_name else len({len(r.scores) for r in ratings}) == 1
        if same and len(set(keys)) == len(keys):
            values = tuple(zip(*(r.scores for r in ratings))) if keys else ()
            return AnnotatorMatrix(quality, tuple(keys), tuple(ids), values, scale, by_name)
    names: dict[str, int] = {}
    cells: list[dict[int, RatingValue]] = []
    for _, rating in rated:
        keys = rating.annotators if by_name else tuple(f"annotator {k + 1}" for k in range(len(rating.scores)))
        cells.append({names.setdefault(key, len(names)): value for key, value in zip(keys, rating.scores)})
    annotators = tuple(names)
    values = tuple(tuple(cell.get(a) for cell in cells) for a in range(len(annotators)))
    return AnnotatorMatrix(quality, annotators, tuple(ids), values, scale, by_name)


def label_codes(scale: Scale | None, values: Iterable[RatingValue]) -> dict[RatingValue, float]:
    """Numbers for the labels of a categorical scale; empty for numeric scales."""
    if scale is not None and scale.is_numeric:
        return {}
    present = {v for v in values if v is not None}
    if scale is not None and scale.labels:
        order = list(scale.labels) + sorted(str(v) for v in present if str(v) not in scale.labels)
    else:
        order = sorted(str(v) for v in present)
    position = {label: float(k) for k, label in enumerate(order)}
    return {v: position[str(v)] for v in present}


def alpha_level(scale: Scale | None) -> str:
    """Krippendorff's level of measurement that fits a scale kind."""
    if scale is None or scale.kind in (ScaleKind.BINARY, ScaleKind.CATEGORICAL):
        return "nominal"
    if scale.kind is ScaleKind.ORDINAL:
        return "ordinal"
    return "interval"
