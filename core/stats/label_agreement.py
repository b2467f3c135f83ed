"""A judge's labels against human labels on a categorical or binary quality.

For one evaluator and one quality this gives what a reader of a JUDGE-BENCH
style comparison expects: percent agreement and Cohen's kappa against the human
majority, Krippendorff's alpha (nominal) with the judge added as one more rater
beside the annotators, the confusion matrix, per-label precision and recall,
and for a two-label quality with probability answers the ROC-AUC. Each comes
with n, the exclusions by reason, and a bootstrap percentile CI (contexts are
resampled, as for correlations: :mod:`dialjudge.core.stats.bootstrap`).

Majority ties. The human label of an item is the most frequent label among its
annotators. When several labels share the top count the item is *tied*, and
:class:`TieRule` decides: ``exclude`` leaves the item out (counted as
``tie_excluded``), ``first`` takes the tied label that comes first in the
quality's label list (the order the dataset declares), ``published`` takes the
majority the file itself publishes (JUDGE-BENCH's ``majority_human``) when it
is one of the tied labels, and excludes the item otherwise. Every table shows
how many ties there were and what became of them.

Exclusions, each item counted once under the first reason that applies:
``not_judged`` (no judgment for it), ``failed`` (the judgment failed),
``invalid_label`` (the answer maps to no label of the quality),
``no_human_label`` (no annotator gave a value), ``tie_excluded``.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model import Example, RatingValue, Scale, ScaleKind
from . import bootstrap as bs
from .categorical import cohen_kappa, is_missing, krippendorff_alpha, percent_agreement
from .human import annotator_matrix
from .rater_pairs import (
    MIN_SHARED_ITEMS,
    UNDEFINED,
    Pooled,
    left_out_note,
    pool_pairs,
    pool_slots,
    shared_pairs,
    slot_raters,
    weighted_mean,
)
from .small_samples import MIN_CONTEXTS_LABELS

NAN = float("nan")
EXCLUSION_REASONS = ("not_judged", "failed", "invalid_label", "no_human_label", "tie_excluded")
#: Names of the file's own published majority (JUDGE-BENCH), kept by the loader in extra["human_aggregates"].
PUBLISHED_MAJORITY_KEYS = ("majority_human", "majority_human_score")
AGGREGATE_ONLY_TEXT = "1 aggregate label, no individual raters"


class TieRule(str, enum.Enum):
    EXCLUDE = "exclude"
    FIRST = "first"
    PUBLISHED = "published"


TIE_RULE_HELP = {
    TieRule.EXCLUDE: "tied items are left out of the comparison",
    TieRule.FIRST: "a tie goes to the tied label listed first in the quality's labels",
    TieRule.PUBLISHED: "a tie goes to the file's published majority label when it is one of the tied labels, "
                       "else the item is left out",
}


def scale_labels(scale: Scale, observed: Iterable[RatingValue] = ()) -> tuple[RatingValue, ...]:
    """The labels of a quality in its declared order: the label list of a categorical
    scale (then any other label seen, sorted), or the two points of a binary one."""
    if scale.kind is ScaleKind.CATEGORICAL:
        declared = list(scale.labels)
        extra = sorted({str(v) for v in observed if v is not None and str(v) not in declared})
        return tuple(declared + extra)
    assert scale.min is not None and scale.max is not None
    points = {float(scale.min), float(scale.max)}
    points.update(float(v) for v in observed if isinstance(v, (int, float)) and not is_missing(v))
    return tuple(sorted(points))


def on_scale(value: RatingValue, scale: Scale) -> RatingValue:
    """A label as the scale spells it ("1" and 1.0 are the same point of a binary
    scale); None when it is not one of the scale's labels."""
    if value is None or is_missing(value):
        return None
    if scale.kind is ScaleKind.CATEGORICAL:
        text = str(value)
        return text if scale.contains(text) else None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and scale.contains(number) else None


def label_text(label: RatingValue) -> str:
    if isinstance(label, float) and label.is_integer():
        return str(int(label))
    return str(label)


# -- majority with ties ---------------------------------------------------------------------


