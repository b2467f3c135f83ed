"""Datasets: which there are, opening one, what it holds, and how well its annotators agree.

The annotators' agreement here is the human ceiling of the whole set, per quality and
level (``dialjudge datasets stats``, the Datasets screen). A run's ceiling is computed
on the items its judges are compared on (core.evaluation.compared_items), not here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..adversarial.builder import KINDS as ADVERSARIAL_KINDS
from ..adversarial.builder import BuildReport, make_adversarial_set
from ..adversarial.heldout import with_held_out_reference
from ..dataset_catalogue import DEFAULT_DATASET, DatasetEntry, list_datasets, open_dataset
from ..describe import DatasetSummary, describe
from ..evaluation import EvaluationReport, evaluate, reference_metric_scores, split_subsets
from ..format import rater_counts_cell
from ..loaders import save_dataset
from ..model import Dataset, Level, ScaleKind
from ..stats.ceiling import CeilingRow, ceiling_table
from ..stats.label_agreement import (
    AGGREGATE_ONLY_TEXT,
    LabelCeiling,
    TieRule,
    is_aggregate_only,
    label_ceiling,
    majority_labels,
)
from ..stats.rater_pairs import MIN_SHARED_ITEMS
from .profiles import DEFAULT_PROFILE, profile_metric_ids
from .reports import agreement_levels
from .requests import AgreementRequest

__all__ = ["DEFAULT_DATASET", "ADVERSARIAL_KINDS", "DatasetEntry", "DatasetSummary", "list_datasets", "open_dataset",
           "describe", "quality_annotators", "DatasetStatistics", "LabelCeilingRow", "dataset_statistics",
           "metrics_report", "metric_scores", "AdversarialSet", "make_adversarial", "MIN_SHARED_ITEMS"]


def quality_annotators(dataset: Dataset, quality: str, level: Level, annotators: int, raters: int | None = None) -> str:
    """The annotator counts a summary shows: the raters over the set and on one item (``5 / 3`` under
    ``RATER_COUNTS_HEADER``; ``annotators`` alone where ``raters`` is not given), or that the file
    holds one aggregate label."""
    members = [ex for ex in dataset if ex.level is level]
    if is_aggregate_only(members, quality):
        return AGGREGATE_ONLY_TEXT
    return str(annotators) if raters is None else rater_counts_cell(raters, annotators)


@dataclass(frozen=True)
class LabelCeilingRow:
    """The annotators' agreement on one label quality at one level."""

    quality: str
    level: str
    scale: str
    ceiling: LabelCeiling
    #: Items whose annotators tie (None: one aggregate label, ties cannot be seen).
    majority_ties: int | None


@dataclass(frozen=True)
class DatasetStatistics:
    """The human ceiling of every quality: numeric ones by correlation, label ones by agreement and κ."""

    dataset: str
    numeric: tuple[CeilingRow, ...]
    labels: tuple[LabelCeilingRow, ...]
    tie_rule: TieRule


def _is_label_row(row: CeilingRow) -> bool:
    return row.scale.startswith((ScaleKind.CATEGORICAL.value, ScaleKind.BINARY.value))


def dataset_statistics(dataset: Dataset, *, tie_rule: str = TieRule.EXCLUDE.value) -> DatasetStatistics:
    rule = TieRule(tie_rule)
    rows = ceiling_table(dataset.examples)
    labels = []
    for r in (r for r in rows if _is_label_row(r)):
        members = [ex for ex in dataset.examples if ex.level.value == r.level and r.quality in ex.ratings]
        ceiling = label_ceiling(members, r.quality, rule)
        ties = None if ceiling.aggregate_only else majority_labels(members, r.quality, rule).n_ties
        labels.append(LabelCeilingRow(r.quality, r.level, r.scale, ceiling, ties))
    return DatasetStatistics(dataset.name, tuple(r for r in rows if not _is_label_row(r)), tuple(labels), rule)


def metrics_report(dataset: Dataset, request: AgreementRequest, *, subset: str = "all",
                   metric_ids: Sequence[str] | None = None, profile: str = DEFAULT_PROFILE) -> EvaluationReport:
    """The reference-based metrics (and the response-length baseline) against the humans;
    ``profile`` names the code that computes them (core.api.profiles)."""
    subsets = split_subsets(dataset, subset)
    return evaluate(dataset, qualities=list(request.qualities) or None, subset=subsets[0],
                    extra_subsets=subsets[1:], levels=agreement_levels(request.level, dataset),
                    aggregation=request.aggregation, metric_ids=profile_metric_ids(profile, metric_ids),
                    n_boot=request.n_boot,
                    seed=request.seed, include_length=True)


def metric_scores(dataset: Dataset, profile: str = DEFAULT_PROFILE) -> dict[str, dict[str, float | None]]:
    """Every reference-based metric's 0-1 scores of the dataset's items, by display label."""
    scores, _notes = reference_metric_scores(dataset, profile_metric_ids(profile))
    return {name: dict(column) for name, column in scores.items()}


@dataclass(frozen=True)
class AdversarialSet:
    dataset: Dataset
    report: BuildReport
    path: Path
    #: Contexts given a held-out reference (0: none asked for).
    held_out_references: int = 0


def make_adversarial(source: Dataset, out: Path, *, kinds: Sequence[str] = ADVERSARIAL_KINDS, per_item: int = 3,
                     n: int = 100, seed: int = 1, include_fact: bool = True, include_other_candidates: bool = False,
                     held_out_reference: str | None = None) -> AdversarialSet:
    """Build a KdConv-ADV / DSTC7-ADV style set from ``source`` and save it as native JSONL at ``out``."""
    given = 0
    if held_out_reference:
        source, given = with_held_out_reference(source, held_out_reference)
    dataset, report = make_adversarial_set(source, kinds=kinds, per_item=per_item, n=n, seed=seed,
                                           include_fact=include_fact,
                                           include_other_candidates=include_other_candidates)
    return AdversarialSet(dataset, report, save_dataset(dataset, out), given)
