"""Correlation of an evaluator's scores with human labels, at turn and system level.

Pairs where either side is missing (None or NaN) are excluded and counted.
Point estimates and p-values come from scipy.stats; confidence intervals from a
seeded bootstrap (see :mod:`.bootstrap`) over items, or over groups (contexts)
when group ids are given, so that candidates answering the same context are
resampled together. The interval is the expanded percentile one, and none is
given on fewer than ``MIN_CONTEXTS`` units (see :mod:`.small_samples`, and
docs/calibration.md for the coverage measured by simulation). Degenerate inputs give NaN coefficients and a
``reason``, never an exception.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Hashable, Sequence

import numpy as np

from . import bootstrap as bs
from .bootstrap_large import item_coefficients
from .small_samples import too_few_contexts

TURN = "turn"
SYSTEM = "system"
METHODS = ("pearson", "spearman", "kendall")
MIN_POINTS = 3

NAN = float("nan")


@dataclass(frozen=True)
class Coefficient:
    """One correlation coefficient with its p-value and bootstrap CI (NaN when undefined)."""

    value: float
    p_value: float = NAN
    ci_low: float = NAN
    ci_high: float = NAN
    #: Resamples in which the coefficient was defined (the CI is their percentiles).
    n_resamples: int = 0

    @property
    def defined(self) -> bool:
        return not math.isnan(self.value)


UNDEFINED = Coefficient(NAN)


@dataclass(frozen=True)
class CorrelationResult:
    """Pearson, Spearman and Kendall tau-b of one evaluator against humans.

    ``n`` is the number of points correlated: paired items at turn level,
    systems at system level. ``n_items`` is the number of paired items behind
    them and ``n_excluded`` the number of input items left out (a missing score
    or label, or no system at system level).
    """

    pearson: Coefficient
    spearman: Coefficient
    kendall: Coefficient
    n: int
    n_excluded: int
    n_items: int
    level: str = TURN
    #: Groups resampled by the bootstrap; None when items were resampled.
    n_groups: int | None = None
    n_boot: int = 0
    confidence: float = 0.95
    seed: int = 0
    #: Why the coefficients are NaN (None when they are defined).
    reason: str | None = None
    #: Why the CIs are not given although a bootstrap was asked for (too few contexts).
    ci_reason: str | None = None

    @property
    def defined(self) -> bool:
        return self.reason is None

    def coefficient(self, method: str) -> Coefficient:
        if method not in METHODS:
            raise ValueError(f"unknown correlation {method!r}: use one of {', '.join(METHODS)}")
        return getattr(self, method)

    def to_dict(self) -> dict[str, Any]:
        """Flat values; NaN becomes None so the dict can be written as JSON."""
        out: dict[str, Any] = {"level": self.level}
        for method in METHODS:
            c = self.coefficient(method)
            out[method] = _none_if_nan(c.value)
            out[f"{method}_p"] = _none_if_nan(c.p_value)
            out[f"{method}_lo"] = _none_if_nan(c.ci_low)
            out[f"{method}_hi"] = _none_if_nan(c.ci_high)
        out.update(n=self.n, excluded=self.n_excluded, n_items=self.n_items, reason=self.reason)
        return out


def correlate(
    scores: Sequence[float | None],
    human: Sequence[float | None],
    groups: Sequence[Hashable] | None = None,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> CorrelationResult:
    """Turn-level (per item) correlation of ``scores`` with ``human``.

    ``groups`` gives each item's group id (its context); when given, the
    bootstrap draws whole groups with replacement. ``n_boot=0`` skips the CIs.
    """
    x_all, y_all, keep = paired(scores, human)
    return item_correlation(
        x_all[keep], y_all[keep], _select(groups, keep),
        n_excluded=int((~keep).sum()), n_boot=n_boot, seed=seed, confidence=confidence,
    )


def system_level(
    scores: Sequence[float | None],
    human: Sequence[float | None],
    systems: Sequence[str | None],
    groups: Sequence[Hashable] | None = None,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> CorrelationResult:
    """Correlation of per-system mean scores with per-system mean human labels.

    Only paired items enter the means; items without a system are excluded.
    The bootstrap resamples items (or whole groups) and recomputes the system
    means, so the CI shows how much the comparison of systems depends on which
    items were rated.
    """
    if len(systems) != len(scores):
        raise ValueError(f"{len(systems)} system names for {len(scores)} items")
    x_all, y_all, keep = paired(scores, human)
    keep &= np.fromiter((bool(s) for s in systems), dtype=bool, count=len(systems))
    kept_systems = [s for s, k in zip(systems, keep) if k and s]
    return system_correlation(
        x_all[keep], y_all[keep], kept_systems, _select(groups, keep),
        n_excluded=int((~keep).sum()), n_boot=n_boot, seed=seed, confidence=confidence,
    )


# -- building blocks shared with the agreement table and the running statistics ------


def paired(scores: Sequence[Any], human: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Both sides as float arrays (NaN where missing) and the mask of usable pairs."""
    if len(scores) != len(human):
        raise ValueError(f"{len(scores)} scores but {len(human)} human labels")
    x = as_floats(scores, "scores")
    y = as_floats(human, "human labels")
    return x, y, np.isfinite(x) & np.isfinite(y)


