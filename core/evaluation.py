"""From a dataset and evaluator scores to the agreement records that reports print.

Reference-based metrics are scored here; LLM judge scores come from runs and are
passed in as more evaluators. Every exclusion is counted and every caveat (no
references in the data, METEOR without WordNet) becomes a note on the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from .adversarial.builder import CONTRADICTS
from .describe import left_out_at_load
from .errors import DataError
from .metrics import score_examples
from .metrics.registry import metric_info, resolve_metric_ids, unavailable_reason
from .model import TAG_CLOSED, TAG_OPEN, Aggregation, Dataset, Example, Level
from .stats import agreement_table
from .stats.baselines import LENGTH_EVALUATOR, length_scores
from .stats.small_samples import MIN_CONTEXTS
from .subsets import Subset, parse_subset

Scores = Mapping[str, Mapping[str, "float | None"]]


@dataclass
class EvaluationReport:
    dataset: str
    qualities: list[str]
    levels: list[str]
    subset: str
    records: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    evaluators: list[str] = field(default_factory=list)
    #: Every subset the records cover (the first is ``subset``).
    subsets: list[str] = field(default_factory=list)
    #: The evaluator scores the records were computed from (metrics 0-1, judges normalised 0-1).
    scores: dict[str, Mapping[str, float | None]] = field(default_factory=dict)

    @property
    def item_level(self) -> str:
        return next((lv for lv in self.levels if lv != "system"), "turn")


def reference_metric_scores(dataset: Dataset, metric_ids: Sequence[str] | None = None
                            ) -> tuple[dict[str, dict[str, float]], list[str]]:
    """Score every eligible item with the reference-based metrics; keys are display labels."""

    result = score_examples(dataset.examples, metric_ids)
    scores = {info.label: dict(result.values[info.id]) for info in result.metrics}
    notes = list(result.notes)
    for reason, count in result.skip_counts.items():
        if count:
            label = getattr(reason, "value", str(reason))
            notes.append(f"reference-based metrics skipped {count} items: {label}")
    if result.n_scored == 0 and len(dataset):
        notes.append(f"{dataset.name} has no reference responses for its candidates, so reference-based "
                     "metrics cannot score it; only the human ceiling (and LLM judges) apply")
    return scores, notes


def missing_metric_reasons(metric_ids: Sequence[str] | None) -> dict[str, str]:
    """Display label -> why that metric cannot be computed here (METEOR 1.5 without Java)."""
    found = {}
    for metric_id in resolve_metric_ids(metric_ids):
        reason = unavailable_reason(metric_id)
        if reason is not None:
            found[metric_info(metric_id).label] = reason
    return found


def compared_items(examples: Iterable[Example], judge_columns: Mapping[str, Mapping[str, object]]
                   ) -> frozenset[str] | None:
    """The items a table's judges are compared on, on which its human ceiling is computed too:
    every item that some judge column holds (scored or failed). None when there is no judge
    column: then the ceiling covers the whole view, as the metrics do.

    The one rule for the command line, the app's Scores screen, exports and reports: a run of
    12 items is set beside the humans' agreement on those 12 items, not on the whole set."""
    if not judge_columns:
        return None
    judged: set[str] = set()
    for column in judge_columns.values():
        judged.update(column)
    return frozenset(ex.id for ex in examples if ex.id in judged)


def resolve_quality(dataset: Dataset, name: str) -> str:
    """The dataset's own spelling of a quality typed in any case ("overall" -> "Overall")."""
    if name in dataset.qualities:
        return name
    matches = [q for q in dataset.qualities if q.lower() == name.lower()]
    return matches[0] if len(matches) == 1 else name


def default_qualities(dataset: Dataset, level: Level = Level.TURN) -> list[str]:
    return list(dataset.qualities_at(level)) or list(dataset.qualities)


def split_subsets(dataset: Dataset, subset: str = "all") -> list[str]:
    """The subsets a report shows: the chosen one, plus open and closed separately (paper 000,
    Tables 5-8) when the whole set is shown and holds both kinds."""

    if subset != "all":
        return [subset]
    ended = {ex.ended for ex in dataset}
    return ["all", TAG_OPEN, TAG_CLOSED] if {TAG_OPEN, TAG_CLOSED} <= ended else ["all"]