@dataclass(frozen=True)
class MajorityLabels:
    """The human majority label of every example rated on ``quality``."""

    quality: str
    labels: tuple[RatingValue, ...]
    rule: TieRule
    #: id -> majority label; None when nobody gave a value or a tie was excluded.
    values: Mapping[str, RatingValue]
    #: ids whose vote was tied (whatever the rule made of them)
    ties: frozenset[str]
    #: tied ids the rule resolved to a label
    ties_kept: frozenset[str]
    #: ids with no annotator value at all
    unrated: frozenset[str]

    @property
    def n_ties(self) -> int:
        return len(self.ties)

    @property
    def ties_excluded(self) -> frozenset[str]:
        return self.ties - self.ties_kept


def majority_labels(examples: Iterable[Example], quality: str, rule: TieRule | str = TieRule.EXCLUDE
                    ) -> MajorityLabels:
    rule = TieRule(rule)
    rated = [ex for ex in examples if quality in ex.ratings]
    if not rated:
        return MajorityLabels(quality, (), rule, {}, frozenset(), frozenset(), frozenset())
    scale = rated[0].ratings[quality].scale
    labels = scale_labels(scale, (on_scale(v, scale) for ex in rated for v in ex.ratings[quality].scores))
    order = {label: k for k, label in enumerate(labels)}
    values: dict[str, RatingValue] = {}
    ties: set[str] = set()
    kept: set[str] = set()
    unrated: set[str] = set()
    for ex in rated:
        votes = [on_scale(v, scale) for v in ex.ratings[quality].scores]
        counts: dict[RatingValue, int] = {}
        for v in votes:
            if v is not None:
                counts[v] = counts.get(v, 0) + 1
        if not counts:
            values[ex.id] = None
            unrated.add(ex.id)
            continue
        top = max(counts.values())
        modes = sorted((v for v, c in counts.items() if c == top), key=lambda v: order[v])
        if len(modes) == 1:
            values[ex.id] = modes[0]
            continue
        ties.add(ex.id)
        chosen: RatingValue = None
        if rule is TieRule.FIRST:
            chosen = modes[0]
        elif rule is TieRule.PUBLISHED:
            published = on_scale(published_majority(ex, quality), scale)
            chosen = published if published in modes else None
        values[ex.id] = chosen
        if chosen is not None:
            kept.add(ex.id)
    return MajorityLabels(quality, labels, rule, values, frozenset(ties), frozenset(kept), frozenset(unrated))


def published_majority(example: Example, quality: str) -> RatingValue:
    pooled = example.extra.get("human_aggregates", {}).get(quality, {})
    if not isinstance(pooled, Mapping):
        return None
    return next((pooled[k] for k in PUBLISHED_MAJORITY_KEYS if pooled.get(k) is not None), None)


def is_aggregate_only(examples: Iterable[Example], quality: str) -> bool:
    """True when every rating of ``quality`` is a file's pooled label, not individual raters."""
    rated = [ex for ex in examples if quality in ex.ratings]
    return bool(rated) and all(quality in ex.extra.get("aggregate_only", ()) for ex in rated)


# -- estimates --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """A statistic with its bootstrap CI (expanded percentile; NaN where undefined or on too few contexts)."""

    value: float
    low: float = NAN
    high: float = NAN

    @property
    def defined(self) -> bool:
        return not math.isnan(self.value)

    def to_dict(self, name: str) -> dict[str, float | None]:
        return {name: _clean(self.value), f"{name}_lo": _clean(self.low), f"{name}_hi": _clean(self.high)}


@dataclass(frozen=True)
class LabelScore:
    """Precision and recall of one label (the judge's answers as predictions of the humans')."""

    label: str
    #: items whose human majority is this label
    human: int
    #: items the judge gave this label
    judged: int
    precision: Estimate
    recall: Estimate


