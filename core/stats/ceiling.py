"""The human-human ceiling: how well annotators agree with each other.

Leave-one-annotator-out correlation: each annotator's values against the mean
of the other annotators on the items both cover, averaged over annotators
weighted by their items. Beside it Krippendorff's alpha among annotators (level
from the scale kind), the graded pairwise Spearman between annotators (numeric
qualities, with its CI), and for binary/categorical qualities the mean pairwise
Cohen's kappa and percent agreement. Pairs and leave-one-out slots count only
with at least ``MIN_SHARED_ITEMS`` items, and are weighted by their items
(:mod:`.rater_pairs`: a stray rater's few votes neither enter nor tilt them).
At system level the leave-one-out correlation is taken between per-system
means (alpha, kappa and the pairwise figures are item-level notions and are
left out there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from ..format import interval_text, number_text, rater_counts_text
from ..model import Example, Scale, ScaleKind
from .categorical import alpha_undefined_reason, cohen_kappa, krippendorff_alpha, percent_agreement
from .ceiling_ci import CeilingInterval, ceiling_interval
from .correlation import METHODS, SYSTEM, TURN, degenerate_reason, point_estimates
from .human import AnnotatorMatrix, alpha_level, annotator_matrix
from .rater_pairs import (
    MIN_SHARED_ITEMS,
    UNDEFINED,
    Pooled,
    left_out_note,
    pool_pairs,
    shared_pairs,
    slot_raters,
    weighted_mean,
)
from .rater_spearman import PairwiseSpearman, pairwise_spearman

NAN = float("nan")


@dataclass(frozen=True)
class AnnotatorAgreement:
    """One annotator against the mean of the others."""

    annotator: str
    n: int
    pearson: float
    spearman: float
    kendall: float
    #: Items the annotator's slot covers (its weight; ``n`` counts systems at system level).
    n_items: int = 0


@dataclass(frozen=True)
class HumanCeiling:
    quality: str
    level: str
    n_items: int
    n_annotators: int
    #: Leave-one-out coefficients averaged over the annotators where they are defined, weighted by items.
    pearson: float
    spearman: float
    kendall: float
    per_annotator: tuple[AnnotatorAgreement, ...] = ()
    alpha: float | None = None
    alpha_level: str | None = None
    #: Binary/categorical only: mean over annotator pairs sharing enough items, weighted by them.
    kappa: float | None = None
    percent_agreement: float | None = None
    n_pairs: int | None = None
    #: The raters and items the leave-one-out ceiling (its Spearman) rests on.
    loo_basis: Pooled = UNDEFINED
    #: Binary/categorical only: what ``kappa`` and ``percent_agreement`` rest on.
    kappa_basis: Pooled | None = None
    agreement_basis: Pooled | None = None
    #: Numeric qualities at turn level: Spearman between annotators, pair by pair, with its CI.
    pairwise_spearman: PairwiseSpearman | None = None
    annotators_by_name: bool = False
    reasons: tuple[str, ...] = field(default=())
    #: The leave-one-out coefficients' CIs (context bootstrap, :mod:`.ceiling_ci`); None: not asked for.
    interval: CeilingInterval | None = None
    #: The most annotators on one item (``n_annotators`` counts them over the set); 0: not counted.
    n_per_item: int = 0

    def coefficient(self, method: str) -> float:
        if method not in METHODS:
            raise ValueError(f"unknown correlation {method!r}: use one of {', '.join(METHODS)}")
        return getattr(self, method)

    def ci(self, method: str) -> tuple[float, float]:
        """(low, high) of the coefficient's CI; NaN where none is shown."""
        self.coefficient(method)
        for name, low, high in self.interval.intervals if self.interval is not None else ():
            if name == method:
                return low, high
        return NAN, NAN

    @property
    def n_contexts(self) -> int | None:
        """Contexts behind the ceiling (the bootstrap's unit); None when items were resampled or no CI was asked."""
        return self.interval.n_units if self.interval is not None and self.interval.by_group else None

    @property
    def ci_reason(self) -> str | None:
        """Why a defined coefficient shows no CI (too few contexts), or None."""
        return self.interval.reason if self.interval is not None else None

    def n_text(self) -> str:
        """``n = 60 items in 10 contexts, 5 raters in the set, 3 per item``: what the ceiling was computed on."""
        contexts = f" in {self.n_contexts} contexts" if self.n_contexts is not None else ""
        basis = self.loo_basis
        # Where raters or items were left out (too few shared), the text says what the ceiling rests on.
        fewer = (basis.n_raters, basis.n_items) != (self.n_annotators, self.n_items) and not math.isnan(basis.value)
        rests = f" (leave-one-out on {self.rests_on()})" if fewer else ""
        return f"n = {self.n_items} items{contexts}, {rater_counts_text(self.n_annotators, self.per_item)}{rests}"

    def rests_on(self) -> str:
        """``4 raters, 360 items``: the leave-one-out slots the ceiling averages."""
        return self.loo_basis.rests_on("raters")

    def pairwise_text(self) -> str:
        """The graded pairwise Spearman and its CI: ``0.512 [.45,.57]``; ``–`` where undefined."""
        if self.pairwise_spearman is None:
            return "–"
        value = self.pairwise_spearman.value
        return " ".join(part for part in (number_text(value), interval_text(*self.pairwise_spearman.ci())) if part)

    @property
    def per_item(self) -> int:
        return self.n_per_item or self.n_annotators

    def text(self, method: str) -> str:
        """The coefficient and its CI as every front end shows it: ``0.612 [.55,.67]``."""
        value = self.coefficient(method)
        return " ".join(part for part in (number_text(value), interval_text(*self.ci(method))) if part)

    def to_dict(self) -> dict[str, Any]:
        def clean(v: float | None) -> float | None:
            return None if v is None or math.isnan(v) else v

        return {
            "quality": self.quality,
            "level": self.level,
            "n_items": self.n_items,
            "n_annotators": self.n_annotators,
            "n_per_item": self.per_item,
            "pearson": clean(self.pearson),
            "spearman": clean(self.spearman),
            "kendall": clean(self.kendall),
            **{f"{m}_{end}": clean(bound) for m in METHODS for end, bound in zip(("lo", "hi"), self.ci(m))},
            "n_contexts": self.n_contexts,
            "ci_method": self.interval.method if self.interval is not None else None,
            "ci_reason": self.ci_reason,
            "alpha": clean(self.alpha),
            "alpha_level": self.alpha_level,
            "kappa": clean(self.kappa),
            "percent_agreement": clean(self.percent_agreement),
            "loo_basis": self.loo_basis.to_dict(),
            **({"kappa_basis": self.kappa_basis.to_dict()} if self.kappa_basis is not None else {}),
            **({"agreement_basis": self.agreement_basis.to_dict()} if self.agreement_basis is not None else {}),
            **({"pairwise_spearman": self.pairwise_spearman.to_dict()} if self.pairwise_spearman is not None
               else {}),
            "reasons": list(self.reasons),
        }


