"""Did B agree better with the humans than A? A paired comparison of two evaluators.

Both evaluators are correlated with the same human labels on the same items,
so their correlations are dependent: comparing two separate confidence
intervals wastes that pairing and says nothing about the difference. Here:

* Δr, Δρ, Δτ (B minus A).
* The verdict and its p-value come from a randomization test over contexts
  (:mod:`.randomization`): A and B swapped within each context, all 2^k
  assignments enumerated for up to 12 contexts, random ones beyond (Deutsch,
  Dror & Roth, TACL 2021). It is exact at any number of contexts; a bootstrap
  p-value is not (with 3 contexts there are only 10 distinct resamples, and it
  claimed p < 0.001 on pure noise).
* A paired bootstrap CI for the size of Δ: each resample draws whole contexts
  with replacement and computes *both* evaluators' coefficients on that same
  resample, so the noise they share cancels in Δ; the interval is the expanded
  percentile one (:mod:`.small_samples`).
* Below ``MIN_CONTEXTS`` contexts there is no CI and no verdict: "too few
  contexts to decide"; below ``MIN_ITEMS_RANK_DELTA_CI`` items no CI of Δρ or Δτ
  (the verdict stays). The floors and the coverage of the CIs come from the
  simulation in ``bench/calibration.py`` (docs/calibration.md).
* For Pearson also Williams's t-test for two dependent correlations that share
  one variable (Williams 1959, as given by Steiger 1980, eq. 7; the WMT metrics
  task uses it to compare metrics). It assumes independent items: with several
  candidates per context it was too liberal in simulation, so it is given only
  when every context has one item.

Items scored by only one of the two (or with no human label) are excluded and
counted, so both sides are compared on exactly the same items.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import bootstrap as bs
from .correlation import METHODS, as_floats, degenerate_reason, point_estimates
from .randomization import DEFAULT_DRAWS, RandomizationTest, randomization_test
from .small_samples import too_few_contexts, too_few_items_for_rank_delta_ci

NAN = float("nan")
SYMBOLS = {"pearson": "r", "spearman": "ρ", "kendall": "τ"}


@dataclass(frozen=True)
class WilliamsTest:
    """Williams's t for r(A, human) vs r(B, human), sharing the human variable."""

    t: float
    df: int
    p_value: float
    #: Pearson r between the two evaluators themselves (r12 in the formula).
    r_between: float


@dataclass(frozen=True)
class DeltaEstimate:
    """B's coefficient minus A's, with the paired bootstrap CI and the randomization test's p-value."""

    method: str
    a: float
    b: float
    ci_low: float = NAN
    ci_high: float = NAN
    #: The randomization test's two-sided p-value (NaN without a test).
    p_value: float = NAN
    #: Resamples in which both coefficients were defined.
    n_resamples: int = 0
    test: RandomizationTest | None = None
    #: Why no CI is shown though the bootstrap ran (too few items for a rank coefficient's Δ).
    ci_reason: str | None = None

    @property
    def delta(self) -> float:
        return self.b - self.a

    @property
    def excludes_zero(self) -> bool:
        return (not math.isnan(self.ci_low)) and (self.ci_low > 0 or self.ci_high < 0)

    @property
    def ci_width(self) -> float:
        return self.ci_high - self.ci_low


