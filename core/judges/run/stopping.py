"""Stop a run once it has enough evidence, and the seeded order that makes partial runs honest.

Contexts are judged in a seeded random order (all candidates of one context
together, so a local backend still reuses its KV cache). Because the order does
not follow the file, the items judged so far are a random sample of contexts,
and the running correlation with its CI is an estimate of the full run's at
every point, not of the first contexts of the file. The order is a function of
the seed and the context ids only, so a resumed or extended run continues it,
and two runs with the same seed (two templates, say) visit the same contexts
first, which lets a partial run be compared with a baseline on shared items.

A :class:`StopRule` watches the judgments as they are stored and, every
``check_every`` completed contexts (a "look"), decides:

* without a baseline: stop when the CI of ρ with the humans is narrower than
  ``ci_width``;
* with a baseline run's scores: stop when the CI of Δρ (this run minus the
  baseline, paired on the items both scored) excludes 0, or, when
  ``ci_width`` is also given, is narrower than it.

Optional stopping: looking at a test again and again and stopping the first
time it is significant inflates the false-positive rate. The rule therefore
(1) looks only every ``check_every`` contexts and not before ``min_contexts``,
and (2) decides "better" with the paired comparison's randomization test over
contexts (as every verdict does) at a Bonferroni-over-looks level: with L planned
looks, each look tests at (1 - confidence) / L (and its CI has confidence
1 - (1 - confidence) / L), so the chance of a false "B is better" over the whole
run stays at most 1 - confidence (checked by simulation: bench/calibration.py).
The width rule stops on precision, not on the estimate's value; it keeps the
nominal confidence (its coverage is close to nominal because the width hardly
depends on where the estimate lies).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field

from ...model import Example
from ...stats.correlation import correlate
from ...stats.paired import paired_comparison

#: The default seed of the context order (same for every run, so runs can be paired part-way).
DEFAULT_ORDER_SEED = 0


def seeded_context_order(items: Iterable[Example], seed: int | None = DEFAULT_ORDER_SEED) -> list[Example]:
    """All candidates of one context consecutively (original order within the context), the
    contexts in a random order fixed by ``seed`` and the context ids (file order when seed is None)."""
    groups: dict[str, list[Example]] = {}
    for ex in items:
        groups.setdefault(ex.group_id, []).append(ex)
    keys = list(groups)
    if seed is not None:
        keys.sort(key=lambda g: hashlib.sha256(f"{seed}:{g}".encode()).hexdigest())
    return [ex for key in keys for ex in groups[key]]


@dataclass(frozen=True)
class StopState:
    """What the rule concluded at one look."""

    decided: bool
    #: A line for people: "enough evidence: this run better than run 3", "not yet decided: ...".
    message: str
    n_items: int
    n_contexts: int
    look: int
    planned_looks: int
    #: The quantity watched (ρ, or Δρ against the baseline) with the CI used at this look.
    estimate: float
    ci_low: float
    ci_high: float
    confidence: float

    @property
    def ci_width(self) -> float:
        return self.ci_high - self.ci_low


@dataclass
class StopRule:
    """Decides, from the judgments stored so far, whether a run may stop.

    ``human`` maps item ids to pooled human labels; ``groups`` item ids to
    contexts; ``baseline`` (optional) item ids to a baseline run's scores.
    ``judge`` picks the judge label watched (default: the first one seen).
    """

    human: Mapping[str, float | None]
    groups: Mapping[str, Hashable]
    ci_width: float | None = None
    baseline: Mapping[str, float | None] | None = None
    baseline_name: str = "the baseline"
    judge: str | None = None
    check_every: int = 5
    min_contexts: int = 10
    confidence: float = 0.95
    n_boot: int = 1000
    seed: int = 0
    _scores: dict[str, float | None] = field(default_factory=dict, init=False, repr=False)
    _seen_per_group: dict[Hashable, int] = field(default_factory=dict, init=False, repr=False)
    _complete: int = field(default=0, init=False, repr=False)
    _looks: int = field(default=0, init=False, repr=False)
    last: StopState | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.ci_width is None and self.baseline is None:
            raise ValueError("a stop rule needs a CI width, a baseline run, or both")
        if self.ci_width is not None and not self.ci_width > 0:
            raise ValueError(f"the CI width must be positive, not {self.ci_width}")
        if self.check_every < 1:
            raise ValueError(f"check_every must be at least 1, not {self.check_every}")
        self._group_size: dict[Hashable, int] = {}
        for item in self.human:
            group = self.groups.get(item, item)
            self._group_size[group] = self._group_size.get(group, 0) + 1

    @property
    def planned_looks(self) -> int:
        usable = max(len(self._group_size) - self.min_contexts, 0)
        return 1 + usable // self.check_every

    @property
    def look_confidence(self) -> float:
        """The confidence of each look's CI for the "excludes 0" decision (Bonferroni over looks)."""
        return 1.0 - (1.0 - self.confidence) / self.planned_looks

    def preload(self, scores: Mapping[str, float | None]) -> None:
        """Judgments already stored (a resumed run), without looking."""
        for item, value in scores.items():
            self._add(item, value)

    def observe(self, judge: str, item_id: str, score: float | None) -> StopState | None:
        """Record one judgment; returns the new state when this completed a look."""
        if self.judge is None:
            self.judge = judge
        if judge != self.judge or item_id in self._scores:
            return None
        if not self._add(item_id, score):
            return None
        if self._complete < self.min_contexts or (self._complete - self.min_contexts) % self.check_every:
            return None
        return self.check()

    def _add(self, item_id: str, score: float | None) -> bool:
        """True when the item completed its context."""
        if item_id in self._scores or item_id not in self.human:
            return False
        self._scores[item_id] = score
        group = self.groups.get(item_id, item_id)
        self._seen_per_group[group] = self._seen_per_group.get(group, 0) + 1
        if self._seen_per_group[group] == self._group_size.get(group, 1):
            self._complete += 1
            return True
        return False

    def check(self) -> StopState:
        """Look now (counts as a look)."""
        self._looks += 1
        self.last = self._baseline_state() if self.baseline is not None else self._width_state()
        return self.last

    def _width_state(self) -> StopState:

        items = list(self._scores)
        result = correlate([self._scores[i] for i in items], [self.human[i] for i in items],
                           [self.groups.get(i, i) for i in items], n_boot=self.n_boot, seed=self.seed,
                           confidence=self.confidence)
        rho = result.spearman
        width = rho.ci_high - rho.ci_low
        assert self.ci_width is not None
        decided = bool(math.isfinite(width) and width < self.ci_width)
        ci = f"ρ {rho.value:+.3f} [{rho.ci_low:+.3f}, {rho.ci_high:+.3f}] (width {width:.3f})"
        message = (f"enough evidence: CI of ρ narrower than {self.ci_width:g}: {ci}" if decided
                   else f"not yet decided: {ci}, want width < {self.ci_width:g}")
        return StopState(decided, message, result.n, result.n_groups or 0, self._looks, self.planned_looks,
                         rho.value, rho.ci_low, rho.ci_high, self.confidence)

    def _baseline_state(self) -> StopState:

        assert self.baseline is not None
        confidence = self.look_confidence
        comparison = paired_comparison(self.baseline, self._scores, {i: self.human[i] for i in self._scores},
                                       self.groups, methods=("spearman",), n_boot=self.n_boot, seed=self.seed,
                                       confidence=confidence)
        if not comparison.defined:
            return StopState(False, f"not yet decided: {comparison.reason}", comparison.n_items,
                             comparison.n_groups, self._looks, self.planned_looks, math.nan, math.nan, math.nan,
                             confidence)
        d = comparison.delta("spearman")
        test = f", p = {d.p_value:.4f} ({d.test.description})" if d.test is not None else ""
        ci = (f"Δρ {d.delta:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}] at {confidence:.2%}{test} "
              f"(look {self._looks} of up to {self.planned_looks})")
        # The decision is the randomization test's at the look's Bonferroni level, as a verdict's is.
        if comparison.decided("spearman") and d.delta > 0:
            decided, message = True, f"enough evidence: this run better than {self.baseline_name}: {ci}"
        elif comparison.decided("spearman") and d.delta < 0:
            decided, message = True, f"enough evidence: {self.baseline_name} better than this run: {ci}"
        elif self.ci_width is not None and d.ci_width < self.ci_width:
            decided, message = True, (f"enough evidence: no difference larger than the CI width "
                                      f"{self.ci_width:g} against {self.baseline_name}: {ci}")
        else:
            decided, message = False, f"not yet decided: {ci}"
        return StopState(decided, message, comparison.n_items, comparison.n_groups, self._looks,
                         self.planned_looks, d.delta, d.ci_low, d.ci_high, confidence)
