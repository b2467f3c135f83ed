"""Use cases of "label a few, trust the rest", for a stored run and its dataset.

* :func:`alt_test_for_run` — can the run's judge replace an annotator? (the
  alternative annotator test, beside the human ceiling);
* :func:`estimate_for_run` — the mean human label of the run's items (or its
  pass rate) from a few labels: PPI++ with the judge beside the labels alone,
  Rogan–Gladen for pass/fail qualities, and the selective-evaluation threshold
  where the judge gave answer probabilities.

The labelled items come from a labels file, from the Review screen's own
ratings, or are drawn at random from a dataset that has labels everywhere
(``labelled=N, seed=S``): then the mean of every label is known and shown for
reference, so a user can see how many labels they would need.

Judge scores are stored on 0-1; here they are put back on the humans' scale
(a label scale's judge verdict is its score rounded to the nearer end).
Both front ends call these functions and show the records they return.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..config import Config
from ..errors import DataError, DialjudgeError
from ..evaluation import resolve_quality
from ..judges.store.run_store import RunStore
from ..judges.types import Judgment
from ..loaders._common import json_lines
from ..model import Aggregation, Dataset, RatingValue, Scale, ScaleKind
from ..stats.active import active_mean, distribution_spread, draw_labels, label_probabilities
from ..stats.alt_test import DEFAULT_ANNOTATORS, EPSILON_BY_ANNOTATORS, AltTestResult, FdrMethod, alt_test, measure_for
from ..stats.ceiling import HumanCeiling, human_ceiling
from ..stats.human import annotator_matrix
from ..stats.ppi import Estimate, difference, labels_only_mean, ppi_mean
from ..stats.rogan_gladen import DEFAULT_RESAMPLES, RoganGladen, rogan_gladen
from ..stats.selective import DEFAULT_ALPHA, DEFAULT_DELTA, SelectiveThreshold, answer_confidence, selective_threshold
from ..subsets import parse_subset
from .stored import dataset_of_run


def is_pass_fail(scale: Scale | None) -> bool:
    return scale is not None and scale.kind is ScaleKind.BINARY


def judge_value(normalized: float, scale: Scale | None) -> RatingValue:
    """A 0-1 judge score on the humans' scale: graded scales linearly, binary ones by the nearer end,
    categorical ones by the nearer label position."""
    if scale is None:
        return normalized
    if scale.kind is ScaleKind.BINARY:
        assert scale.min is not None and scale.max is not None
        return scale.max if normalized >= 0.5 else scale.min
    if scale.kind is ScaleKind.CATEGORICAL:
        if not scale.labels:
            raise DialjudgeError("a categorical quality without named labels cannot be compared with a 0-1 score")
        return scale.labels[int(round(normalized * (len(scale.labels) - 1)))]
    return scale.denormalize(normalized)


@dataclass(frozen=True)
class RunJudgments:
    """What the use cases need from a run: its dataset, quality and each judge's judgments."""

    run_id: int
    dataset: Dataset
    quality: str
    scale: Scale | None
    judgments: Mapping[str, Mapping[str, Judgment]]


def load_run(store: RunStore, run_id: int, *, quality: str | None = None, dataset: Dataset | None = None,
             app_config: Config | None = None) -> RunJudgments:
    """A run's judgments with its dataset (``dataset`` when it is the run's, else opened again)."""
    config = store.runs.get_run(run_id).run_config
    dataset = dataset_of_run(config, app_config, current=dataset)
    chosen = resolve_quality(dataset, quality) if quality else config.quality
    if not chosen or chosen not in dataset.qualities:
        raise DialjudgeError(f"run {run_id}: say which quality to compare with (--quality); "
                             f"{dataset.name} has {', '.join(dataset.qualities)}")
    judgments = store.judgments.load_judgments(run_id)
    if not judgments:
        raise DialjudgeError(f"run {run_id} has no judgments")
    return RunJudgments(run_id, dataset, chosen, dataset.qualities[chosen], judgments)


def _chosen_judges(run: RunJudgments, judges: Sequence[str] | None) -> list[str]:
    if not judges:
        return list(run.judgments)
    unknown = [j for j in judges if j not in run.judgments]
    if unknown:
        raise DialjudgeError(f"run {run.run_id} has no judge {unknown[0]!r} (judges: {', '.join(run.judgments)})")
    return list(judges)