@dataclass(frozen=True)
class PairedComparison:
    """Two evaluators against the humans on the same items."""

    name_a: str
    name_b: str
    quality: str
    deltas: Mapping[str, DeltaEstimate]
    williams: WilliamsTest | None
    #: Items scored by both and labelled by the humans.
    n_items: int
    n_groups: int
    #: Candidate items (those with a human label entry) left out: scored by only A, only B, by
    #: neither (not counted as excluded: neither side judged them), or scored but without a label.
    only_a: int = 0
    only_b: int = 0
    neither: int = 0
    no_human_label: int = 0
    n_boot: int = 0
    confidence: float = 0.95
    seed: int = 0
    reason: str | None = None
    #: The subset of the dataset compared ("all", "open", "closed", ...).
    subset: str = "all"

    @property
    def defined(self) -> bool:
        return self.reason is None

    @property
    def too_few_contexts(self) -> str | None:
        """Why no CI and no verdict are shown (too few contexts), or None."""
        return too_few_contexts(self.n_groups)

    def decided(self, method: str = "spearman") -> bool:
        """The verdict claims a difference: enough contexts and the randomization test's p below 1 - confidence."""
        if not self.defined or self.too_few_contexts or method not in self.deltas:
            return False
        p = self.deltas[method].p_value
        return math.isfinite(p) and p < 1.0 - self.confidence

    @property
    def n_excluded(self) -> int:
        """Items that one side scored but that could not be compared."""
        return self.only_a + self.only_b + self.no_human_label

    def delta(self, method: str) -> DeltaEstimate:
        if method not in METHODS:
            raise ValueError(f"unknown correlation {method!r}: use one of {', '.join(METHODS)}")
        return self.deltas[method]

    def verdict(self, method: str = "spearman") -> str:
        return verdict_line(self, method)

    def to_records(self) -> list[dict[str, Any]]:
        out = []
        for method in METHODS:
            d = self.deltas.get(method)
            record: dict[str, Any] = {
                "a": self.name_a, "b": self.name_b, "quality": self.quality, "coefficient": method,
                "value_a": _clean(d.a) if d else None, "value_b": _clean(d.b) if d else None,
                "delta": _clean(d.delta) if d else None, "delta_lo": _clean(d.ci_low) if d else None,
                "delta_hi": _clean(d.ci_high) if d else None, "p": _clean(d.p_value) if d else None,
                "n_items": self.n_items, "n_contexts": self.n_groups, "only_a": self.only_a,
                "only_b": self.only_b, "neither": self.neither, "no_human_label": self.no_human_label,
                "williams_t": None, "williams_p": None,
                "reason": self.reason or self.too_few_contexts or (d.ci_reason if d else None),
                "p_method": d.test.description if d and d.test else None,
            }
            if method == "pearson" and self.williams is not None:
                record.update(williams_t=_clean(self.williams.t), williams_p=_clean(self.williams.p_value))
            out.append(record)
        return out


def williams_test(r13: float, r23: float, r12: float, n: int) -> WilliamsTest:
    """Williams's test of H0: rho13 == rho23, where 3 is the shared variable (the humans),
    1 and 2 the two evaluators and r12 their correlation with each other.

    t = (r13 - r23) * sqrt((n - 1)(1 + r12)) /
        sqrt(2 K (n - 1)/(n - 3) + ((r13 + r23)/2)^2 (1 - r12)^3),
    K = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23, with n - 3 degrees of freedom.
    The sign of t is positive when evaluator 1 correlates more strongly than 2.
    """
    from scipy.stats import t as student_t

    if n <= 3:
        return WilliamsTest(NAN, max(n - 3, 0), NAN, r12)
    k = 1.0 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2.0 * r12 * r13 * r23
    denominator = 2.0 * k * (n - 1) / (n - 3) + ((r13 + r23) / 2.0) ** 2 * (1.0 - r12) ** 3
    if not denominator > 0:
        return WilliamsTest(NAN, n - 3, NAN, r12)
    t = (r13 - r23) * math.sqrt((n - 1) * (1.0 + r12)) / math.sqrt(denominator)
    p = 2.0 * float(student_t.sf(abs(t), n - 3))
    return WilliamsTest(t, n - 3, p, r12)


def bootstrap_p_value(deltas: np.ndarray) -> float:
    """Two-sided bootstrap p-value of H0: Δ = 0 from the resampled differences."""
    finite = deltas[np.isfinite(deltas)]
    if finite.size == 0:
        return NAN
    below = int((finite <= 0).sum())
    above = int((finite >= 0).sum())
    return min(1.0, 2.0 * (min(below, above) + 1) / (finite.size + 1))