@dataclass(frozen=True)
class LabelComparison:
    evaluator: str
    quality: str
    labels: tuple[str, ...]
    n: int
    exclusions: Mapping[str, int]
    tie_rule: TieRule
    #: tied human majorities among the candidate items, and how many the rule kept
    n_ties: int
    n_ties_kept: int
    percent_agreement: Estimate
    kappa: Estimate
    #: Krippendorff's alpha (nominal) of the annotators plus the judge as one more rater
    alpha: Estimate
    #: rows: human majority label; columns: judge label (in ``labels`` order)
    confusion: tuple[tuple[int, ...], ...]
    per_label: tuple[LabelScore, ...]
    #: ROC-AUC of the judge's probability of ``positive`` (two-label qualities with probability answers)
    auc: Estimate | None = None
    positive: str | None = None
    n_auc: int = 0
    n_boot: int = 0
    confidence: float = 0.95
    seed: int = 0
    reasons: tuple[str, ...] = ()

    @property
    def excluded(self) -> int:
        return sum(self.exclusions.values())

    def to_record(self) -> dict[str, Any]:
        """A flat record (JSON/CSV) of this comparison."""
        record: dict[str, Any] = {"evaluator": self.evaluator, "kind": "evaluator", "quality": self.quality,
                                  "labels": list(self.labels), "n": self.n, "excluded": self.excluded,
                                  **{r: self.exclusions.get(r, 0) for r in EXCLUSION_REASONS},
                                  "ties": self.n_ties, "ties_kept": self.n_ties_kept, "tie_rule": self.tie_rule.value}
        record.update(self.percent_agreement.to_dict("percent_agreement"))
        record.update(self.kappa.to_dict("kappa"))
        record.update(self.alpha.to_dict("alpha"))
        record.update((self.auc or Estimate(NAN)).to_dict("auc"))
        record.update(auc_positive=self.positive, n_auc=self.n_auc if self.auc is not None else None,
                      confusion=[list(row) for row in self.confusion],
                      per_label=[{"label": s.label, "human": s.human, "judged": s.judged,
                                  **s.precision.to_dict("precision"), **s.recall.to_dict("recall")}
                                 for s in self.per_label],
                      n_boot=self.n_boot, confidence=self.confidence, seed=self.seed,
                      reason="; ".join(self.reasons) or None)
        return record