#: Resamples of the ceiling's CI unless told otherwise (the judges' default).
CEILING_BOOT = 1000


def human_ceiling(examples: Iterable[Example], quality: str, *, level: str = TURN, n_boot: int = CEILING_BOOT,
                  seed: int = 0, confidence: float = 0.95, min_shared_items: int = MIN_SHARED_ITEMS) -> HumanCeiling:
    """The ceiling of ``quality`` over ``examples`` at turn (item) or system level; at turn level
    with the context-bootstrap CI of its coefficients (``n_boot=0``: none). Annotator pairs and
    leave-one-out slots count from ``min_shared_items`` shared items (:mod:`.rater_pairs`)."""
    examples = list(examples)
    matrix = annotator_matrix(examples, quality)
    reasons: list[str] = []
    categorical = matrix.scale is not None and not matrix.scale.is_numeric
    if matrix.n_items == 0:
        reasons.append(f"no example has ratings of {quality!r}")
    values = matrix.numeric()
    # The leave-one-out slots: raters with enough items shared with the others (the others too are slots).
    slots = slot_raters(np.isfinite(values), min_shared_items) if len(matrix.annotators) > 1 else list(range(len(matrix.annotators)))
    if categorical:
        reasons.append("categorical scale: annotators are compared by kappa and alpha, not correlation")
        per_annotator: list[AnnotatorAgreement] = []
    else:
        systems = [ex.system for ex in examples if quality in ex.ratings] if level == SYSTEM else None
        per_annotator = _leave_one_out(matrix, values, slots, systems, reasons, min_shared_items)
    means = {m: weighted_mean(*_defined(per_annotator, m)) for m in METHODS}
    result: dict[str, Any] = dict(
        quality=quality, level=level, n_items=matrix.n_items, n_annotators=len(matrix.annotators),
        n_per_item=max((len(ex.ratings[quality].scores) for ex in examples if quality in ex.ratings), default=0),
        per_annotator=tuple(per_annotator), annotators_by_name=matrix.by_name, **means,
        loo_basis=_loo_basis(matrix, values, slots, per_annotator),
    )
    group_of = {ex.id: ex.group_id for ex in examples}
    groups = [group_of[i] for i in matrix.example_ids]
    if level != SYSTEM and matrix.n_items:
        result.update(_reliability(matrix, reasons, min_shared_items))
        if per_annotator:
            defined = [slots[k] for k, agreement in enumerate(per_annotator) if not math.isnan(agreement.pearson)]
            result["interval"] = ceiling_interval(values, groups, defined, means, n_boot=n_boot, seed=seed,
                                                  confidence=confidence)
        if not categorical and len(matrix.annotators) > 1:
            spearman = pairwise_spearman(values, matrix.annotators, groups, n_boot=n_boot, seed=seed,
                                         confidence=confidence, min_shared_items=min_shared_items)
            result["pairwise_spearman"] = spearman
            note = left_out_note("pairwise Spearman", spearman.pooled.n_left_out, "pairs", min_shared_items)
            if note:
                reasons.append(note)
    return HumanCeiling(**result, reasons=tuple(reasons))


