"""A run's judge columns read as labels: confusion matrices, calibration and inter-judge agreement.

Correlations say how well a judge ranks items; a user of a binary or ordinal
quality also asks *where* the judge goes wrong. For one quality and the judge
columns of a run (item id -> score mapped to 0-1, as the workspace and the run
exports hold them) this gives:

* per judge, the confusion matrix judge label x human label with Cohen's κ
  beside its linear- and quadratic-weighted forms (for an ordinal scale a near
  miss costs less than a far one);
* per judge answering with probabilities on a binary quality, the reliability
  bins, expected calibration error and Brier score (:mod:`.stats.calibration`);
* with two or more judges, their agreement with each other: Spearman's ρ for
  graded scores, κ on the labels of a binary quality (:mod:`.stats.interjudge`),
  to look at before pooling them.

Labels. Both sides are put on the quality's scale points: a binary scale's two
points, or every whole point of an ordinal scale with at most
:data:`MAX_POINTS` of them (a continuous scale has no labels). The judge's 0-1
score is mapped back onto the scale and the human label is the annotators'
pooled label (the mean unless another aggregation is chosen); each goes to the
nearest point. A value exactly halfway between two points (a tied vote of two
annotators, a judge's expected score of 3.5) has no nearest point: the item is
left out and counted as ``halfway``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .judges.post_run.labels import LabelMappingError, label_mapping
from .judges.prompts.render import resolve_output
from .judges.prompts.templates import parse_template
from .model import Aggregation, Dataset, Example, Scale, ScaleKind
from .run_columns import run_scores
from .stats.calibration import Calibration, reliability
from .stats.categorical import cohen_kappa
from .stats.interjudge import (
    CATEGORICAL,
    GRADED,
    ConfusionMatrix,
    InterJudgeMatrix,
    confusion_matrix,
    inter_judge_matrix,
)

if TYPE_CHECKING:
    from .judges.run.config import RunConfig
    from .judges.store.run_store import RunStore

#: An ordinal scale with more whole points than this is treated as graded only (no confusion matrix).
MAX_POINTS = 11
#: Bins of the reliability diagram.
CALIBRATION_BINS = 10

Score = float | None


def scale_points(scale: Scale | None) -> tuple[float, ...] | None:
    """The labels both sides are rounded to; None for a scale without them (continuous, categorical,
    an ordinal scale with fractional ends or more than :data:`MAX_POINTS` points)."""
    if scale is None or scale.min is None or scale.max is None:
        return None
    if scale.kind is ScaleKind.BINARY:
        return (float(scale.min), float(scale.max))
    if scale.kind is not ScaleKind.ORDINAL or not (float(scale.min).is_integer() and float(scale.max).is_integer()):
        return None
    count = int(scale.max - scale.min) + 1
    if count > MAX_POINTS:
        return None
    return tuple(float(scale.min + k) for k in range(count))


def nearest_point(value: float, points: Sequence[float]) -> float | None:
    """The scale point nearest ``value``; None when two points are equally near (or no value)."""
    if not math.isfinite(value):
        return None
    ranked = sorted(points, key=lambda p: abs(p - value))
    if len(ranked) > 1 and math.isclose(abs(ranked[0] - value), abs(ranked[1] - value), abs_tol=1e-9):
        return None
    return ranked[0]


@dataclass(frozen=True)
class ConfusionView:
    """One judge's labels against the humans' on one quality."""

    evaluator: str
    quality: str
    #: Rows: the judge's label; columns: the humans' (both in ``matrix.labels`` order).
    matrix: ConfusionMatrix
    kappa: float
    kappa_linear: float
    kappa_quadratic: float
    #: Rated items left out: the judge gave no score (not judged or failed), the humans no label,
    #: or one side fell halfway between two points.
    no_score: int = 0
    no_human_label: int = 0
    halfway: int = 0

    @property
    def n(self) -> int:
        return self.matrix.n

    @property
    def excluded(self) -> int:
        return self.no_score + self.no_human_label + self.halfway

    @property
    def agreement(self) -> float:
        n = self.n
        return sum(self.matrix.counts[k][k] for k in range(len(self.matrix.labels))) / n if n else math.nan

    def summary_record(self) -> dict[str, Any]:
        return {"evaluator": self.evaluator, "quality": self.quality, "n": self.n, "excluded": self.excluded,
                "no_score": self.no_score, "no_human_label": self.no_human_label, "halfway": self.halfway,
                "percent_agreement": _clean(self.agreement), "kappa": _clean(self.kappa),
                "kappa_linear": _clean(self.kappa_linear), "kappa_quadratic": _clean(self.kappa_quadratic)}

    def cell_records(self) -> list[dict[str, Any]]:
        return [{"evaluator": self.evaluator, "quality": self.quality, "judge_label": _label(r["judge_label"]),
                 "human_label": _label(r["human_label"]), "count": r["count"]} for r in self.matrix.to_records()]


@dataclass(frozen=True)
class CalibrationView:
    """One probability judge's reliability on a binary quality: p(top point) against the humans' label."""

    evaluator: str
    quality: str
    #: The label whose probability the judge gives (the scale's top point).
    positive: float
    calibration: Calibration

    def bin_records(self) -> list[dict[str, Any]]:
        return [{"evaluator": self.evaluator, "quality": self.quality, **record}
                for record in self.calibration.to_records()]

    def summary_record(self) -> dict[str, Any]:
        c = self.calibration
        return {"evaluator": self.evaluator, "quality": self.quality, "positive": _label(self.positive),
                "n": c.n, "excluded": c.n_excluded, "ece": _clean(c.ece), "brier": _clean(c.brier),
                "base_rate": _clean(c.base_rate), "brier_of_base_rate": _clean(c.base_rate * (1 - c.base_rate))}


@dataclass(frozen=True)
class JudgeDiagnostics:
    """Everything label-level about a run's judge columns on one quality."""

    quality: str
    confusion: tuple[ConfusionView, ...] = ()
    calibration: tuple[CalibrationView, ...] = ()
    inter_judge: InterJudgeMatrix | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def empty(self) -> bool:
        return not (self.confusion or self.calibration or self.inter_judge)