# -- the alternative annotator test ------------------------------------------------------------------------


@dataclass(frozen=True)
class AltTestReport:
    run_id: int
    dataset: str
    quality: str
    judge: str
    #: The annotator preset the margin came from, or None when it was set by hand.
    annotators: str | None
    result: AltTestResult
    ceiling: HumanCeiling
    #: How the judge's score met the annotators': "continuous" (as it was) or "rounded" to the scale's points.
    judge_values: str = "continuous"
    #: Why the comparison may favour the annotators (a continuous judge against integer ratings), if it may.
    caution: str | None = None

    def records(self) -> list[dict[str, Any]]:
        """One row per annotator, for tables and files."""
        base = {"run": self.run_id, "judge": self.judge, "quality": self.quality}
        return [{**base, **t.to_dict()} for t in self.result.tested]

    def summary(self) -> dict[str, Any]:
        return {"run": self.run_id, "dataset": self.dataset, "judge": self.judge, "quality": self.quality,
                "annotators": self.annotators, "judge_values": self.judge_values, "caution": self.caution,
                **self.result.to_dict(),
                "ceiling_spearman": None if math.isnan(self.ceiling.spearman) else self.ceiling.spearman,
                "ceiling_alpha": self.ceiling.alpha}


def alt_test_for_run(store: RunStore, run_id: int, *, quality: str | None = None, judges: Sequence[str] | None = None,
                     epsilon: float | None = None, annotators: str = DEFAULT_ANNOTATORS, q: float = 0.05,
                     fdr: FdrMethod = "by", dataset: Dataset | None = None,
                     app_config: Config | None = None, round_to_scale: bool = False) -> list[AltTestReport]:
    """The alternative annotator test of each judge of a run (``epsilon`` overrides the preset's margin).

    ``round_to_scale``: the judge's score is rounded to the nearest point of an ordinal scale before it is
    compared, as the annotators' ratings are integers (else a judge can never tie an annotator who matches
    another exactly); either way the report says which was used, and cautions where the scales differ.
    """
    if annotators not in EPSILON_BY_ANNOTATORS:
        raise DialjudgeError(f"annotators must be one of {', '.join(EPSILON_BY_ANNOTATORS)}, not {annotators!r}")
    run = load_run(store, run_id, quality=quality, dataset=dataset, app_config=app_config)
    margin = EPSILON_BY_ANNOTATORS[annotators] if epsilon is None else epsilon
    matrix = annotator_matrix(run.dataset.examples, run.quality)
    humans = {a: {item: v for item, v in zip(matrix.example_ids, row) if v is not None}
              for a, row in zip(matrix.annotators, matrix.values)}
    judged = {item for by_item in run.judgments.values() for item, j in by_item.items() if j.normalized is not None}
    # The ceiling on the items the judges are tested on, as the alt-test's annotators are.
    ceiling = human_ceiling([ex for ex in run.dataset.examples if ex.id in judged], run.quality)
    rounding = round_to_scale and _has_points(run.scale)
    reports = []
    for judge in _chosen_judges(run, judges):
        values = {item: judge_value(j.normalized, run.scale) for item, j in run.judgments[judge].items()
                  if j.normalized is not None}
        if rounding:
            values = {item: _nearest_point(float(v), run.scale) for item, v in values.items()}  # type: ignore[arg-type]
        caution = None if rounding else _scale_caution(values, run.scale)
        try:
            result = alt_test(values, humans, measure=measure_for(run.scale), epsilon=margin, q=q, fdr=fdr)
        except ValueError as exc:
            raise DialjudgeError(str(exc)) from None
        reports.append(AltTestReport(run_id, run.dataset.name, run.quality, judge,
                                     annotators if epsilon is None else None, result, ceiling,
                                     "rounded" if rounding else "continuous", caution))
    return reports


def _has_points(scale: Scale | None) -> bool:
    """An ordinal scale: integer points from min to max, as annotators rate it."""
    return scale is not None and scale.kind is ScaleKind.ORDINAL