def _defined(per_annotator: list[AnnotatorAgreement], method: str) -> tuple[list[float], list[int]]:
    """The slots' defined coefficients and their weights (items)."""
    kept = [a for a in per_annotator if not math.isnan(getattr(a, method))]
    return [getattr(a, method) for a in kept], [a.n_items for a in kept]


def _loo_basis(matrix: AnnotatorMatrix, values: np.ndarray, slots: list[int],
               per_annotator: list[AnnotatorAgreement]) -> Pooled:
    """The raters (slots whose Spearman is defined) and the items the leave-one-out ceiling rests on."""
    rated = np.isfinite(values[slots]) if slots else np.zeros((0, values.shape[1]), dtype=bool)
    covered = np.zeros(values.shape[1], dtype=bool)
    kept = []
    for k, agreement in enumerate(per_annotator):
        if math.isnan(agreement.spearman):
            continue
        kept.append(agreement.annotator)
        covered |= rated[k] & (rated.sum(axis=0) - rated[k] > 0)
    if not kept:
        return UNDEFINED
    value = weighted_mean(*_defined(per_annotator, "spearman"))
    return Pooled(value, tuple(kept), int(covered.sum()), len(kept), len(matrix.annotators) - len(slots))


@dataclass(frozen=True)
class CeilingRow:
    """The ceiling of one quality among the examples of one level (turn or dialog)."""

    quality: str
    level: str
    scale: str
    ceiling: HumanCeiling

    @property
    def n_items(self) -> int:
        return self.ceiling.n_items

    @property
    def n_annotators(self) -> int:
        return self.ceiling.n_annotators

    @property
    def loo_pearson(self) -> float:
        return self.ceiling.pearson

    @property
    def loo_spearman(self) -> float:
        return self.ceiling.spearman

    @property
    def alpha(self) -> float | None:
        return self.ceiling.alpha

    @property
    def alpha_level(self) -> str | None:
        return self.ceiling.alpha_level


def ceiling_table(examples: Iterable[Example], qualities: Iterable[str] | None = None, *,
                  n_boot: int = CEILING_BOOT) -> list[CeilingRow]:
    """The item-level ceiling of every rated quality (or of ``qualities``),
    separately for turn-level and dialog-level examples (FED rates "Overall" at both)."""
    by_level: dict[str, list[Example]] = {}
    for ex in examples:
        by_level.setdefault(ex.level.value, []).append(ex)
    wanted = None if qualities is None else list(qualities)
    rows = []
    for level, members in by_level.items():
        scales: dict[str, Scale] = {}
        for ex in members:
            for quality, rating in ex.ratings.items():
                scales.setdefault(quality, rating.scale)
        for quality in (wanted if wanted is not None else scales):
            if quality in scales:
                rows.append(CeilingRow(quality, level, scale_text(scales[quality]),
                                       human_ceiling(members, quality, n_boot=n_boot)))
    return rows