def human_points(examples: Sequence[Example], quality: str, aggregation: Aggregation = Aggregation.MEAN
                 ) -> dict[str, Score]:
    """Each rated example's pooled human label on ``quality`` (None: nobody rated it)."""
    out: dict[str, Score] = {}
    for ex in examples:
        if quality in ex.ratings:
            value = ex.human(quality, aggregation)
            out[ex.id] = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    return out


def confusion_view(evaluator: str, quality: str, scale: Scale, unit_scores: Mapping[str, Score],
                   human: Mapping[str, Score]) -> ConfusionView:
    """``unit_scores``: the judge's 0-1 scores; ``human``: each rated item's pooled label on the scale."""
    points = scale_points(scale)
    if points is None:
        raise ValueError(f"{quality!r} has a {scale.kind.value} scale without labels to count")
    judged: list[float] = []
    humans: list[float] = []
    no_score = no_label = halfway = 0
    for item, label in human.items():
        unit = unit_scores.get(item)
        if unit is None or not math.isfinite(unit):
            no_score += 1
            continue
        if label is None or not math.isfinite(label):
            no_label += 1
            continue
        judge_point = nearest_point(scale.denormalize(unit), points)
        human_point = nearest_point(label, points)
        if judge_point is None or human_point is None:
            halfway += 1
            continue
        judged.append(judge_point)
        humans.append(human_point)
    matrix = confusion_matrix(judged, humans, labels=points)
    plain, linear, quadratic = (cohen_kappa(judged, humans, weights=w, categories=points) if judged else math.nan
                                for w in (None, "linear", "quadratic"))
    return ConfusionView(evaluator, quality, matrix, plain, linear, quadratic, no_score=no_score,
                         no_human_label=no_label, halfway=halfway)


def calibration_view(evaluator: str, quality: str, scale: Scale, probabilities: Mapping[str, Score],
                     human: Mapping[str, Score], *, n_bins: int = CALIBRATION_BINS) -> CalibrationView:
    """Reliability of a binary quality's p(top point): ``probabilities`` are the judge's 0-1 scores
    (p(yes) in yesno and logprob modes), outcomes the humans' labels rounded to a point (a tie is left out)."""
    if scale.kind is not ScaleKind.BINARY:
        raise ValueError(f"calibration needs a binary quality; {quality!r} is {scale.kind.value}")
    points = scale_points(scale)
    assert points is not None
    items = list(human)
    outcomes: list[float | None] = []
    for item in items:
        label = human[item]
        point = nearest_point(label, points) if label is not None else None
        outcomes.append(None if point is None else float(point == points[-1]))
    return CalibrationView(evaluator, quality, points[-1],
                           reliability([probabilities.get(i) for i in items], outcomes, n_bins=n_bins))


