"""A judge's answers as labels of the judged quality, for label-against-label comparison.

Three kinds of template answer a label quality (categorical, or binary 0/1):

* a label template (``output.kind = "label"``) names one of the quality's own
  labels; the judgment's score is the label's position, and in logprob mode
  the judgment's distribution holds every label's probability;
* a two-answer template (yes/no, a 0/1 binary or JSON score such as InCA's
  KPI score) maps "yes" (1) onto the label that means yes and "no" (0) onto
  the other; with probability answers (yesno, logprob) the score is p(yes) and
  the label is "yes" when p(yes) >= 0.5;
* anything else (a 1-5 Likert score, a 0-1 continuous score) has no label
  meaning; :func:`label_mapping` says so.

Which label means "yes" comes from the label names (yes/true/1/positive
against no/false/0/negative) or from the user (``yes_label``); a binary 0/1
scale's "yes" is its top point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...errors import ConfigError
from ...model import Dataset, Example, RatingValue, Scale, ScaleKind
from ...stats.label_agreement import (
    TIE_RULE_HELP,
    LabelCeiling,
    LabelComparison,
    TieRule,
    compare_labels,
    label_ceiling,
    label_text,
    scale_labels,
)
from ..prompts.render import resolve_output
from ..prompts.templates import parse_template
from ..run.config import RunConfig
from ..types import Judgment, OutputKind, OutputSpec, ScoringMode

YES_NAMES = ("yes", "true", "1", "1.0", "positive")
NO_NAMES = ("no", "false", "0", "0.0", "negative")


class LabelMappingError(ConfigError):
    """The judge's answers cannot be read as labels of the quality; the message says why."""


@dataclass(frozen=True)
class LabelMapping:
    """How one template's answers become labels of one quality."""

    labels: tuple[RatingValue, ...]
    #: "label": the answer is a label; "yesno": yes/no (or 1/0) onto ``yes_label`` / ``no_label``
    kind: str
    yes_label: RatingValue = None
    no_label: RatingValue = None
    #: The answers carry probabilities (label distribution, or p(yes)).
    probabilistic: bool = False

    @property
    def positive(self) -> RatingValue:
        """The label whose probability the ROC-AUC ranks by (two-label qualities)."""
        if self.kind == "yesno":
            return self.yes_label
        return self.labels[1] if len(self.labels) == 2 else None

    def describe(self) -> str:
        if self.kind == "yesno":
            return f"judge answer yes = {label_text(self.yes_label)!r}, no = {label_text(self.no_label)!r}"
        return f"judge answers with the labels {', '.join(label_text(v) for v in self.labels)}"

    def answers(self, judgments: Mapping[str, Judgment]
                ) -> tuple[dict[str, RatingValue], dict[str, float | None] | None]:
        """Each item's label (None when the judgment failed) and, for probability answers,
        its probability of :attr:`positive`."""
        labels: dict[str, RatingValue] = {}
        probabilities: dict[str, float | None] = {}
        for item, judgment in judgments.items():
            labels[item], probabilities[item] = self._one(judgment)
        return labels, probabilities if self.probabilistic and self.positive is not None else None

    def _one(self, judgment: Judgment) -> tuple[RatingValue, float | None]:
        if judgment.failed or judgment.score is None:
            return None, None
        if self.kind == "yesno":
            p_yes = judgment.normalized
            if p_yes is None:
                return None, None
            return (self.yes_label if p_yes >= 0.5 else self.no_label), float(p_yes)
        position = int(round(judgment.score))
        if not 0 <= position < len(self.labels):
            return None, None
        label = self.labels[position]
        probability = None
        if judgment.distribution and self.positive is not None:
            texts = {str(k).strip().casefold(): float(v) for k, v in judgment.distribution.items()}
            total = sum(texts.get(label_text(v).casefold(), 0.0) for v in self.labels)
            if total > 0:
                probability = texts.get(label_text(self.positive).casefold(), 0.0) / total
        return label, probability


def label_mapping(output: OutputSpec, mode: ScoringMode, scale: Scale, quality: str, *,
                  yes_label: str | None = None, template: str = "the template") -> LabelMapping:
    """How ``output``'s answers (in ``mode``) map onto the labels of ``quality``; raises
    LabelMappingError, naming the fix, when they do not."""
    if scale.kind not in (ScaleKind.CATEGORICAL, ScaleKind.BINARY):
        raise LabelMappingError(f"{quality!r} has a {scale.kind.value} scale, not labels")
    labels = scale_labels(scale)
    if len(labels) < 2:
        raise LabelMappingError(f"{quality!r} declares no label list, so a judge's answer has no label to match")
    probabilistic = mode in (ScoringMode.LOGPROB, ScoringMode.YESNO)
    if output.kind is OutputKind.LABEL:
        if yes_label:
            raise LabelMappingError(f"--yes-label is for yes/no templates; {template} answers with the labels")
        return LabelMapping(labels, "label", probabilistic=probabilistic)
    if not _two_answers(output):
        raise LabelMappingError(
            f"{template} answers on a {output.min:g}-{output.max:g} {output.kind.value} scale, which names no label "
            f"of {quality!r} ({', '.join(label_text(v) for v in labels)}); use a label template (label-choice) "
            "or, for two labels, a yes/no template (label-yesno)")
    if len(labels) != 2:
        raise LabelMappingError(
            f"{template} answers yes or no, but {quality!r} has {len(labels)} labels "
            f"({', '.join(label_text(v) for v in labels)}); use a label template (label-choice)")
    yes = _yes_label(labels, scale, quality, yes_label)
    no = labels[0] if yes == labels[1] else labels[1]
    return LabelMapping(labels, "yesno", yes, no, probabilistic)


