"""Pooling several judges, and how far judges (and their pool) agree with people.

Paper 002 (section 3.6, Table 2): the votes of five annotators are pooled by
Max-Vote (the mode) into an expert label; each LLM, and the Max-Vote of the
three LLMs, is compared with it by % agreement and Cohen's kappa. Graded
outputs pool by the mean of the judges' normalised scores instead. With R
stability repeats, :func:`stability` says how consistent each judge is with
itself and how much its agreement with people moves from repeat to repeat.
"""

from __future__ import annotations

import enum
import math
import statistics
from dataclasses import dataclass, field
from itertools import combinations
from typing import Mapping, Sequence

import numpy as np

from ...errors import ConfigError
from ...model import Aggregation, Dataset, RatingValue, Scale, ScaleKind, majority_vote
from ...stats.categorical import cohen_kappa, krippendorff_alpha, percent_agreement
from ...stats.correlation import degenerate_reason
from ...stats.human import HumanLabels, human_labels
from ..types import Judgment, OutputKind, OutputSpec

#: {judge: {item_id: Judgment}}, as store.judgments.load_judgments returns it.
JudgmentTable = Mapping[str, Mapping[str, Judgment]]
#: {judge: {item_id: {repeat: Judgment}}}, as store.judgments.load_repeats returns it.
RepeatTable = Mapping[str, Mapping[str, Mapping[int, Judgment]]]


class PoolMethod(str, enum.Enum):
    MEAN = "mean"  # graded output: mean of normalised scores
    MAX_VOTE = "max-vote"  # binary/categorical output: the mode, ties reported


def is_binary_output(output: OutputSpec) -> bool:
    if output.kind in (OutputKind.BINARY, OutputKind.YESNO):
        return True
    return output.kind is OutputKind.JSON and (output.min, output.max) == (0.0, 1.0)


def default_pool_method(output: OutputSpec) -> PoolMethod:
    return PoolMethod.MAX_VOTE if is_binary_output(output) else PoolMethod.MEAN


def _round_half_up(x: float) -> float:
    return float(math.floor(x + 0.5))


def judge_label(judgment: Judgment, scale: Scale | None = None) -> float | None:
    """A judgment as a vote: its score rounded to a whole point (p(yes)=0.7 votes 1).

    With a human ``scale``, the normalised score is first mapped onto that
    scale, so judges and people vote in the same label space.
    """
    if judgment.failed:
        return None
    if scale is None:
        return _round_half_up(float(judgment.score))  # type: ignore[arg-type]
    if judgment.normalized is None:
        return None
    return scale_point(judgment.normalized, scale)


def scale_point(unit: float, scale: Scale) -> float:
    """A 0-1 value as the nearest whole point of a numeric scale (halves round up)."""
    assert scale.min is not None and scale.max is not None
    return min(max(_round_half_up(scale.denormalize(unit)), scale.min), scale.max)


@dataclass(frozen=True)
class PooledScore:
    """The pool's answer for one item: a mean 0-1 score, or the voted label."""

    item_id: str
    value: float | None
    n: int  # judges that gave a score
    tied: tuple[RatingValue, ...] = ()

    @property
    def is_tie(self) -> bool:
        return len(self.tied) > 1


def pool_scores(judgments: JudgmentTable, method: PoolMethod, *, judges: Sequence[str] | None = None,
                scale: Scale | None = None) -> dict[str, PooledScore]:
    """Pool each item over the judges (failed judgments abstain).

    MEAN gives the mean normalised score; MAX_VOTE the mode of the judges'
    labels (:func:`judge_label`, on ``scale`` when given), ties reported and
    broken towards the smaller label as :func:`majority_vote` does.
    """
    names = list(judges) if judges is not None else sorted(judgments)
    unknown = [n for n in names if n not in judgments]
    if unknown:
        raise ConfigError(f"no judgments from judge {unknown[0]!r} (have: {', '.join(sorted(judgments))})")
    item_ids: dict[str, None] = {}
    for name in names:
        item_ids.update(dict.fromkeys(judgments[name]))
    out: dict[str, PooledScore] = {}
    for item_id in item_ids:
        votes = [judgments[n][item_id] for n in names if item_id in judgments[n]]
        if method is PoolMethod.MEAN:
            values = [j.normalized for j in votes if j.normalized is not None]
            mean = math.fsum(values) / len(values) if values else None
            out[item_id] = PooledScore(item_id, mean, len(values))
        else:
            labels = [judge_label(j, scale) for j in votes]
            agg = majority_vote(labels)
            out[item_id] = PooledScore(item_id, agg.value, agg.n, agg.tied)  # type: ignore[arg-type]
    return out