def _nearest_point(value: float, scale: Scale | None) -> float:
    assert scale is not None and scale.min is not None and scale.max is not None
    return float(min(scale.max, max(scale.min, math.floor(value + 0.5))))  # halves up, not to even


def _scale_caution(values: Mapping[str, RatingValue], scale: Scale | None) -> str | None:
    """A caution when a judge's continuous scores meet annotators' integer points."""
    if not _has_points(scale):
        return None
    off_points = sum(1 for v in values.values() if isinstance(v, (int, float)) and float(v) != round(float(v)))
    if not off_points:
        return None
    return (f"the judge's score falls between the scale's points on {off_points} of {len(values)} items while the "
            "annotators rate whole points: an annotator who matches another exactly cannot be tied by the judge, "
            "so the test leans towards the annotators (--round-to-scale rounds the judge's score to the points)")


# -- estimates from a few labels -----------------------------------------------------------------------------


@dataclass(frozen=True)
class EstimateReport:
    run_id: int
    dataset: str
    quality: str
    judge: str
    subset: str
    #: Where the labels came from, in words.
    source: str
    labels_only: Estimate
    judge_assisted: Estimate
    rogan_gladen: RoganGladen | None = None
    selective: SelectiveThreshold | None = None
    #: The mean of every human label of these items, when the dataset has them all (a drawn sample).
    reference: float | None = None
    #: Active inference: labels drawn by the judge's uncertainty, inverse-probability weighted.
    active: Estimate | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def estimates(self) -> list[Estimate]:
        out = [self.labels_only, self.judge_assisted]
        if self.rogan_gladen is not None and self.rogan_gladen.estimate is not None:
            out.append(self.rogan_gladen.estimate)
        if self.active is not None:
            out.append(self.active)
        return out

    def records(self) -> list[dict[str, Any]]:
        base = {"run": self.run_id, "judge": self.judge, "quality": self.quality, "subset": self.subset,
                "labels": self.source}
        rows = [{**base, **e.to_dict(), "reference": self.reference} for e in self.estimates]
        return rows