def scale_text(scale: Scale) -> str:
    if scale.labels:
        return f"{scale.kind.value}: {', '.join(scale.labels)}"
    return f"{scale.kind.value} {scale.min:g}-{scale.max:g}"


def _leave_one_out(matrix: AnnotatorMatrix, all_values: np.ndarray, slots: list[int],
                   systems: list[str | None] | None, reasons: list[str],
                   min_shared_items: int) -> list[AnnotatorAgreement]:
    """Each slot against the mean of the other slots (raters below the minimum are in neither)."""
    if len(matrix.annotators) == 1:
        # A single annotator has nobody to be compared with: no ceiling, and no empty-mean warning.
        reasons.append("only one annotator: no leave-one-out agreement")
        return []
    if len(slots) < len(matrix.annotators):
        note = left_out_note("leave-one-out ceiling", len(matrix.annotators) - len(slots), "raters", min_shared_items)
        reasons.append(note if slots and note else
                       f"no two annotators share {min_shared_items} items: no leave-one-out agreement")
    values = all_values[slots]
    out = []
    for a, name in enumerate(matrix.annotators[s] for s in slots):
        others = np.delete(values, a, axis=0)
        covered = np.isfinite(others).any(axis=0) & np.isfinite(values[a])
        n_items = int(covered.sum())
        with np.errstate(invalid="ignore"):
            others_mean = np.where(covered, np.nanmean(np.where(covered, others, 0.0), axis=0), np.nan)
        own = values[a]
        if systems is not None:
            own, others_mean = _system_means(own, others_mean, covered, systems)
            covered = np.isfinite(own)
        x, y = own[covered], others_mean[covered]
        reason = degenerate_reason(x, y, "systems" if systems is not None else "items")
        if reason:
            reasons.append(f"{name}: " + reason.replace("the scores", "their own values")
                           .replace("the human labels", "the other annotators' means"))
            out.append(AnnotatorAgreement(name, int(x.size), NAN, NAN, NAN, n_items))
            continue
        points = point_estimates(x, y)
        out.append(AnnotatorAgreement(name, int(x.size), points["pearson"][0], points["spearman"][0],
                                      points["kendall"][0], n_items))
    return out


def _system_means(own: np.ndarray, others: np.ndarray, covered: np.ndarray,
                  systems: list[str | None]) -> tuple[np.ndarray, np.ndarray]:
    names = sorted({s for s, c in zip(systems, covered) if c and s})
    own_means, other_means = [], []
    for name in names:
        mask = covered & np.array([s == name for s in systems])
        own_means.append(own[mask].mean())
        other_means.append(others[mask].mean())
    return np.array(own_means), np.array(other_means)


def _reliability(matrix: AnnotatorMatrix, reasons: list[str], min_shared_items: int) -> dict[str, Any]:
    level = alpha_level(matrix.scale)
    data = matrix.numeric()
    undefined = alpha_undefined_reason(data)
    if undefined:
        reasons.append(f"alpha: {undefined}")
        alpha = NAN
    else:
        alpha = krippendorff_alpha(data, level)
    out: dict[str, Any] = {"alpha": alpha, "alpha_level": level}
    if matrix.scale is not None and matrix.scale.kind in (ScaleKind.BINARY, ScaleKind.CATEGORICAL):
        pairs, left_out = shared_pairs(data, min_shared_items)
        kappas, agreements = [], []
        for a, b, index in pairs:
            first = [matrix.values[a][i] for i in index]
            second = [matrix.values[b][i] for i in index]
            agreements.append((a, b, index, percent_agreement(first, second)))
            kappas.append((a, b, index, cohen_kappa(first, second)))
        kappa, _ = pool_pairs(matrix.annotators, kappas, left_out)
        agreement, _ = pool_pairs(matrix.annotators, agreements, left_out)
        note = left_out_note("pairwise κ and % agreement", left_out, "pairs", min_shared_items)
        if note:
            reasons.append(note)
        out.update(kappa=kappa.value, percent_agreement=agreement.value, n_pairs=agreement.n_units,
                   kappa_basis=kappa, agreement_basis=agreement)
    return out