def as_floats(values: Sequence[Any], what: str) -> np.ndarray:
    out = np.empty(len(values), dtype=np.float64)
    for i, v in enumerate(values):
        if v is None:
            out[i] = np.nan
            continue
        try:
            out[i] = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"{what}[{i}] is {v!r}, not a number") from None
    return out


def item_correlation(
    x: np.ndarray,
    y: np.ndarray,
    groups: Sequence[Hashable] | None,
    *,
    n_excluded: int,
    n_boot: int,
    seed: int,
    confidence: float,
    resampling: bs.Resampling | None = None,
) -> CorrelationResult:
    """Correlation of already paired items; ``resampling`` may be a cached draw
    for exactly these items (it must match ``n_boot``, ``seed`` and ``groups``)."""
    _check_parameters(n_boot, confidence)
    n_groups = len(set(groups)) if groups is not None else None
    base: dict[str, Any] = dict(n=len(x), n_excluded=n_excluded, n_items=len(x), level=TURN, n_groups=n_groups,
                n_boot=n_boot, confidence=confidence, seed=seed)
    reason = degenerate_reason(x, y, "items")
    if reason:
        return CorrelationResult(UNDEFINED, UNDEFINED, UNDEFINED, reason=reason, **base)
    boot: dict[str, np.ndarray] = {}
    if n_boot:
        rs = resampling if resampling is not None else bs.resample(len(x), groups, n_boot=n_boot, seed=seed)
        boot = item_bootstrap(x, y, rs)
    n_units = n_groups if n_groups is not None else len(x)
    return CorrelationResult(**_coefficients(x, y, boot, confidence, n_units), **base,
                             ci_reason=too_few_contexts(n_units, "for a CI") if n_boot else None)


def item_bootstrap(x: np.ndarray, y: np.ndarray, rs: bs.Resampling) -> dict[str, np.ndarray]:
    """Pearson, Spearman and Kendall of every resample. Where Kendall's pair matrices would be too big
    (many items), the same values computed without them (:mod:`.bootstrap_large`), Kendall's on the
    first ``KENDALL_LOOP_MAX_RESAMPLES`` resamples as before."""
    if rs.n_units > bs.KENDALL_MATRIX_MAX_UNITS or rs.n_items > bs.KENDALL_MATRIX_MAX_ITEMS:
        return item_coefficients(x, y, rs, kendall_resamples=bs.KENDALL_LOOP_MAX_RESAMPLES)
    return {**bs.blockwise_item_coefficients(x, y, rs), "kendall": bs.bootstrap_kendall(x, y, rs, rs.memo)}