@dataclass(frozen=True)
class Agreement:
    """% agreement (0-100) and Cohen's kappa of one rater with the max-voted humans."""

    name: str
    n: int
    percent: float | None
    kappa: float | None


def agreement(name: str, predicted: Mapping[str, RatingValue], reference: Mapping[str, RatingValue]) -> Agreement:
    """Agreement over the items both sides labelled."""
    common = [i for i in predicted if i in reference and predicted[i] is not None and reference[i] is not None]
    if not common:
        return Agreement(name, 0, None, None)
    a = [predicted[i] for i in common]
    b = [reference[i] for i in common]
    return Agreement(name, len(common), 100.0 * percent_agreement(a, b), _kappa(a, b))


def _kappa(a: Sequence[RatingValue], b: Sequence[RatingValue]) -> float | None:
    """Cohen's kappa; None when undefined (both sides used a single label)."""
    return _none_if_nan(cohen_kappa(a, b))


def _none_if_nan(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


@dataclass(frozen=True)
class PoolReport:
    """Each judge's and the pool's agreement with max-voted humans on one quality."""

    quality: str
    method: PoolMethod
    judges: dict[str, Agreement]
    pool: Agreement
    pooled: dict[str, PooledScore]
    #: Items where the judges' vote tied (the tie was broken towards the smaller label).
    judge_ties: list[str] = field(default_factory=list)
    #: Items where the annotators' vote tied.
    human_ties: list[str] = field(default_factory=list)
    #: Items left out because the annotators tied (with ``exclude_human_ties``).
    excluded: list[str] = field(default_factory=list)


def _vote_scale(dataset: Dataset, quality: str) -> Scale:
    scales = dataset.qualities
    if quality not in scales:
        known = ", ".join(scales) or "none"
        raise ConfigError(f"dataset {dataset.name!r} has no human ratings of {quality!r} (has: {known})")
    scale = scales[quality]
    if scale.kind not in (ScaleKind.BINARY, ScaleKind.ORDINAL):
        raise ConfigError(
            f"% agreement and kappa need a binary or ordinal human scale; {quality!r} is "
            f"{scale.kind.value} (compare it by correlation instead)")
    return scale


def pool_report(judgments: JudgmentTable, dataset: Dataset, quality: str, *,
                method: PoolMethod = PoolMethod.MAX_VOTE, judges: Sequence[str] | None = None,
                exclude_human_ties: bool = False) -> PoolReport:
    """Paper 002's Table 2 for one quality: each judge and the pool against max-voted humans."""
    scale = _vote_scale(dataset, quality)
    names = list(judges) if judges is not None else sorted(judgments)
    humans = human_labels(dataset.examples, quality, Aggregation.MAJORITY)
    human_ties = sorted(humans.tied)
    excluded = set(human_ties) if exclude_human_ties else set()
    reference = {i: v for i, v in humans.values.items() if v is not None and i not in excluded}

    per_judge = {}
    for name in names:
        if name not in judgments:
            raise ConfigError(f"no judgments from judge {name!r} (have: {', '.join(sorted(judgments))})")
        labels = {i: judge_label(j, scale) for i, j in judgments[name].items()}
        per_judge[name] = agreement(name, labels, reference)

    pooled = pool_scores(judgments, method, judges=names, scale=scale)
    if method is PoolMethod.MEAN:
        pool_labels = {i: None if p.value is None else scale_point(float(p.value), scale)
                       for i, p in pooled.items()}
    else:
        pool_labels = {i: p.value for i, p in pooled.items()}
    pool_name = "Max-Vote(judges)" if method is PoolMethod.MAX_VOTE else "Mean(judges)"
    return PoolReport(
        quality=quality, method=method, judges=per_judge, pool=agreement(pool_name, pool_labels, reference),
        pooled=pooled, judge_ties=sorted(i for i, p in pooled.items() if p.is_tie),
        human_ties=human_ties, excluded=sorted(excluded))


# -- stability over repeats ------------------------------------------------------------------


@dataclass(frozen=True)
class Spread:
    mean: float | None
    std: float | None
    values: tuple[float, ...] = ()


@dataclass(frozen=True)
class Stability:
    """How consistent one judge is across its R repeats.

    Self-agreement is the mean over pairs of repeats: Spearman and Pearson for
    graded output, % agreement for binary, and Krippendorff's alpha over all
    repeats (interval for graded, nominal for binary). ``human`` is the spread of
    the judge's agreement with people over the repeats: Spearman with the mean
    human rating (graded) or % agreement with max-voted humans (binary).
    """

    judge: str
    repeats: int
    items: int  # items scored in at least two repeats
    spearman: float | None = None
    pearson: float | None = None
    percent_agreement: float | None = None
    alpha: float | None = None
    human: Spread = Spread(None, None)
    human_measure: str = ""


def stability(repeats: RepeatTable, *, binary: bool, dataset: Dataset | None = None,
              quality: str | None = None) -> dict[str, Stability]:
    """Per judge: self-agreement between repeats and the spread of its agreement with humans."""
    scale: Scale | None = None
    reference: dict[str, RatingValue] = {}
    if dataset is not None and quality is not None:
        if binary:
            scale = _vote_scale(dataset, quality)
            reference = _present(human_labels(dataset.examples, quality, Aggregation.MAJORITY))
        else:
            scales = dataset.qualities
            if quality not in scales or not scales[quality].is_numeric:
                raise ConfigError(f"dataset {dataset.name!r} has no numeric human ratings of {quality!r}")
            reference = _present(human_labels(dataset.examples, quality, Aggregation.MEAN))

    return {judge: _judge_stability(judge, items, binary, scale, reference)
            for judge, items in repeats.items()}


def _judge_stability(judge: str, items: Mapping[str, Mapping[int, Judgment]], binary: bool,
                     scale: Scale | None, reference: Mapping[str, RatingValue]) -> Stability:
    rounds = sorted({r for by_repeat in items.values() for r in by_repeat})
    # One value per (repeat, item); None where the judgment failed or is missing.
    table = {r: {i: _value(by_repeat.get(r), binary, scale) for i, by_repeat in items.items()} for r in rounds}
    item_ids = list(items)
    pairs = list(combinations(rounds, 2))
    spearman = pearson = percent = None
    if binary:
        percent = _mean_or_none([p for a, b in pairs if (p := _pair_percent(table[a], table[b])) is not None])
    else:
        spearman = _mean_or_none([c for a, b in pairs
                                  if (c := _pair_corr(table[a], table[b], "spearman")) is not None])
        pearson = _mean_or_none([c for a, b in pairs
                                 if (c := _pair_corr(table[a], table[b], "pearson")) is not None])
    alpha = _alpha([[table[r][i] for i in item_ids] for r in rounds], "nominal" if binary else "interval")

    human, measure = Spread(None, None), ""
    if reference:
        if binary:
            per_repeat = [agreement(judge, table[r], reference).percent for r in rounds]
            measure = "% agreement with max-voted humans"
        else:
            per_repeat = [_pair_corr(table[r], reference, "spearman") for r in rounds]
            measure = "Spearman with mean human rating"
        human = _spread([v for v in per_repeat if v is not None])
    return Stability(
        judge=judge, repeats=max((len(r) for r in items.values()), default=0),
        items=sum(1 for i in item_ids if sum(table[r][i] is not None for r in rounds) >= 2),
        spearman=spearman, pearson=pearson, percent_agreement=percent, alpha=alpha,
        human=human, human_measure=measure)


def _present(labels: HumanLabels) -> dict[str, RatingValue]:
    return {i: v for i, v in labels.values.items() if v is not None}


def _value(judgment: Judgment | None, binary: bool, scale: Scale | None) -> float | None:
    if judgment is None or judgment.failed:
        return None
    if binary:
        return judge_label(judgment, scale)
    return judgment.normalized


def _mean_or_none(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _spread(values: Sequence[float]) -> Spread:
    if not values:
        return Spread(None, None)
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return Spread(math.fsum(values) / len(values), std, tuple(values))


def _pair_percent(a: Mapping[str, float | None], b: Mapping[str, float | None]) -> float | None:
    common = [i for i in a if a[i] is not None and b.get(i) is not None]
    if not common:
        return None
    return 100.0 * sum(a[i] == b[i] for i in common) / len(common)


def _pair_corr(a: Mapping[str, float | None], b: Mapping[str, RatingValue], kind: str) -> float | None:
    """Correlation over common items; None when undefined (fewer than 3 items, or a constant side)."""
    common = [i for i in a if a[i] is not None and b.get(i) is not None]
    x = np.array([float(a[i]) for i in common])  # type: ignore[arg-type]
    y = np.array([float(b[i]) for i in common])  # type: ignore[arg-type]
    if degenerate_reason(x, y, "items") is not None:
        return None
    from scipy import stats  # scipy is slow to import: only when agreement needs it

    value = (stats.spearmanr(x, y) if kind == "spearman" else stats.pearsonr(x, y))[0]
    return _none_if_nan(float(value))


def _alpha(rows: list[list[float | None]], level: str) -> float | None:
    """Krippendorff's alpha with repeats as coders; None when it is undefined."""
    if len(rows) < 2:
        return None
    return _none_if_nan(krippendorff_alpha(rows, level))
