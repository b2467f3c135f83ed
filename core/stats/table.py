"""Agreement tables: every evaluator against the humans, per quality and level.

Pure data for the CLI, the exporters and the TUI to render. Each cell keeps its
:class:`CorrelationResult` and says what was left out and why. A human ceiling
per quality and level sits beside the evaluators.

Evaluator scores are keyed by example id. For one cell the candidates are the
examples of the subset that carry a rating of the quality; of those, an example
is excluded when the evaluator has no score for it (``not_scored``: a metric
that skips the reference itself), when its score is None or NaN (``failed``),
when no annotator gave a value (``no_human_label``), or, at system level, when
it names no system (``no_system``); each is counted once, under the first of
these reasons that applies. Human labels stay on their native scale.

The bootstrap resamples contexts (``group_id``), keeping all candidates of a
context together, and uses the same resamples for every evaluator scored on
the same items, so evaluators are compared on equal footing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Collection, Mapping, Sequence

import numpy as np

from ..model import Aggregation, Example, RatingValue, Scale
from ..subsets import ALL, Subset
from . import bootstrap as bs
from .categorical import CategoricalResult, categorical_agreement, is_missing
from .ceiling import HumanCeiling, human_ceiling
from .correlation import (
    METHODS,
    SYSTEM,
    TURN,
    UNDEFINED,
    CorrelationResult,
    item_correlation,
    system_correlation,
)
from .human import alpha_level, human_labels

#: Per-item levels ("dialog" reads better for dialog-level data) and the system level.
ITEM_LEVELS = (TURN, "dialog")
LEVELS = ITEM_LEVELS + (SYSTEM,)
#: The evaluator name that ceiling records carry.
CEILING = "human ceiling"


@dataclass(frozen=True)
class Exclusions:
    """Why candidates of a cell were left out, counted per reason."""

    not_scored: int = 0
    failed: int = 0
    no_human_label: int = 0
    no_system: int = 0
    invalid_label: int = 0

    @property
    def total(self) -> int:
        return self.not_scored + self.failed + self.no_human_label + self.no_system + self.invalid_label

    def to_dict(self) -> dict[str, int]:
        return {
            "not_scored": self.not_scored,
            "failed": self.failed,
            "no_human_label": self.no_human_label,
            "no_system": self.no_system,
            "invalid_label": self.invalid_label,
        }


@dataclass(frozen=True)
class AgreementCell:
    evaluator: str
    quality: str
    level: str
    result: CorrelationResult
    exclusions: Exclusions

    @property
    def n(self) -> int:
        return self.result.n

    @property
    def excluded(self) -> int:
        return self.exclusions.total

    @property
    def failed(self) -> int:
        return self.exclusions.failed


@dataclass(frozen=True)
class EvaluatorRow:
    evaluator: str
    #: (quality, level) -> cell
    cells: Mapping[tuple[str, str], AgreementCell]
    #: The evaluator's failures over the whole run (``failures`` argument, else
    #: its None/NaN scores).
    failures: int


@dataclass(frozen=True)
class AgreementTable:
    subset: str
    qualities: tuple[str, ...]
    levels: tuple[str, ...]
    aggregation: Aggregation
    n_boot: int
    seed: int
    confidence: float
    #: Examples in the subset.
    n_examples: int
    rows: tuple[EvaluatorRow, ...]
    #: (quality, level) -> ceiling
    ceiling: Mapping[tuple[str, str], HumanCeiling]
    #: quality -> examples whose pooled human label came from a tied majority vote
    ties: Mapping[str, int]

    @property
    def evaluators(self) -> list[str]:
        return [row.evaluator for row in self.rows]

    def row(self, evaluator: str) -> EvaluatorRow:
        for row in self.rows:
            if row.evaluator == evaluator:
                return row
        raise KeyError(f"no evaluator {evaluator!r} in the table (have: {', '.join(self.evaluators)})")

    def cell(self, evaluator: str, quality: str, level: str = TURN) -> AgreementCell:
        return self.row(evaluator).cells[(quality, level)]

    def to_records(self, *, include_ceiling: bool = True) -> list[dict[str, Any]]:
        """One flat dict per cell (and per ceiling), all with the same keys;
        undefined values are None so the records can be written as JSON or CSV."""
        records = []
        for row in self.rows:
            for quality in self.qualities:
                for level in self.levels:
                    cell = row.cells[(quality, level)]
                    record = self._record(row.evaluator, "evaluator", quality, level)
                    record.update(cell.result.to_dict())
                    record.update(cell.exclusions.to_dict())
                    record.update(excluded=cell.excluded, level=level)
                    records.append(record)
        if include_ceiling:
            for quality in self.qualities:
                for level in self.levels:
                    ceiling = self.ceiling[(quality, level)]
                    record = self._record(CEILING, "ceiling", quality, level)
                    record.update({m: _clean(ceiling.coefficient(m)) for m in METHODS})
                    record.update({f"{m}_{end}": _clean(bound) for m in METHODS
                                   for end, bound in zip(("lo", "hi"), ceiling.ci(m))})
                    reasons = (*ceiling.reasons, *((ceiling.ci_reason,) if ceiling.ci_reason else ()))
                    record.update(n=ceiling.n_items, n_items=ceiling.n_items, alpha=_clean(ceiling.alpha),
                                  alpha_level=ceiling.alpha_level, kappa=_clean(ceiling.kappa),
                                  percent_agreement=_clean(ceiling.percent_agreement),
                                  reason="; ".join(reasons) or None)
                    records.append(record)
        return records

    def _record(self, evaluator: str, kind: str, quality: str, level: str) -> dict[str, Any]:
        record: dict[str, Any] = {
            "evaluator": evaluator, "kind": kind, "quality": quality, "level": level,
            "subset": self.subset, "aggregation": self.aggregation.value,
        }
        for method in METHODS:
            record.update({method: None, f"{method}_p": None, f"{method}_lo": None, f"{method}_hi": None})
        record.update(n=None, n_items=None, excluded=None, failed=None, not_scored=None,
                      no_human_label=None, no_system=None, invalid_label=None, ties=self.ties.get(quality, 0),
                      alpha=None, alpha_level=None, kappa=None, percent_agreement=None, reason=None)
        return record


def agreement_table(
    examples: Sequence[Example],
    evaluator_scores: Mapping[str, Mapping[str, float | None]],
    qualities: Sequence[str],
    *,
    subset: Subset = ALL,
    levels: Sequence[str] = (TURN,),
    aggregation: Aggregation = Aggregation.MEAN,
    n_boot: int = 1000,
    seed: int = 0,
    failures: Mapping[str, int] | None = None,
    confidence: float = 0.95,
    ceiling_items: Collection[str] | None = None,
) -> AgreementTable:
    """Correlate every evaluator with the pooled human labels of every quality.

    ``ceiling_items``: the human ceiling is computed on these items of the subset (the items
    the judges are compared on, core.evaluation.compared_items); None: on the whole subset."""
    levels = tuple(levels)
    unknown = [lv for lv in levels if lv not in LEVELS]
    if unknown:
        raise ValueError(f"unknown level {unknown[0]!r}: use {', '.join(LEVELS)}")
    selected = subset.select(examples)
    ceiling_from = selected if ceiling_items is None else [ex for ex in selected if ex.id in ceiling_items]
    resamplings: dict[tuple[str, ...], bs.Resampling] = {}
    cells: dict[str, dict[tuple[str, str], AgreementCell]] = {name: {} for name in evaluator_scores}
    ceiling: dict[tuple[str, str], HumanCeiling] = {}
    ties: dict[str, int] = {}
    for quality in qualities:
        labels = human_labels(selected, quality, aggregation)
        ties[quality] = labels.n_ties
        rated = [ex for ex in selected if ex.id in labels.values]
        for level in levels:
            ceiling[(quality, level)] = human_ceiling(ceiling_from, quality, level=SYSTEM if level == SYSTEM else TURN,
                                                      n_boot=n_boot, seed=seed, confidence=confidence)
        for name, scores in evaluator_scores.items():
            for level in levels:
                cells[name][(quality, level)] = _correlation_cell(
                    name, quality, level, rated, labels.values, labels.scale, scores, resamplings,
                    n_boot=n_boot, seed=seed, confidence=confidence,
                )
    rows = tuple(
        EvaluatorRow(name, cells[name], _failures(name, scores, failures))
        for name, scores in evaluator_scores.items()
    )
    return AgreementTable(
        subset.label, tuple(qualities), levels, aggregation, n_boot, seed, confidence,
        len(selected), rows, ceiling, ties,
    )


def _correlation_cell(
    evaluator: str, quality: str, level: str, rated: list[Example], human: Mapping[str, RatingValue],
    scale: Scale | None, scores: Mapping[str, float | None],
    resamplings: dict[tuple[str, ...], bs.Resampling], *, n_boot: int, seed: int, confidence: float,
) -> AgreementCell:
    not_scored = failed = no_human_label = no_system = 0
    kept: list[Example] = []
    absent = object()
    by_system = level == SYSTEM
    # One pass of 10^5 items per evaluator: a float score is checked for NaN inline (is_missing's answer).
    for ex in rated:
        score = scores.get(ex.id, absent)
        if score is absent:
            not_scored += 1
        elif score is None or (score != score if score.__class__ is float else is_missing(score)):
            failed += 1
        elif human[ex.id] is None:
            no_human_label += 1
        elif by_system and not ex.system:
            no_system += 1
        else:
            kept.append(ex)
    counts = dict(not_scored=not_scored, failed=failed, no_human_label=no_human_label, no_system=no_system,
                  invalid_label=0)
    exclusions = Exclusions(**counts)
    result_level = SYSTEM if level == SYSTEM else TURN
    if scale is not None and not scale.is_numeric:
        result = CorrelationResult(
            UNDEFINED, UNDEFINED, UNDEFINED, n=0, n_excluded=exclusions.total + len(kept), n_items=0,
            level=result_level, n_boot=n_boot, confidence=confidence, seed=seed,
            reason=f"{quality!r} has categorical labels, which a score does not correlate with; judges are "
                   "compared label against label (agreement, kappa, alpha: dialjudge judge)",
        )
        return AgreementCell(evaluator, quality, level, result, Exclusions(**{**counts, "invalid_label": len(kept)}))
    key = tuple(ex.id for ex in kept)
    x = np.fromiter((float(scores[i]) for i in key), dtype=np.float64, count=len(key))  # type: ignore[arg-type]
    y = np.fromiter((float(human[i]) for i in key), dtype=np.float64, count=len(key))  # type: ignore[arg-type]
    groups = [ex.group_id for ex in kept]
    resampling = None
    if n_boot and kept:
        resampling = resamplings.get(key)
        if resampling is None:
            resampling = resamplings[key] = bs.resample(len(kept), groups, n_boot=n_boot, seed=seed)
    common: dict[str, Any] = dict(n_excluded=exclusions.total, n_boot=n_boot, seed=seed, confidence=confidence,
                  resampling=resampling)
    if level == SYSTEM:
        result = system_correlation(x, y, [ex.system or "" for ex in kept], groups, **common)
    else:
        result = item_correlation(x, y, groups, **common)
    if not kept and not rated:
        result = replace(result, reason=f"no example in the subset has ratings of {quality!r}")
    return AgreementCell(evaluator, quality, level, result, exclusions)


# -- categorical / binary qualities ------------------------------------------------


@dataclass(frozen=True)
class CategoricalCell:
    evaluator: str
    quality: str
    result: CategoricalResult
    exclusions: Exclusions


@dataclass(frozen=True)
class CategoricalRow:
    evaluator: str
    #: quality -> cell
    cells: Mapping[str, CategoricalCell]
    failures: int


@dataclass(frozen=True)
class CategoricalTable:
    subset: str
    qualities: tuple[str, ...]
    aggregation: Aggregation
    n_examples: int
    rows: tuple[CategoricalRow, ...]
    #: quality -> human ceiling (alpha, mean pairwise kappa and percent agreement)
    ceiling: Mapping[str, HumanCeiling]
    ties: Mapping[str, int]

    @property
    def evaluators(self) -> list[str]:
        return [row.evaluator for row in self.rows]

    def row(self, evaluator: str) -> CategoricalRow:
        for row in self.rows:
            if row.evaluator == evaluator:
                return row
        raise KeyError(f"no evaluator {evaluator!r} in the table (have: {', '.join(self.evaluators)})")

    def cell(self, evaluator: str, quality: str) -> CategoricalCell:
        return self.row(evaluator).cells[quality]

    def to_records(self, *, include_ceiling: bool = True) -> list[dict[str, Any]]:
        """One flat dict per cell (and per ceiling), all with the same keys."""
        records = []
        for row in self.rows:
            for quality in self.qualities:
                cell = row.cells[quality]
                record = {"evaluator": row.evaluator, "kind": "evaluator", "quality": quality, "subset": self.subset,
                          "aggregation": self.aggregation.value, **cell.result.to_dict(),
                          **cell.exclusions.to_dict()}
                records.append(record)
        if include_ceiling:
            for quality in self.qualities:
                c = self.ceiling[quality]
                record = {"evaluator": CEILING, "kind": "ceiling", "quality": quality, "subset": self.subset,
                          "aggregation": self.aggregation.value,
                          "percent_agreement": _clean(c.percent_agreement), "kappa": _clean(c.kappa),
                          "alpha": _clean(c.alpha), "alpha_level": c.alpha_level, "n": c.n_items,
                          "excluded": None, "ties": self.ties.get(quality, 0),
                          "reason": "; ".join(c.reasons) or None,
                          **{k: None for k in Exclusions().to_dict()}}
                records.append(record)
        return records


def categorical_table(
    examples: Sequence[Example],
    evaluator_labels: Mapping[str, Mapping[str, RatingValue]],
    qualities: Sequence[str],
    *,
    subset: Subset = ALL,
    aggregation: Aggregation = Aggregation.MAJORITY,
    failures: Mapping[str, int] | None = None,
    kappa_weights: str | None = None,
) -> CategoricalTable:
    """Percent agreement, Cohen's kappa and Krippendorff's alpha of each
    evaluator's labels against the (by default majority-voted) human labels.

    Labels are compared on the quality's scale: numbers for numeric scales
    (``"1"`` and ``1`` are the same label), text for categorical ones; a label
    outside the scale is excluded as ``invalid_label``.
    """
    selected = subset.select(examples)
    rows = []
    ceiling = {q: human_ceiling(selected, q) for q in qualities}
    pooled = {q: human_labels(selected, q, aggregation) for q in qualities}
    for name, labels in evaluator_labels.items():
        cells = {q: _categorical_cell(name, q, selected, pooled[q].values, pooled[q].tied, pooled[q].scale,
                                      labels, kappa_weights)
                 for q in qualities}
        rows.append(CategoricalRow(name, cells, _failures(name, labels, failures)))
    return CategoricalTable(subset.label, tuple(qualities), aggregation, len(selected), tuple(rows), ceiling,
                            {q: pooled[q].n_ties for q in qualities})


def _categorical_cell(evaluator: str, quality: str, selected: list[Example], human: Mapping[str, RatingValue],
                      tied: frozenset[str], scale: Scale | None, labels: Mapping[str, RatingValue],
                      kappa_weights: str | None) -> CategoricalCell:
    counts = dict(not_scored=0, failed=0, no_human_label=0, no_system=0, invalid_label=0)
    judge: list[RatingValue] = []
    people: list[RatingValue] = []
    tie_flags: list[bool] = []
    for ex in selected:
        if ex.id not in human:
            continue
        if ex.id not in labels:
            counts["not_scored"] += 1
            continue
        if is_missing(labels[ex.id]):
            counts["failed"] += 1
            continue
        label = _on_scale(labels[ex.id], scale)
        if label is None:
            counts["invalid_label"] += 1
        elif human[ex.id] is None:
            counts["no_human_label"] += 1
        else:
            judge.append(label)
            people.append(_on_scale(human[ex.id], scale))
            tie_flags.append(ex.id in tied)
    level = alpha_level(scale)
    result = categorical_agreement(judge, people, level=level, tied=tie_flags, scale=scale,
                                   kappa_weights=kappa_weights)
    exclusions = Exclusions(**counts)
    result = CategoricalResult(result.percent_agreement, result.kappa, result.alpha, result.alpha_level,
                               result.n, exclusions.total, result.n_ties, result.reason)
    return CategoricalCell(evaluator, quality, result, exclusions)


def _on_scale(value: RatingValue, scale: Scale | None) -> RatingValue:
    """The label as the scale knows it, or None when it is not on the scale."""
    if scale is None or not scale.is_numeric:
        text = str(value)
        return text if scale is None or scale.contains(text) else None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and scale.contains(number) else None


def _failures(name: str, scores: Mapping[str, Any], failures: Mapping[str, int] | None) -> int:
    if failures is not None and name in failures:
        return int(failures[name])
    return sum(1 for v in scores.values() if is_missing(v))


def _clean(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value