def compare_labels(
    examples: Sequence[Example],
    quality: str,
    judge_labels: Mapping[str, RatingValue],
    *,
    evaluator: str = "judge",
    probabilities: Mapping[str, float | None] | None = None,
    positive: RatingValue = None,
    tie_rule: TieRule | str = TieRule.EXCLUDE,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> LabelComparison:
    """Compare ``judge_labels`` (id -> label, None for a failed judgment) with the human
    majority over ``examples`` (those rated on ``quality`` are the candidates).

    ``probabilities`` (id -> the judge's probability of the ``positive`` label) give
    the ROC-AUC on a two-label quality.
    """
    tie_rule = TieRule(tie_rule)
    rated = [ex for ex in examples if quality in ex.ratings]
    if not rated:
        raise ValueError(f"no example has ratings of {quality!r}")
    scale = rated[0].ratings[quality].scale
    majority = majority_labels(rated, quality, tie_rule)
    labels = majority.labels
    index = {label: k for k, label in enumerate(labels)}
    counts = dict.fromkeys(EXCLUSION_REASONS, 0)
    kept: list[Example] = []
    judge_index: list[int] = []
    human_index: list[int] = []
    for ex in rated:
        if ex.id not in judge_labels:
            counts["not_judged"] += 1
            continue
        answer = judge_labels[ex.id]
        if answer is None or is_missing(answer):
            counts["failed"] += 1
            continue
        label = on_scale(answer, scale)
        if label is None or label not in index:
            counts["invalid_label"] += 1
            continue
        if ex.id in majority.unrated:
            counts["no_human_label"] += 1
            continue
        human = majority.values[ex.id]
        if human is None:
            counts["tie_excluded"] += 1
            continue
        kept.append(ex)
        judge_index.append(index[label])
        human_index.append(index[human])

    candidate_ids = {ex.id for ex in rated if ex.id in judge_labels}
    n_ties = len(majority.ties & candidate_ids)
    n_ties_kept = len(majority.ties_kept & candidate_ids)
    k = len(labels)
    n = len(kept)
    reasons: list[str] = []
    h = np.array(human_index, dtype=np.intp)
    j = np.array(judge_index, dtype=np.intp)
    resampling = bs.resample(n, [ex.group_id for ex in kept], n_boot=n_boot, seed=seed) if n and n_boot else None
    weights = resampling.item_weights if resampling is not None else np.zeros((0, n))

    n_contexts = len({ex.group_id for ex in kept})

    def estimate(point: float, resampled: np.ndarray | None) -> Estimate:
        if math.isnan(point) or resampled is None or not resampled.size:
            return Estimate(point)
        # The expanded percentile interval, none on too few contexts (stats/small_samples.py).
        low, high, _ = bs.small_sample_interval(resampled, confidence, n_contexts, MIN_CONTEXTS_LABELS)
        return Estimate(point, low, high)

    # Every agreement statistic is a function of the (human, judge) table; a resample's table
    # is its multiplicities summed per cell, so all resamples cost one matrix product.
    cells = np.zeros((n, k * k))
    cells[np.arange(n), h * k + j] = 1.0
    table = cells.sum(axis=0).reshape(k, k) if n else np.zeros((k, k))
    boot_tables = (weights @ cells).reshape(-1, k, k) if resampling is not None else None
    agreement, kappa = _agreement_and_kappa(table[None])
    agreement_b, kappa_b = _agreement_and_kappa(boot_tables) if boot_tables is not None else (None, None)
    if n == 0:
        reasons.append("no item has both a judge label and a human majority label")
    elif math.isnan(kappa[0]):
        reasons.append("kappa: the judge and the humans each used a single, same label (chance agreement is 1)")

    per_label = []
    for c, label in enumerate(labels):
        precision, recall = _precision_recall(table[None], c)
        pb, rb = _precision_recall(boot_tables, c) if boot_tables is not None else (None, None)
        per_label.append(LabelScore(label_text(label), int(table[c].sum()), int(table[:, c].sum()),
                                    estimate(float(precision[0]), pb), estimate(float(recall[0]), rb)))

    alpha_units = _alpha_units(kept, quality, scale, index, j)
    alpha = _nominal_alpha(alpha_units.sum(axis=0, keepdims=True) if n else np.zeros((1, k * k)), k)
    alpha_b = _nominal_alpha(weights @ alpha_units, k) if resampling is not None else None
    if n and math.isnan(alpha[0]):
        reasons.append("alpha: only one distinct label was given")

    auc: Estimate | None = None
    n_auc = 0
    positive_text = None
    if probabilities is not None and k == 2:
        positive_label = positive if positive is not None else labels[1]
        positive_label = on_scale(positive_label, scale)
        if positive_label in index:
            positive_text = label_text(positive_label)
            p = np.array([_probability(probabilities.get(ex.id)) for ex in kept])
            has_p = np.isfinite(p)
            n_auc = int(has_p.sum())
            is_pos = h == index[positive_label]
            point = _weighted_auc(p[has_p], is_pos[has_p], np.ones((1, n_auc)))
            boot = _weighted_auc(p[has_p], is_pos[has_p], weights[:, has_p]) if resampling is not None else None
            auc = estimate(float(point[0]), boot)
            if not auc.defined:
                reasons.append("AUC: the humans used one label only among the items with a probability")

    return LabelComparison(
        evaluator=evaluator, quality=quality, labels=tuple(label_text(v) for v in labels), n=n,
        exclusions=counts, tie_rule=tie_rule, n_ties=n_ties, n_ties_kept=n_ties_kept,
        percent_agreement=estimate(float(agreement[0]), agreement_b), kappa=estimate(float(kappa[0]), kappa_b),
        alpha=estimate(float(alpha[0]), alpha_b),
        confusion=tuple(tuple(int(x) for x in row) for row in table), per_label=tuple(per_label),
        auc=auc, positive=positive_text, n_auc=n_auc, n_boot=n_boot if resampling is not None else 0,
        confidence=confidence, seed=seed, reasons=tuple(reasons),
    )


def _agreement_and_kappa(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Percent agreement and Cohen's kappa of every (B, k, k) table; NaN where undefined."""
    total = tables.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = tables / total[:, None, None]
        observed = np.trace(p, axis1=1, axis2=2)
        expected = (p.sum(axis=2) * p.sum(axis=1)).sum(axis=1)
        kappa = np.where(np.isclose(expected, 1.0), NAN, (observed - expected) / (1.0 - expected))
    observed = np.where(total > 0, observed, NAN)
    kappa = np.where(total > 0, kappa, NAN)
    return observed, kappa


def _precision_recall(tables: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray]:
    hit = tables[:, c, c]
    with np.errstate(invalid="ignore", divide="ignore"):
        judged = tables[:, :, c].sum(axis=1)
        human = tables[:, c, :].sum(axis=1)
        precision = np.where(judged > 0, hit / judged, NAN)
        recall = np.where(human > 0, hit / human, NAN)
    return precision, recall


def _alpha_units(kept: Sequence[Example], quality: str, scale: Scale, index: Mapping[RatingValue, int],
                 judge: np.ndarray) -> np.ndarray:
    """Per item, the coincidences (Krippendorff) of its annotators' labels plus the judge's, flattened k*k."""
    k = len(index)
    out = np.zeros((len(kept), k * k))
    for i, ex in enumerate(kept):
        counts = np.zeros(k)
        for v in ex.ratings[quality].scores:
            label = on_scale(v, scale)
            if label in index:
                counts[index[label]] += 1
        counts[judge[i]] += 1
        m = counts.sum()
        if m >= 2:
            out[i] = ((np.outer(counts, counts) - np.diag(counts)) / (m - 1)).ravel()
    return out


def _nominal_alpha(coincidences: np.ndarray, k: int) -> np.ndarray:
    """Nominal alpha from summed coincidence matrices, one per row: 1 - D_o / D_e."""
    o = coincidences.reshape(-1, k, k)
    n_c = o.sum(axis=2)
    n = n_c.sum(axis=1)
    off = ~np.eye(k, dtype=bool)
    observed = o[:, off].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = ((n_c[:, :, None] * n_c[:, None, :])[:, off].sum(axis=1)) / (n - 1)
        alpha = np.where(expected > 0, 1.0 - observed / expected, NAN)
    return alpha


def _weighted_auc(p: np.ndarray, is_pos: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """ROC-AUC (Mann-Whitney: P(p_pos > p_neg) + P(tie) / 2) for every row of item weights."""
    neg_scores = p[~is_pos]
    order = np.argsort(neg_scores, kind="stable")
    sorted_neg = neg_scores[order]
    neg_w = weights[:, ~is_pos][:, order]
    pos_w = weights[:, is_pos]
    cumulative = np.concatenate([np.zeros((weights.shape[0], 1)), np.cumsum(neg_w, axis=1)], axis=1)
    lo = np.searchsorted(sorted_neg, p[is_pos], side="left")
    hi = np.searchsorted(sorted_neg, p[is_pos], side="right")
    below = cumulative[:, lo]
    equal = cumulative[:, hi] - below
    with np.errstate(invalid="ignore", divide="ignore"):
        pairs = pos_w.sum(axis=1) * neg_w.sum(axis=1)
        auc = np.where(pairs > 0, (pos_w * (below + 0.5 * equal)).sum(axis=1) / pairs, NAN)
    return auc


def _probability(value: float | None) -> float:
    if value is None or is_missing(value):
        return NAN
    return float(value)


# -- the human ceiling on labels ------------------------------------------------------------------


@dataclass(frozen=True)
class AnnotatorVsMajority:
    """One annotator against the majority of the other annotators (ties per the rule)."""

    annotator: str
    n: int
    percent_agreement: float
    kappa: float


@dataclass(frozen=True)
class LabelCeiling:
    """How well the annotators agree with each other on a label quality."""

    quality: str
    n_items: int
    n_annotators: int
    aggregate_only: bool
    alpha: float
    #: means over annotator pairs sharing at least MIN_SHARED_ITEMS items, weighted by them (.rater_pairs)
    pairwise_kappa: float
    pairwise_agreement: float
    n_pairs: int
    #: The raters with enough items shared with the others (.rater_pairs), each against the others' majority.
    per_annotator: tuple[AnnotatorVsMajority, ...]
    tie_rule: TieRule
    reasons: tuple[str, ...] = field(default=())
    #: bootstrap percentile CI of ``alpha`` (items resampled by context, as for the judges)
    alpha_low: float = NAN
    alpha_high: float = NAN
    #: The pairs, raters and items the pairwise figures rest on.
    kappa_basis: Pooled = UNDEFINED
    agreement_basis: Pooled = UNDEFINED
    #: The raters and items "vs the majority of the others" (its % agreement) rests on.
    majority_basis: Pooled = UNDEFINED

    @property
    def vs_majority_agreement(self) -> float:
        return _weighted(self.per_annotator, "percent_agreement")

    @property
    def vs_majority_kappa(self) -> float:
        return _weighted(self.per_annotator, "kappa")

    @property
    def annotators_text(self) -> str:
        return AGGREGATE_ONLY_TEXT if self.aggregate_only else str(self.n_annotators)

    def to_record(self) -> dict[str, Any]:
        return {
            "evaluator": "human ceiling", "kind": "ceiling", "quality": self.quality, "n": self.n_items,
            "annotators": self.annotators_text, "aggregate_only": self.aggregate_only,
            "alpha": _clean(self.alpha), "alpha_lo": _clean(self.alpha_low), "alpha_hi": _clean(self.alpha_high),
            "pairwise_kappa": _clean(self.pairwise_kappa),
            "pairwise_percent_agreement": _clean(self.pairwise_agreement), "n_pairs": self.n_pairs,
            "pairwise_kappa_basis": self.kappa_basis.to_dict(),
            "pairwise_percent_agreement_basis": self.agreement_basis.to_dict(),
            "vs_majority_percent_agreement": _clean(self.vs_majority_agreement),
            "vs_majority_kappa": _clean(self.vs_majority_kappa),
            "vs_majority_basis": self.majority_basis.to_dict(),
            "per_annotator": [{"annotator": a.annotator, "n": a.n, "percent_agreement": _clean(a.percent_agreement),
                               "kappa": _clean(a.kappa)} for a in self.per_annotator],
            "tie_rule": self.tie_rule.value, "reason": "; ".join(self.reasons) or None,
        }


def label_ceiling(examples: Iterable[Example], quality: str, tie_rule: TieRule | str = TieRule.EXCLUDE, *,
                  n_boot: int = 0, seed: int = 0, confidence: float = 0.95,
                  min_shared_items: int = MIN_SHARED_ITEMS) -> LabelCeiling:
    """Mean pairwise kappa and percent agreement, alpha among the annotators, and each annotator
    against the majority of the others (a tie among the others is excluded, or with rule ``first``
    goes to the first label; a published majority is of all annotators, so it does not apply).
    Pairs and annotators count only with enough shared items, weighted by them (:mod:`.rater_pairs`)."""

    tie_rule = TieRule(tie_rule)
    examples = [ex for ex in examples if quality in ex.ratings]
    matrix = annotator_matrix(examples, quality)
    reasons: list[str] = []
    if is_aggregate_only(examples, quality):
        return LabelCeiling(quality, matrix.n_items, 0, True, NAN, NAN, NAN, 0, (), tie_rule,
                            (f"{AGGREGATE_ONLY_TEXT}: the human ceiling cannot be computed",))
    scale = examples[0].ratings[quality].scale if examples else None
    if scale is None or len(matrix.annotators) < 2:
        reasons.append("fewer than two annotators: the human ceiling cannot be computed")
        return LabelCeiling(quality, matrix.n_items, len(matrix.annotators), False, NAN, NAN, NAN, 0, (),
                            tie_rule, tuple(reasons))
    labels = scale_labels(scale, (on_scale(v, scale) for row in matrix.values for v in row))
    index = {label: c for c, label in enumerate(labels)}
    rows = [[on_scale(v, scale) for v in row] for row in matrix.values]
    codes = np.full((len(rows), matrix.n_items), -1, dtype=np.intp)
    for a, row in enumerate(rows):
        for i, v in enumerate(row):
            if v in index:
                codes[a, i] = index[v]
    alpha = krippendorff_alpha([[None if c < 0 else float(c) for c in row] for row in codes])
    if math.isnan(alpha):
        reasons.append("alpha: only one distinct label, or no item with two labels")
    pairs, pairs_left_out = shared_pairs(np.where(codes >= 0, codes, np.nan), min_shared_items)
    kappas, agreements = [], []
    for a, b, shared in pairs:
        first, second = [rows[a][i] for i in shared], [rows[b][i] for i in shared]
        agreements.append((a, b, shared, percent_agreement(first, second)))
        kappas.append((a, b, shared, cohen_kappa(first, second, categories=list(labels))))
    kappa_basis, _ = pool_pairs(matrix.annotators, kappas, pairs_left_out)
    agreement_basis, _ = pool_pairs(matrix.annotators, agreements, pairs_left_out)
    k = len(labels)
    counts = np.zeros((matrix.n_items, k), dtype=np.intp)
    for a in range(len(rows)):
        rated = codes[a] >= 0
        np.add.at(counts, (np.nonzero(rated)[0], codes[a][rated]), 1)
    # Raters with too few items shared with the others are neither slots nor among "the others".
    slots = slot_raters(codes >= 0, min_shared_items)
    votes = counts.copy()  # the slots' votes (counts, everyone's, are alpha's)
    for a in set(range(len(rows))) - set(slots):
        rated = codes[a] >= 0
        np.add.at(votes, (np.nonzero(rated)[0], codes[a][rated]), -1)
    per_annotator = []
    majority_slots = []
    for a in slots:
        name = matrix.annotators[a]
        own = codes[a]
        others = votes.copy()
        rated = own >= 0
        others[np.nonzero(rated)[0], own[rated]] -= 1
        top = others.max(axis=1)
        n_top = (others == top[:, None]).sum(axis=1)
        majority = others.argmax(axis=1)  # first label among the tied ones
        usable = rated & (top > 0) & ((n_top == 1) | (tie_rule is TieRule.FIRST))
        mine = [labels[c] for c in own[usable]]
        theirs = [labels[c] for c in majority[usable]]
        per_annotator.append(AnnotatorVsMajority(
            name, int(usable.sum()), percent_agreement(mine, theirs) if mine else NAN,
            cohen_kappa(mine, theirs, categories=list(labels)) if mine else NAN))
        majority_slots.append((a, np.flatnonzero(usable), per_annotator[-1].percent_agreement))
    n_left_out = len(rows) - len(slots)
    for note in (left_out_note("pairwise κ and % agreement", pairs_left_out, "pairs", min_shared_items),
                 left_out_note("vs the majority of the others", n_left_out, "raters", min_shared_items)):
        if note:
            reasons.append(note)
    low = high = NAN
    if n_boot and not math.isnan(alpha):
        # Per item, the annotators' coincidences (Krippendorff); a resample's alpha is their weighted sum's.
        units = np.zeros((matrix.n_items, k * k))
        m = counts.sum(axis=1)
        for unit in np.nonzero(m >= 2)[0]:
            units[unit] = ((np.outer(counts[unit], counts[unit]) - np.diag(counts[unit])) / (m[unit] - 1)).ravel()
        groups = [ex.group_id for ex in examples]
        weights = bs.resample(matrix.n_items, groups, n_boot=n_boot, seed=seed).item_weights
        low, high, _ = bs.small_sample_interval(_nominal_alpha(weights @ units, k), confidence, len(set(groups)),
                                                MIN_CONTEXTS_LABELS)
    return LabelCeiling(quality, matrix.n_items, len(matrix.annotators), False, alpha, kappa_basis.value,
                        agreement_basis.value, agreement_basis.n_units, tuple(per_annotator), tie_rule,
                        tuple(reasons), low, high, kappa_basis, agreement_basis,
                        pool_slots(matrix.annotators, majority_slots, n_left_out))


def _weighted(per_annotator: Sequence[AnnotatorVsMajority], figure: str) -> float:
    """The annotators' figure against the others' majority, weighted by their items."""
    kept = [a for a in per_annotator if not math.isnan(getattr(a, figure))]
    return weighted_mean([getattr(a, figure) for a in kept], [a.n for a in kept])


def _clean(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else float(value)