def judge_diagnostics(examples: Sequence[Example], quality: str, scale: Scale,
                      judge_columns: Mapping[str, Mapping[str, Score]], *,
                      probability_judges: Collection[str] = (),
                      aggregation: Aggregation = Aggregation.MEAN) -> JudgeDiagnostics:
    """The confusion views (binary and ordinal qualities), the calibration of ``probability_judges``
    (binary qualities) and, with two or more judges, the inter-judge matrix, over ``examples``."""
    human = human_points(examples, quality, aggregation)
    points = scale_points(scale)
    notes: list[str] = []
    confusion: tuple[ConfusionView, ...] = ()
    if points is not None and human:
        confusion = tuple(confusion_view(name, quality, scale, column, human) for name, column in judge_columns.items())
        notes.append(f"labels: the judge's score and the humans' {aggregation.value} label, each rounded to the "
                     f"nearest point of the {scale.kind.value} scale; halfway values are left out")
    calibration: tuple[CalibrationView, ...] = ()
    if scale.kind is ScaleKind.BINARY and human:
        calibration = tuple(calibration_view(name, quality, scale, judge_columns[name], human)
                            for name in judge_columns if name in probability_judges)
    inter: InterJudgeMatrix | None = None
    if len(judge_columns) >= 2:
        in_view = set(human)
        if scale.kind is ScaleKind.BINARY and points is not None:
            labels = {name: {i: _point_of(v, scale, points) for i, v in column.items() if i in in_view}
                      for name, column in judge_columns.items()}
            inter = inter_judge_matrix(labels, kind=CATEGORICAL)
        else:
            inter = inter_judge_matrix({name: {i: v for i, v in column.items() if i in in_view}
                                        for name, column in judge_columns.items()}, kind=GRADED)
    return JudgeDiagnostics(quality, confusion, calibration, inter, tuple(notes))


def _point_of(unit: Score, scale: Scale, points: Sequence[float]) -> float | None:
    if unit is None or not math.isfinite(unit):
        return None
    return nearest_point(scale.denormalize(unit), points)


def _label(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _clean(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def top_point_probabilities(run_config: RunConfig, dataset: Dataset, column: Mapping[str, Score]
                            ) -> dict[str, Score] | None:
    """A run's judge column as p(the binary quality's top point), or None when the run's answers
    are not probabilities of a two-label answer (a generate-mode run, a Likert template, a graded quality)."""

    quality = run_config.quality
    scale = dataset.qualities.get(quality) if quality else None
    if quality is None or scale is None or scale.kind is not ScaleKind.BINARY:
        return None
    template = parse_template(run_config.template_text, run_config.template_source or run_config.template)
    try:
        mapping = label_mapping(resolve_output(template, quality=quality, scale=scale), run_config.mode, scale,
                                quality, yes_label=run_config.yes_label)
    except LabelMappingError:
        return None
    if mapping.kind != "yesno" or not mapping.probabilistic:
        return None
    # p(yes) is the normalised score; "yes" is the top point unless the run said otherwise.
    flip = mapping.yes_label is not None and scale.max is not None and float(mapping.yes_label) != float(scale.max)
    return {item: (None if p is None else (1.0 - p if flip else p)) for item, p in column.items()}


def run_diagnostics(store: RunStore, run_id: int, dataset: Dataset) -> JudgeDiagnostics | None:
    """The diagnostics of a stored run's judges on its quality over the items it judged; None when
    the run names no numeric quality of ``dataset``."""

    config = store.runs.get_run(run_id).run_config
    quality = config.quality
    scale = dataset.qualities.get(quality) if quality else None
    if quality is None or scale is None or not scale.is_numeric:
        return None
    columns, _ = run_scores(store, run_id, with_pool=False)
    probabilities = {name: p for name, column in columns.items()
                     if (p := top_point_probabilities(config, dataset, column)) is not None}
    examples = config.select_items(dataset)
    if probabilities:
        # Calibration reads the probability columns; everything else the scores, which are the same numbers.
        columns = {**columns, **probabilities}
    return judge_diagnostics(examples, quality, scale, columns, probability_judges=set(probabilities))