def read_labels_file(path: Path) -> dict[str, float]:
    """Human labels from a CSV (columns ``item_id`` and ``label``) or a JSON Lines file (the same keys)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: {exc.strerror or exc}") from None
    rows: list[dict[str, Any]]
    if path.suffix.lower() in (".jsonl", ".json"):
        rows = []
        for number, row in json_lines(text, str(path)):
            if not isinstance(row, dict):
                raise DataError(f"{path}, line {number}: expected an object with item_id and label")
            rows.append(row)
    else:
        rows = list(csv.DictReader(text.splitlines()))
    labels: dict[str, float] = {}
    for number, row in enumerate(rows, start=1):
        item, value = row.get("item_id"), row.get("label")
        if item in (None, "") or value in (None, ""):
            raise DataError(f"{path}, record {number}: needs item_id and label")
        try:
            number_value = float(value)
        except (TypeError, ValueError):
            raise DataError(f"{path}, record {number} (id {item!r}), field 'label': {value!r} is not a number") from None
        if not math.isfinite(number_value):
            raise DataError(f"{path}, record {number} (id {item!r}), field 'label': {value!r} is not a number")
        labels[str(item)] = number_value
    if not labels:
        raise DataError(f"{path}: no labels")
    return labels


def _human_label(example: Any, quality: str, scale: Scale | None) -> float | None:
    how = Aggregation.MAJORITY if is_pass_fail(scale) else Aggregation.MEAN
    value = example.human(quality, how)
    if value is None or isinstance(value, str):
        return None
    value = float(value)
    return None if math.isnan(value) else value


def estimate_for_run(store: RunStore, run_id: int, *, quality: str | None = None, judges: Sequence[str] | None = None,
                     subset: str = "all", labelled: int | None = None, seed: int = 0, active: bool = False,
                     labels: Mapping[str, float] | None = None, from_reviews: bool = False,
                     active_budget: int | None = None, n_boot: int = DEFAULT_RESAMPLES, alpha: float = DEFAULT_ALPHA, delta: float = DEFAULT_DELTA,
                     dataset: Dataset | None = None, app_config: Config | None = None) -> list[EstimateReport]:
    """Judge-assisted and labels-only estimates of the mean human label of a run's items, per judge.

    Exactly one label source: ``labelled`` (draw that many items with ``seed``
    among those the dataset labels), ``labels`` (item id -> label, on the
    quality's scale) or ``from_reviews`` (the reviewers' own ratings of this run).
    With given labels, ``active_budget`` (and ``seed``) name the :func:`label_next`
    plan the labels followed: its inverse-probability-weighted estimate is added.
    """
    if sum((labelled is not None, labels is not None, from_reviews)) != 1:
        raise DialjudgeError("give one source of labels: --labelled N, --labels FILE or --reviews")
    if active and labelled is None:
        raise DialjudgeError("active sampling draws its labels from a fully labelled dataset: give --labelled N")
    if active_budget is not None and labelled is not None:
        raise DialjudgeError("--active-budget names the plan given labels followed; with --labelled use --active")
    run = load_run(store, run_id, quality=quality, dataset=dataset, app_config=app_config)
    in_subset = {ex.id for ex in run.dataset.examples if parse_subset(subset)(ex)}
    if labels is None and from_reviews:
        labels = {item: r.own_rating for item, r in store.reviews.reviews(run_id).items() if r.own_rating is not None}
        if not labels:
            raise DialjudgeError(f"run {run_id} has no reviews with an own rating")
        source = f"{len(labels)} own ratings from the Review screen"
    elif labels is not None:
        source = f"{len(labels)} labels from a file"
    else:
        source = ""
    if labels is not None and run.scale is not None and is_pass_fail(run.scale):
        ends = (run.scale.min, run.scale.max)
        bad = [v for v in labels.values() if v not in ends]
        if bad:
            raise DialjudgeError(f"{run.quality} is pass/fail: every label must be {ends[0]:g} or {ends[1]:g}, "
                                 f"not {bad[0]:g}")
    reports = []
    for judge in _chosen_judges(run, judges):
        scored = {item: j for item, j in run.judgments[judge].items() if j.normalized is not None and item in in_subset}
        if labels is None:
            assert labelled is not None
            report = _drawn(run, judge, scored, subset, labelled, seed, n_boot, alpha, delta, active=active)
        else:
            report = _given(run, judge, scored, subset, labels, source, n_boot, seed, alpha, delta)
            if active_budget is not None:
                report = _with_plan(report, _plan(run, judge, scored, subset, active_budget, seed), labels)
        reports.append(report)
    return reports


def _drawn(run: RunJudgments, judge: str, scored: Mapping[str, Judgment], subset: str, labelled: int, seed: int,
           n_boot: int, alpha: float, delta: float, *, active: bool = False) -> EstimateReport:
    truth = {ex.id: _human_label(ex, run.quality, run.scale) for ex in run.dataset.examples if ex.id in scored}
    pool = sorted(item for item, v in truth.items() if v is not None)
    if not 2 <= labelled < len(pool) - 1:
        raise DialjudgeError(f"--labelled must be between 2 and {len(pool) - 2}: judge {judge!r} scored {len(pool)} "
                             f"items of {run.quality!r} that carry a human label in subset {subset!r}")
    rng = np.random.default_rng(seed)
    chosen = set(rng.choice(len(pool), size=labelled, replace=False).tolist())
    picked = {pool[k]: float(truth[pool[k]]) for k in chosen}  # type: ignore[arg-type]
    reference = float(np.mean([truth[i] for i in pool]))
    source = f"{labelled} of {len(pool)} items drawn at random (seed {seed})"
    report = _report(run, judge, scored, subset, picked, source, n_boot, seed, alpha, delta, reference=reference)
    if not active:
        return report
    plan = _plan(run, judge, {i: scored[i] for i in pool}, subset, labelled, seed)
    estimate = plan.estimate({i: float(truth[i]) for i in plan.to_label()})  # type: ignore[arg-type]
    return dataclasses.replace(report, active=estimate, notes=report.notes + (plan.note,))


@dataclass(frozen=True)
class LabelPlan:
    """Which items to label next (active statistical inference, Zrnic and Candès 2024).

    Every item of the pool is drawn independently with a probability proportional
    to the spread of the judge's answer distribution (its uncertainty), the
    expected number drawn being the budget. The draw is fixed by the seed, so the
    same plan comes back when the labels are in, and the inverse-probability-
    weighted estimate uses the very probabilities the items were drawn with.
    """

    run_id: int
    judge: str
    quality: str
    subset: str
    budget: int
    seed: int
    item_ids: tuple[str, ...]
    probabilities: tuple[float, ...]
    drawn: tuple[bool, ...]
    #: The judge's score of every item, on the humans' scale.
    judged: tuple[float, ...]
    note: str

    def to_label(self) -> list[str]:
        """The drawn items, the most uncertain first."""
        order = sorted((k for k, d in enumerate(self.drawn) if d), key=lambda k: (-self.probabilities[k], k))
        return [self.item_ids[k] for k in order]

    def missing(self, labels: Mapping[str, float]) -> list[str]:
        return [i for i in self.to_label() if i not in labels]

    def estimate(self, labels: Mapping[str, float]) -> Estimate:
        """The inverse-probability-weighted mean; every drawn item needs its label (else it would be biased)."""
        left = self.missing(labels)
        if left:
            raise DialjudgeError(f"{len(left)} of the {sum(self.drawn)} proposed items have no label yet "
                                 f"(next: {left[0]}); the active estimate needs them all")
        index = {item: k for k, item in enumerate(self.item_ids)}
        by_index = {index[i]: labels[i] for i in self.to_label()}
        estimate = active_mean(self.judged, self.probabilities, self.drawn, by_index)
        return dataclasses.replace(estimate, method="active (IPW)")


def _plan(run: RunJudgments, judge: str, scored: Mapping[str, Judgment], subset: str, budget: int, seed: int
          ) -> LabelPlan:
    scale = run.scale
    items = sorted(scored)
    if not 0 < budget <= len(items):
        raise DialjudgeError(f"the label budget must be between 1 and {len(items)}, the items judge {judge!r} scored")
    judgments = [scored[i] for i in items]
    values = [scale.denormalize(j.normalized) if scale is not None and scale.is_numeric  # type: ignore[arg-type]
              else float(judge_value(j.normalized, scale)) for j in judgments]  # type: ignore[arg-type]
    spreads = [_spread(j) for j in judgments]
    known = [s for s in spreads if s is not None]
    fallback = float(np.mean(known)) if known else 1.0
    uncertainty = [fallback if s is None else s for s in spreads]
    probabilities = label_probabilities(uncertainty, budget)
    drawn = draw_labels(probabilities, seed)
    note = (f"active: {int(drawn.sum())} items drawn (expected {budget}, seed {seed}) with probabilities from "
            f"{probabilities.min():.2f} to {probabilities.max():.2f}, by the spread of the judge's answer "
            "distribution (Zrnic and Candès 2024); inverse-probability weighted, so unbiased whatever the judge")
    if len(known) < len(spreads):
        note += f"; {len(spreads) - len(known)} items without answer probabilities got the mean spread"
    return LabelPlan(run.run_id, judge, run.quality, subset, budget, seed, tuple(items),
                     tuple(float(p) for p in probabilities), tuple(bool(d) for d in drawn), tuple(values), note)


def label_next(store: RunStore, run_id: int, *, budget: int, seed: int = 0, quality: str | None = None,
               judges: Sequence[str] | None = None, subset: str = "all", dataset: Dataset | None = None,
               app_config: Config | None = None) -> list[LabelPlan]:
    """Per judge of the run: the items to label next, most uncertain first, with their known probabilities."""
    run = load_run(store, run_id, quality=quality, dataset=dataset, app_config=app_config)
    in_subset = {ex.id for ex in run.dataset.examples if parse_subset(subset)(ex)}
    plans = []
    for judge in _chosen_judges(run, judges):
        scored = {item: j for item, j in run.judgments[judge].items() if j.normalized is not None and item in in_subset}
        plans.append(_plan(run, judge, scored, subset, budget, seed))
    return plans


def _spread(judgment: Judgment) -> float | None:
    if not judgment.distribution:
        return None
    values = {}
    for answer in judgment.distribution:
        try:
            values[answer] = float(answer)
        except ValueError:
            return None
    return distribution_spread(judgment.distribution, values)


def _with_plan(report: EstimateReport, plan: LabelPlan, labels: Mapping[str, float]) -> EstimateReport:
    notes = [plan.note, "the labels followed an uncertainty-driven plan, not a uniform draw: the labels-only and "
                        "PPI++ intervals assume a uniform one and may be off; the active line is the one to read"]
    left = plan.missing(labels)
    if left:
        notes[0] = (f"active: {len(left)} of the {sum(plan.drawn)} proposed items have no label yet (next: "
                    f"{left[0]}): the active estimate waits for them")
        return dataclasses.replace(report, notes=report.notes + tuple(notes))
    return dataclasses.replace(report, active=plan.estimate(labels), notes=report.notes + tuple(notes))


def _given(run: RunJudgments, judge: str, scored: Mapping[str, Judgment], subset: str, labels: Mapping[str, float],
           source: str, n_boot: int, seed: int, alpha: float, delta: float) -> EstimateReport:
    usable = {item: v for item, v in labels.items() if item in scored}
    notes = []
    if len(usable) < len(labels):
        notes.append(f"{len(labels) - len(usable)} labelled items were not scored by {judge} in subset {subset!r} "
                     "and are left out")
    if len(usable) < 2:
        raise DialjudgeError(f"only {len(usable)} labelled items were scored by judge {judge!r}")
    return _report(run, judge, scored, subset, usable, source, n_boot, seed, alpha, delta, notes=tuple(notes))


def _report(run: RunJudgments, judge: str, scored: Mapping[str, Judgment], subset: str, labels: Mapping[str, float],
            source: str, n_boot: int, seed: int, alpha: float, delta: float, *, reference: float | None = None,
            notes: tuple[str, ...] = ()) -> EstimateReport:
    scale = run.scale

    def on_scale(j: Judgment) -> float:
        value = judge_value(j.normalized, scale)  # type: ignore[arg-type]
        return float(value)  # type: ignore[arg-type]

    items = sorted(labels)
    rest = sorted(i for i in scored if i not in labels)
    if len(rest) < 2:
        raise DialjudgeError("every scored item is labelled: there is nothing for the judge to add")
    y = np.array([labels[i] for i in items])
    # PPI works with the judge's graded score even on a pass/fail quality (more information than the verdict).
    graded = [scale.denormalize(scored[i].normalized) if scale is not None and scale.is_numeric  # type: ignore[arg-type]
              else on_scale(scored[i]) for i in items]
    graded_rest = [scale.denormalize(scored[i].normalized) if scale is not None and scale.is_numeric  # type: ignore[arg-type]
                   else on_scale(scored[i]) for i in rest]
    notes_list = list(notes)
    try:
        only = labels_only_mean(y)
        assisted = ppi_mean(y, graded, graded_rest)
    except ValueError as exc:  # too few or all-equal labels: said, never a zero-width interval
        raise DialjudgeError(str(exc)) from None
    corrected = None
    selective = None
    if is_pass_fail(scale):
        assert scale is not None and scale.min is not None
        low = scale.min
        verdict = [1.0 if on_scale(scored[i]) != low else 0.0 for i in items]
        verdict_rest = [1.0 if on_scale(scored[i]) != low else 0.0 for i in rest]
        passes = [1.0 if v != low else 0.0 for v in y]
        corrected = rogan_gladen(passes, verdict, verdict_rest, n_boot=n_boot, seed=seed)
        if corrected.reason:
            notes_list.append(f"Rogan–Gladen: {corrected.reason}")
    maybe = [_confidence(scored[i]) for i in items]
    confidences = [c for c in maybe if c is not None]
    if len(confidences) == len(maybe):
        agrees = [_agrees(on_scale(scored[i]), labels[i], scale) for i in items]
        everything = [_confidence(scored[i]) for i in scored]
        selective = selective_threshold(confidences, agrees, alpha=alpha, delta=delta,
                                        all_confidence=[c for c in everything if c is not None])
    else:
        notes_list.append("no selective-evaluation threshold: the judge gave no answer probabilities "
                          "(use logprob or yesno mode)")
    if reference is not None:
        notes_list.append("reference: the mean of every human label of these items, known here because the dataset "
                          "labels them all")
    return EstimateReport(run.run_id, run.dataset.name, run.quality, judge, subset, source, only, assisted,
                          corrected, selective, reference, notes=tuple(notes_list))


def _confidence(judgment: Judgment) -> float | None:
    if judgment.distribution:
        return answer_confidence(judgment.distribution)
    return None


def _agrees(judged: float, label: float, scale: Scale | None) -> bool:
    """The judge agrees with the humans when both fall on the same point of the scale."""
    if scale is not None and scale.kind in (ScaleKind.ORDINAL, ScaleKind.CONTINUOUS):
        return round(judged) == round(label)
    return judged == label


def estimate_difference(a: EstimateReport, b: EstimateReport) -> dict[str, Estimate]:
    """``a - b`` for each estimator both reports hold (independent labelled samples)."""
    out = {"labels only": difference(a.labels_only, b.labels_only),
           "PPI++": difference(a.judge_assisted, b.judge_assisted)}
    return out


# -- layouts both front ends show -----------------------------------------------------------------------------

ALT_TEST_COLUMNS = ("annotator", "items", "judge aligns", "annotator aligns", "ρ judge", "ρ annotator", "t", "p",
                    "judge wins")
ESTIMATE_COLUMNS = ("estimator", "estimate", "95% CI", "width", "labelled", "judge only", "λ")
_MEASURE_NAMES = {"accuracy": "accuracy with the others (label scale)", "neg_rmse": "−RMSE to the others (graded scale)"}
_FDR_NAMES = {"by": "Benjamini–Yekutieli", "bh": "Benjamini–Hochberg"}


def _n(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return "–"
    return f"{x:.{digits}f}"


def alt_test_title(report: AltTestReport) -> str:
    return f"Alternative annotator test — run {report.run_id}, judge {report.judge}, {report.quality}"


def alt_test_rows(report: AltTestReport) -> list[tuple[str, ...]]:
    return [(t.annotator, str(t.n), _n(t.judge_alignment), _n(t.human_alignment), _n(t.judge_advantage),
             _n(t.human_advantage), _n(t.t, 2), f"{t.p_value:.3g}", "yes" if t.judge_wins else "no")
            for t in report.result.tested]


def alt_test_lines(report: AltTestReport) -> list[str]:
    """The verdict, the margin and the human ceiling, as sentences."""
    r = report.result
    margin = (f"ε = {r.epsilon:g} ({report.annotators} annotators, the paper's rule of thumb)"
              if report.annotators else f"ε = {r.epsilon:g} (set by hand)")
    lines = []
    if r.tested:
        wins = sum(t.judge_wins for t in r.tested)
        lines.append(f"winning rate ω = {wins}/{len(r.tested)} = {r.winning_rate:.2f}: the judge "
                     f"{'PASSES' if r.passed else 'FAILS'} (it passes when it wins against at least half of the "
                     "annotators)")
        lines.append(f"average advantage probability ρ = {r.advantage_probability:.3f} (compare judges by it; "
                     "it does not depend on ε)")
    else:
        lines.append("the judge was not tested")
    lines.append(f"{margin}; alignment: {_MEASURE_NAMES[r.measure]}; one-sided paired t-test per annotator, "
                 f"{_FDR_NAMES[r.fdr]} at q = {r.q:g} over annotators")
    lines.append("the judge's score: rounded to the scale's points" if report.judge_values == "rounded"
                 else "the judge's score: as it is (continuous)")
    if report.caution:
        lines.append(f"caution: {report.caution}")
    c = report.ceiling
    ceiling = [f"leave-one-out Spearman {c.text('spearman')}"]
    if c.alpha is not None:
        ceiling.append(f"Krippendorff's α {_n(c.alpha)}")
    if c.kappa is not None:
        ceiling.append(f"mean Cohen's κ {_n(c.kappa)}")
    lines.append(f"human ceiling ({c.n_text()}): " + ", ".join(ceiling))
    lines.extend(f"annotator {a} not tested: {why}" for a, why in r.skipped)
    lines.extend(r.reasons)
    return lines


def estimate_title(report: EstimateReport) -> str:
    what = "pass rate" if report.rogan_gladen is not None else "mean human label"
    return (f"{what.capitalize()} of {report.quality} — run {report.run_id}, judge {report.judge}, "
            f"subset {report.subset}")


def estimate_rows(report: EstimateReport) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for e in report.estimates:
        name = {"labels only": "labels only", "PPI++": "judge-assisted (PPI++)",
                "active (IPW)": "active sampling (IPW)"}.get(e.method, e.method)
        rows.append((name, _n(e.value), f"[{_n(e.low)}, {_n(e.high)}]", _n(e.width), str(e.n_labelled),
                     str(e.n_unlabelled) if e.n_unlabelled else "–", "–" if e.lam is None else _n(e.lam, 2)))
    return rows


def estimate_lines(report: EstimateReport) -> list[str]:
    only, assisted = report.labels_only, report.judge_assisted
    lines = [f"labels: {report.source}"]
    if report.reference is not None:
        lines.append(f"reference (every label): {report.reference:.3f}")
    if only.width > 0:
        change = assisted.width / only.width - 1.0
        if change <= -0.05:
            lines.append(f"the judge narrows the 95% interval by {-change:.0%} (width {only.width:.3f} → "
                         f"{assisted.width:.3f}): like about {only.width ** 2 / assisted.width ** 2:.1f}× as many "
                         "labels alone")
        else:
            lines.append(f"the judge does not narrow the interval noticeably (width {only.width:.3f} → "
                         f"{assisted.width:.3f}): its scores track these human labels too little to help")
    rg = report.rogan_gladen
    if rg is not None:
        lines.append(f"Rogan–Gladen: judge sensitivity {_n(rg.sensitivity)}, specificity {_n(rg.specificity)} on "
                     f"the labelled items; judged pass rate {_n(rg.judged_pass_rate)} on the others; percentile "
                     "bootstrap over both sets")
    s = report.selective
    if s is not None:
        if s.threshold is None:
            lines.append(f"selective evaluation: {s.reason}")
        else:
            lines.append(f"selective evaluation: trust the judge alone where its answer probability ≥ "
                         f"{s.threshold:.2f}: {s.coverage:.0%} of the items; there it agrees with the humans with "
                         f"probability ≥ {1 - s.alpha:.0%} (confidence {1 - s.delta:.0%}; {s.n_covered_labelled} "
                         f"labelled items, {s.errors} disagreements); the rest go to the Review queue")
    lines.append("intervals: labels only, the t interval of the labelled mean; PPI++ (Angelopoulos et al. 2023), "
                 "power-tuned λ, t quantile")
    lines.extend(report.notes)
    return lines


def difference_rows(name_a: str, name_b: str, differences: Mapping[str, Estimate]) -> list[tuple[str, ...]]:
    return [(f"{label}: {name_a} − {name_b}", _n(e.value), f"[{_n(e.low)}, {_n(e.high)}]", _n(e.width),
             str(e.n_labelled), str(e.n_unlabelled) if e.n_unlabelled else "–", "–")
            for label, e in differences.items()]


#: The record keys the Markdown and LaTeX tables show (CSV and JSON carry every key).
ALT_TEST_COLUMNS_KEYS = ("judge", "annotator", "n", "judge_alignment", "human_alignment", "judge_advantage",
                         "human_advantage", "t", "p_value", "judge_wins")
ESTIMATE_COLUMNS_KEYS = ("judge", "subset", "method", "estimate", "low", "high", "width", "n_labelled",
                         "n_unlabelled", "lambda")


LABEL_NEXT_COLUMNS = ("order", "item", "probability", "judge score")


def label_next_rows(plan: LabelPlan) -> list[tuple[str, ...]]:
    index = {item: k for k, item in enumerate(plan.item_ids)}
    return [(str(rank), item, f"{plan.probabilities[index[item]]:.3f}", _n(plan.judged[index[item]], 2))
            for rank, item in enumerate(plan.to_label(), start=1)]


def label_next_records(plan: LabelPlan) -> list[dict[str, Any]]:
    index = {item: k for k, item in enumerate(plan.item_ids)}
    return [{"run": plan.run_id, "judge": plan.judge, "quality": plan.quality, "order": rank, "item_id": item,
             "probability": plan.probabilities[index[item]], "judge_score": plan.judged[index[item]],
             "budget": plan.budget, "seed": plan.seed}
            for rank, item in enumerate(plan.to_label(), start=1)]