def _two_answers(output: OutputSpec) -> bool:
    if output.kind in (OutputKind.YESNO, OutputKind.BINARY):
        return True
    try:
        values = sorted(output.choice_values())
    except ValueError:
        return False
    return output.kind in (OutputKind.JSON, OutputKind.LIKERT) and values == [0.0, 1.0] and (
        output.min, output.max) == (0.0, 1.0)


def _yes_label(labels: tuple[RatingValue, ...], scale: Scale, quality: str, chosen: str | None) -> RatingValue:
    shown = ", ".join(label_text(v) for v in labels)
    if chosen:
        for label in labels:
            if label_text(label).casefold() == chosen.strip().casefold():
                return label
        raise LabelMappingError(f"--yes-label {chosen!r} is not a label of {quality!r} ({shown})")
    if scale.kind is ScaleKind.BINARY:
        return labels[-1]
    names = [label_text(v).strip().casefold() for v in labels]
    yes = [k for k, n in enumerate(names) if n in YES_NAMES]
    no = [k for k, n in enumerate(names) if n in NO_NAMES]
    if len(yes) == 1 and len(no) == 1:
        return labels[yes[0]]
    raise LabelMappingError(f"the labels of {quality!r} are {shown}: say which one a judge's \"yes\" means "
                            "with --yes-label")


# -- a run's judges against the human labels -------------------------------------------------------


@dataclass(frozen=True)
class LabelReport:
    """Every judge of a run against the human majority on one label quality, with the ceiling."""

    dataset: str
    quality: str
    tie_rule: str
    comparisons: tuple[LabelComparison, ...]
    ceiling: LabelCeiling
    mapping: LabelMapping | None
    #: Why no judge could be compared (the judgments are stored all the same).
    reason: str | None = None
    notes: tuple[str, ...] = ()

    def to_records(self) -> list[dict[str, object]]:
        records: list[dict[str, object]] = [c.to_record() for c in self.comparisons]
        records.append(self.ceiling.to_record())
        for record in records:
            record.update(dataset=self.dataset, mapping=self.mapping.describe() if self.mapping else None)
        return records


def label_report(examples: Sequence[Example], quality: str, judgments: Mapping[str, Mapping[str, Judgment]],
                 output: OutputSpec, mode: ScoringMode, *, dataset: str, yes_label: str | None = None,
                 tie_rule: str = "exclude", n_boot: int = 1000, seed: int = 0, template: str = "the template",
                 ) -> LabelReport:
    """Compare each judge's answers over ``examples`` (the items the run judged) with the humans."""

    rule = TieRule(tie_rule)
    rated = [ex for ex in examples if quality in ex.ratings]
    ceiling = label_ceiling(rated, quality, rule, n_boot=n_boot, seed=seed)
    notes = [f"human label: the majority of the annotators; ties: {rule.value} ({TIE_RULE_HELP[rule]})"]
    if not rated:
        return LabelReport(dataset, quality, rule.value, (), ceiling, None,
                           f"no judged item has a rating of {quality!r}", tuple(notes))
    scale = rated[0].ratings[quality].scale
    try:
        mapping = label_mapping(output, mode, scale, quality, yes_label=yes_label, template=template)
    except LabelMappingError as exc:
        return LabelReport(dataset, quality, rule.value, (), ceiling, None, str(exc), tuple(notes))
    notes.append(mapping.describe())
    if mapping.kind == "yesno" and mapping.probabilistic:
        notes.append("the judge's label is yes when p(yes) >= 0.5; ROC-AUC ranks the items by p(yes)")
    comparisons = []
    for judge, by_item in judgments.items():
        labels, probabilities = mapping.answers(by_item)
        comparisons.append(compare_labels(rated, quality, labels, evaluator=judge, probabilities=probabilities,
                                          positive=mapping.positive, tie_rule=rule, n_boot=n_boot, seed=seed))
    return LabelReport(dataset, quality, rule.value, tuple(comparisons), ceiling, mapping, None, tuple(notes))


def run_label_report(run_config: RunConfig, dataset: Dataset, judgments: Mapping[str, Mapping[str, Judgment]], *,
                     yes_label: str | None = None, tie_rule: str = "exclude", n_boot: int = 1000, seed: int = 0,
                     ) -> LabelReport:
    """A run's judges against the human labels of its quality, over the items the run judged
    (``--limit`` and item lists included), as the CLI prints it and the app shows it.
    ``yes_label`` defaults to the one recorded with the run."""

    quality = run_config.quality
    if quality is None or quality not in dataset.qualities:
        raise LabelMappingError(f"run {run_config.label!r} names no quality of {dataset.name}")
    template = parse_template(run_config.template_text, run_config.template_source or run_config.template)
    scale = dataset.qualities[quality]
    output = resolve_output(template, quality=quality, scale=scale)
    judged = run_config.select_items(dataset)
    return label_report(judged, quality, judgments, output, run_config.mode, dataset=dataset.name,
                        yes_label=yes_label or run_config.yes_label, tie_rule=tie_rule, n_boot=n_boot, seed=seed,
                        template=f"template {template.name!r}")
