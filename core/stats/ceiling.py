"""The human-human ceiling: how well annotators agree with each other.

Leave-one-annotator-out correlation: each annotator's values against the mean
of the other annotators on the items both cover, averaged over annotators.
Beside it Krippendorff's alpha among annotators (level from the scale kind),
and for binary/categorical qualities the mean pairwise Cohen's kappa and
percent agreement. At system level the leave-one-out correlation is taken
between per-system means (alpha and kappa are item-level notions and are left
out there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Iterable

import numpy as np

from ..foreground import give_way
from ..format import interval_text, number_text, rater_counts_text
from ..model import Example, Scale, ScaleKind
from .categorical import alpha_undefined_reason, cohen_kappa, krippendorff_alpha, percent_agreement
from .ceiling_ci import CeilingInterval, ceiling_interval
from .correlation import METHODS, SYSTEM, TURN, degenerate_reason, point_estimates
from .human import AnnotatorMatrix, alpha_level, annotator_matrix

NAN = float("nan")


@dataclass(frozen=True)
class AnnotatorAgreement:
    """One annotator against the mean of the others."""

    annotator: str
    n: int
    pearson: float
    spearman: float
    kendall: float


@dataclass(frozen=True)
class HumanCeiling:
    quality: str
    level: str
    n_items: int
    n_annotators: int
    #: Leave-one-out coefficients averaged over the annotators where they are defined.
    pearson: float
    spearman: float
    kendall: float
    per_annotator: tuple[AnnotatorAgreement, ...] = ()
    alpha: float | None = None
    alpha_level: str | None = None
    #: Binary/categorical only: mean over annotator pairs.
    kappa: float | None = None
    percent_agreement: float | None = None
    n_pairs: int | None = None
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
        return f"n = {self.n_items} items{contexts}, {rater_counts_text(self.n_annotators, self.per_item)}"

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
            "reasons": list(self.reasons),
        }


#: Resamples of the ceiling's CI unless told otherwise (the judges' default).
CEILING_BOOT = 1000


def human_ceiling(examples: Iterable[Example], quality: str, *, level: str = TURN, n_boot: int = CEILING_BOOT,
                  seed: int = 0, confidence: float = 0.95) -> HumanCeiling:
    """The ceiling of ``quality`` over ``examples`` at turn (item) or system level; at turn level
    with the context-bootstrap CI of its coefficients (``n_boot=0``: none)."""
    examples = list(examples)
    matrix = annotator_matrix(examples, quality)
    reasons: list[str] = []
    categorical = matrix.scale is not None and not matrix.scale.is_numeric
    if matrix.n_items == 0:
        reasons.append(f"no example has ratings of {quality!r}")
    if categorical:
        reasons.append("categorical scale: annotators are compared by kappa and alpha, not correlation")
        per_annotator: list[AnnotatorAgreement] = []
    elif level == SYSTEM:
        systems = [ex.system for ex in examples if quality in ex.ratings]
        per_annotator = _leave_one_out(matrix, systems, reasons)
    else:
        per_annotator = _leave_one_out(matrix, None, reasons)
    means = {m: _mean_defined(getattr(a, m) for a in per_annotator) for m in METHODS}
    result: dict[str, Any] = dict(
        quality=quality, level=level, n_items=matrix.n_items, n_annotators=len(matrix.annotators),
        n_per_item=max((len(ex.ratings[quality].scores) for ex in examples if quality in ex.ratings), default=0),
        per_annotator=tuple(per_annotator), annotators_by_name=matrix.by_name, **means,
    )
    if level != SYSTEM and matrix.n_items:
        give_way()
        result.update(_reliability(matrix, reasons))
        give_way()
        if per_annotator:
            result["interval"] = _interval(examples, matrix, per_annotator, means, n_boot, seed, confidence)
    return HumanCeiling(**result, reasons=tuple(reasons))


def _interval(examples: list[Example], matrix: AnnotatorMatrix, per_annotator: list[AnnotatorAgreement],
              point: dict[str, float], n_boot: int, seed: int, confidence: float) -> CeilingInterval:
    group_of = {ex.id: ex.group_id for ex in examples}
    groups = [group_of[i] for i in matrix.example_ids]
    defined = [a for a, agreement in enumerate(per_annotator) if not math.isnan(agreement.pearson)]
    return ceiling_interval(matrix.numeric(), groups, defined, point, n_boot=n_boot, seed=seed,
                            confidence=confidence)


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
            give_way()  # each quality's ceiling is seconds at 100,000 items (core.foreground)
            if quality in scales:
                rows.append(CeilingRow(quality, level, scale_text(scales[quality]),
                                       human_ceiling(members, quality, n_boot=n_boot)))
    return rows


def scale_text(scale: Scale) -> str:
    if scale.labels:
        return f"{scale.kind.value}: {', '.join(scale.labels)}"
    return f"{scale.kind.value} {scale.min:g}-{scale.max:g}"


def _leave_one_out(matrix: AnnotatorMatrix, systems: list[str | None] | None,
                   reasons: list[str]) -> list[AnnotatorAgreement]:
    values = matrix.numeric()
    out = []
    for a, name in enumerate(matrix.annotators):
        give_way()
        others = np.delete(values, a, axis=0)
        covered = np.isfinite(others).any(axis=0) & np.isfinite(values[a])
        if not others.shape[0]:
            # A single annotator has nobody to be compared with: no ceiling, and no empty-mean warning.
            reasons.append("only one annotator: no leave-one-out agreement")
            break
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
            out.append(AnnotatorAgreement(name, int(x.size), NAN, NAN, NAN))
            continue
        points = point_estimates(x, y)
        out.append(AnnotatorAgreement(name, int(x.size), *(points[m][0] for m in METHODS)))
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


def _reliability(matrix: AnnotatorMatrix, reasons: list[str]) -> dict[str, Any]:
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
        kappas, agreements = [], []
        for first, second in combinations(matrix.values, 2):
            agreement = percent_agreement(first, second)
            if math.isnan(agreement):
                continue  # this pair never rated the same item
            agreements.append(agreement)
            kappas.append(cohen_kappa(first, second))
        out.update(kappa=_mean_defined(kappas), percent_agreement=_mean_defined(agreements),
                   n_pairs=len(agreements))
    return out


def _mean_defined(values: Iterable[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return math.fsum(defined) / len(defined) if defined else NAN