def paired_comparison(
    scores_a: Mapping[str, float | None],
    scores_b: Mapping[str, float | None],
    human: Mapping[str, float | None],
    groups: Mapping[str, Hashable],
    *,
    name_a: str = "A",
    name_b: str = "B",
    quality: str = "",
    methods: Sequence[str] = METHODS,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    n_draws: int = DEFAULT_DRAWS,
) -> PairedComparison:
    """Compare A and B on the items of ``human`` (item id -> pooled label) that both scored.

    ``groups`` maps each item id to its context; resamples draw whole contexts, the
    randomization test swaps A and B within contexts (``n_draws`` random swaps beyond 12
    contexts; 0 turns the test off).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    only_a = only_b = neither = no_label = 0
    kept: list[str] = []
    for item in human:  # the human side names the candidates (the subset's rated items)
        has_a, has_b = _usable(scores_a.get(item)), _usable(scores_b.get(item))
        if not _usable(human[item]):
            no_label += 1 if has_a or has_b else 0
        elif has_a and has_b:
            kept.append(item)
        elif has_a:
            only_a += 1
        elif has_b:
            only_b += 1
        else:
            neither += 1
    x_a = as_floats([scores_a[i] for i in kept], "scores of A")
    x_b = as_floats([scores_b[i] for i in kept], "scores of B")
    y = as_floats([human[i] for i in kept], "human labels")
    item_groups = [groups.get(i, i) for i in kept]
    n_groups = len(set(item_groups))

    def result(deltas: Mapping[str, DeltaEstimate], williams: WilliamsTest | None,
               reason: str | None) -> PairedComparison:
        return PairedComparison(name_a, name_b, quality, deltas, williams, len(kept), n_groups, only_a, only_b,
                                neither, no_label, n_boot, confidence, seed, reason)

    reason_a, reason_b = degenerate_reason(x_a, y, "items"), degenerate_reason(x_b, y, "items")
    if reason_a or reason_b:
        return result({}, None, f"{name_a}: {reason_a}" if reason_a else f"{name_b}: {reason_b}")
    estimates_a, estimates_b = point_estimates(x_a, y), point_estimates(x_b, y)
    boot_delta: dict[str, np.ndarray] = {}
    if n_boot:
        rs = bs.resample(len(kept), item_groups, n_boot=n_boot, seed=seed)
        boot_delta = {m: _boot(m, x_b, y, rs) - _boot(m, x_a, y, rs) for m in methods}
    units, _ = bs.unit_index(item_groups, len(kept))
    deltas = {}
    for method in methods:
        a, b = estimates_a[method][0], estimates_b[method][0]
        test = randomization_test(method, x_a, x_b, y, units, n_draws=n_draws, seed=seed) if n_draws else None
        p_value = test.p_value if test is not None else NAN
        if method in boot_delta:
            low, high, n_ok = bs.small_sample_interval(boot_delta[method], confidence, n_groups)
            few_items = too_few_items_for_rank_delta_ci(len(kept)) \
                if method != "pearson" and not too_few_contexts(n_groups) else None
            if few_items:
                low = high = NAN
            deltas[method] = DeltaEstimate(method, a, b, low, high, p_value, n_ok, test, few_items)
        else:
            deltas[method] = DeltaEstimate(method, a, b, p_value=p_value, test=test)
    williams = None
    # Williams's test assumes independent items: in simulation it claimed a difference between equally
    # good judges in 6.4-8.1% of datasets with 4 candidates per context (bench/calibration.py), so it is
    # given only with one item per context, and not on too few contexts.
    if "pearson" in methods and n_groups == len(kept) and not too_few_contexts(n_groups):
        # Evaluator 1 is B so that a positive t means B agrees better, like a positive Δ.
        r12 = float(np.corrcoef(x_a, x_b)[0, 1])
        williams = williams_test(estimates_b["pearson"][0], estimates_a["pearson"][0], r12, len(kept))
    return result(deltas, williams, None)


def _boot(method: str, x: np.ndarray, y: np.ndarray, rs: bs.Resampling) -> np.ndarray:
    if method == "pearson":
        return bs.weighted_pearson(x, y, rs.item_weights)
    if method == "spearman":
        return bs.weighted_spearman(x, y, rs.item_weights, rs.memo)
    if method == "kendall":
        values = bs.bootstrap_kendall(x, y, rs, rs.memo)
        if values.shape[0] < rs.n_boot:  # the slow path computed fewer resamples
            values = np.concatenate([values, np.full(rs.n_boot - values.shape[0], NAN)])
        return values
    raise ValueError(f"unknown correlation {method!r}: use one of {', '.join(METHODS)}")


def verdict_line(comparison: PairedComparison, method: str = "spearman") -> str:
    """One sentence a person can read, naming the method behind every number, e.g. "B agrees better
    with humans on overall: Δρ +0.08, p = 0.01 (exact randomization test over 10 contexts, ...); 95% CI
    [+0.02, +0.14] (bootstrap over contexts); n = 300 items in 60 contexts". The CLI and the app both
    print exactly this line."""
    quality = comparison.quality.lower() or "this quality"
    if comparison.subset != "all":
        quality += f" (subset {comparison.subset})"
    size = f"n = {comparison.n_items} items in {comparison.n_groups} contexts"
    if comparison.n_excluded:
        size += f" ({comparison.n_excluded} scored by one side only or unlabelled, left out)"
    pair = f"{comparison.name_a} vs {comparison.name_b} on {quality}"
    if not comparison.defined:
        return f"{pair}: no comparison ({comparison.reason}); {size}"
    d = comparison.delta(method)
    symbol = SYMBOLS[method]
    few = comparison.too_few_contexts
    if few:
        test = ""
        if d.test is not None and math.isfinite(d.p_value):
            test = (f", p = {_p(d.p_value)} ({d.test.description}; it cannot go below "
                    f"{_p(d.test.smallest_possible_p)})")
        return f"{pair}: {few}; Δ{symbol} {d.delta:+.2f}, no CI{test}; {size}"
    level = f"{comparison.confidence:.0%}".replace(".0%", "%")
    if math.isnan(d.ci_low):
        interval = "no CI (bootstrap off)" if not comparison.n_boot else \
            f"no CI ({d.ci_reason})" if d.ci_reason else "no CI (too few defined resamples)"
    else:
        interval = f"{level} CI [{d.ci_low:+.2f}, {d.ci_high:+.2f}] (bootstrap over contexts)"
    if d.test is None or math.isnan(d.p_value):
        test = "no test (randomization off)" if d.test is None else f"no p ({d.test.description}: undefined)"
        return f"{pair}: Δ{symbol} {d.delta:+.2f}, {test}; {interval}; {size}"
    numbers = f"Δ{symbol} {d.delta:+.2f}, p = {_p(d.p_value)} ({d.test.description}); {interval}; {size}"
    if comparison.decided(method):
        better = comparison.name_b if d.delta > 0 else comparison.name_a
        head = f"{better} agrees better with humans on {quality}"
    else:
        head = f"no clear difference between {comparison.name_a} and {comparison.name_b} on {quality} " \
               f"(p ≥ {1.0 - comparison.confidence:.2g})"
    return f"{head}: {numbers}"


def interval_text(d: DeltaEstimate) -> str:
    """"[-0.12, +0.30]"-style CI cell text for tables, "–" where no CI is shown."""
    if math.isnan(d.ci_low) or math.isnan(d.ci_high):
        return "–"
    return f"{d.ci_low:+.3f} … {d.ci_high:+.3f}"


def _p(p: float) -> str:
    if math.isnan(p):
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}" if p < 0.01 else f"{p:.2f}"


def _usable(value: Any) -> bool:
    if value is None:
        return False
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _clean(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)