def system_correlation(
    x: np.ndarray,
    y: np.ndarray,
    systems: Sequence[str],
    groups: Sequence[Hashable] | None,
    *,
    n_excluded: int,
    n_boot: int,
    seed: int,
    confidence: float,
    resampling: bs.Resampling | None = None,
) -> CorrelationResult:
    """System-level correlation of already paired items with known systems."""
    _check_parameters(n_boot, confidence)
    system_of_item, _ = bs.unit_index(list(systems), len(x))
    n_systems = int(system_of_item.max()) + 1 if len(x) else 0
    counts = np.bincount(system_of_item, minlength=n_systems)
    mean_x = np.bincount(system_of_item, weights=x, minlength=n_systems) / np.maximum(counts, 1)
    mean_y = np.bincount(system_of_item, weights=y, minlength=n_systems) / np.maximum(counts, 1)
    n_groups = len(set(groups)) if groups is not None else None
    base: dict[str, Any] = dict(n=n_systems, n_excluded=n_excluded, n_items=len(x), level=SYSTEM, n_groups=n_groups,
                n_boot=n_boot, confidence=confidence, seed=seed)
    reason = degenerate_reason(mean_x, mean_y, "systems")
    if reason:
        return CorrelationResult(UNDEFINED, UNDEFINED, UNDEFINED, reason=reason, **base)
    boot: dict[str, np.ndarray] = {}
    if n_boot:
        rs = resampling if resampling is not None else bs.resample(len(x), groups, n_boot=n_boot, seed=seed)
        drawn = bs.unit_sums(rs, np.ones(len(x)), system_of_item, n_systems)
        with np.errstate(invalid="ignore", divide="ignore"):
            # A system none of whose items was drawn has no mean: that resample is undefined.
            boot_x = np.where(drawn > 0, bs.unit_sums(rs, x, system_of_item, n_systems) / drawn, np.nan)
            boot_y = np.where(drawn > 0, bs.unit_sums(rs, y, system_of_item, n_systems) / drawn, np.nan)
        boot = {
            "pearson": bs.rowwise_pearson(boot_x, boot_y),
            "spearman": bs.rowwise_spearman(boot_x, boot_y),
            "kendall": bs.rowwise_kendall(boot_x, boot_y),
        }
    n_units = n_groups if n_groups is not None else len(x)
    return CorrelationResult(**_coefficients(mean_x, mean_y, boot, confidence, n_units), **base,
                             ci_reason=too_few_contexts(n_units, "for a CI") if n_boot else None)


def degenerate_reason(x: np.ndarray, y: np.ndarray, what: str) -> str | None:
    """Why no correlation can be computed, or None when it can."""
    if len(x) < MIN_POINTS:
        return f"only {len(x)} paired {what}; at least {MIN_POINTS} are needed"
    if np.ptp(x) == 0:
        return f"the scores are constant over the {len(x)} paired {what}"
    if np.ptp(y) == 0:
        return f"the human labels are constant over the {len(y)} paired {what}"
    return None


def point_estimates(x: np.ndarray, y: np.ndarray) -> dict[str, tuple[float, float]]:
    """(coefficient, p-value) of each method, straight from scipy.stats."""
    from scipy import stats

    pearson = stats.pearsonr(x, y)
    spearman = stats.spearmanr(x, y)
    kendall = stats.kendalltau(x, y)  # tau-b
    return {
        "pearson": (float(pearson.statistic), float(pearson.pvalue)),
        "spearman": (float(spearman.statistic), float(spearman.pvalue)),
        "kendall": (float(kendall.statistic), float(kendall.pvalue)),
    }


def _coefficients(x: np.ndarray, y: np.ndarray, boot: dict[str, np.ndarray],
                  confidence: float, n_units: int) -> dict[str, Any]:
    """Pearson, Spearman and Kendall as :class:`CorrelationResult` keyword arguments; ``n_units`` is
    the number of resampled units (contexts, or items), which sets the interval (see :mod:`.small_samples`)."""
    out: dict[str, Any] = {}
    for method, (value, p_value) in point_estimates(x, y).items():
        if method in boot:
            low, high, n_resamples = bs.small_sample_interval(boot[method], confidence, n_units)
            out[method] = Coefficient(value, p_value, low, high, n_resamples)
        else:
            out[method] = Coefficient(value, p_value)
    return out


def _check_parameters(n_boot: int, confidence: float) -> None:
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, not {n_boot}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")


def _select(groups: Sequence[Hashable] | None, keep: np.ndarray) -> list[Hashable] | None:
    if groups is None:
        return None
    if len(groups) != len(keep):
        raise ValueError(f"{len(groups)} group ids for {len(keep)} items")
    return [g for g, k in zip(groups, keep) if k]


def _none_if_nan(value: float) -> float | None:
    return None if math.isnan(value) else value