def evaluate(dataset: Dataset, *, qualities: Sequence[str] | None = None, subset: str = "all",
             extra_subsets: Sequence[str] = (), levels: Sequence[str] = ("turn",), aggregation: Aggregation = Aggregation.MEAN,
             metric_ids: Sequence[str] | None = None, extra_scores: Scores | None = None,
             failures: Mapping[str, int] | None = None, include_metrics: bool = True,
             n_boot: int = 1000, seed: int = 0, include_length: bool = False,
             judge_scores: Scores | None = None) -> EvaluationReport:
    """The full agreement table of reference metrics (and any extra evaluators) vs the humans.

    ``include_length`` adds the "response length" baseline row (tokens of the candidate), so a
    reader sees when an evaluator is no better than counting words. ``judge_scores`` are LLM
    judge columns: they join ``extra_scores``, and the human ceiling is computed on the items
    they judged (:func:`compared_items`)."""

    if not len(dataset):
        raise DataError(f"{dataset.name} has no items")
    item_level = Level.DIALOG if "dialog" in levels else Level.TURN
    chosen = list(qualities) if qualities else default_qualities(dataset, item_level)
    known = dataset.qualities
    chosen = [resolve_quality(dataset, q) for q in chosen]
    unknown = [q for q in chosen if q not in known]
    if unknown:
        raise DataError(f"{dataset.name} has no quality {unknown[0]!r} (qualities: {', '.join(known)})")
    for spec in (subset, *extra_subsets):
        try:
            keep = parse_subset(spec)
        except ValueError as exc:
            raise DataError(str(exc)) from None
        if not any(keep(ex) for ex in dataset):
            raise DataError(f"subset {spec!r} selects no item of {dataset.name} "
                            f"(systems: {', '.join(dataset.systems) or 'none'}; tags: {', '.join(dataset.tags) or 'none'})")

    evaluator_scores: dict[str, Mapping[str, float | None]] = {}
    notes: list[str] = []
    missing = missing_metric_reasons(metric_ids) if include_metrics else {}
    if include_metrics:
        metric_scores, metric_notes = reference_metric_scores(dataset, metric_ids)
        evaluator_scores.update(metric_scores)
        notes.extend(metric_notes)
    if extra_scores:
        evaluator_scores.update(extra_scores)
    if judge_scores:
        evaluator_scores.update(judge_scores)
    ceiling_items = compared_items(dataset.examples, judge_scores or {})
    if include_length and any(ex.candidate is not None for ex in dataset):

        evaluator_scores[LENGTH_EVALUATOR] = length_scores(dataset.examples)

    subsets = list(dict.fromkeys([subset, *extra_subsets]))
    records: list[dict[str, Any]] = []
    for name in subsets:
        table = agreement_table(dataset.examples, evaluator_scores, chosen, subset=Subset(name),
                                levels=tuple(levels), aggregation=aggregation, n_boot=n_boot, seed=seed,
                                failures=failures, ceiling_items=ceiling_items)
        for rec in table.to_records():
            rec["subset"] = name
            rec["is_ceiling"] = rec.get("evaluator") == "human ceiling"
            if rec.get("evaluator") in missing:  # the row itself says why it has no numbers
                rec["reason"] = missing[rec["evaluator"]]
            records.append(rec)
    if CONTRADICTS in chosen:
        notes.append(f"'{CONTRADICTS}' is 1 for an adversarial candidate: an evaluator that catches them correlates "
                     "negatively with it (see the discernment table)")
    ci_note = (f"bootstrap: {n_boot} resamples of contexts (seed {seed}), 95% expanded percentile CI, none on fewer "
               f"than {MIN_CONTEXTS} contexts" if n_boot
               else "no confidence intervals (--bootstrap 0)")
    labelled = [q for q in chosen if not known[q].is_numeric]
    pooled = (f"{aggregation.value} of the annotators" if not labelled else
              f"majority of the annotators for {', '.join(labelled)}"
              + (f", {aggregation.value} for the others" if len(labelled) < len(chosen) else ""))
    notes.append(f"human labels: {pooled}; {ci_note}")
    left_out = left_out_at_load(dataset)
    if left_out:  # the human labels rest on what loading kept: say what it left out
        notes.append(f"left out at load: {left_out}")
    return EvaluationReport(dataset.name, chosen, list(levels), subset, records, notes,
                            list(evaluator_scores), subsets, evaluator_scores)
