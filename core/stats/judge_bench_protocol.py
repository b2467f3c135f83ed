"""JUDGE-BENCH's table convention (Bavaresco et al., 2024, "LLMs instead of Human Judges? A Large
Scale Empirical Study across 20 NLP Evaluation Tasks").

Per metric (a JUDGE-BENCH "metric" is a dialjudge quality): a graded or continuous metric is
Spearman's ρ between the judge's score and the mean human score; a categorical metric is Cohen's κ
between the judge's label and the human majority label. Per dataset and judge: the mean ± sd of
the graded metrics and, separately, of the categorical ones. Which statistic a metric gets follows
the category the file declares, as JUDGE-BENCH's tables do, not whether its scale looks like labels
(``core.model.is_label_quality``): a graded 0/1 metric is still correlated.

One rule differs from JUDGE-BENCH's regular runs, which replace an answer that cannot be parsed
by a random valid label: here such an answer is left out of ρ or κ and counted (``unparsed``),
never replaced. A rate of unparsed answers is part of how good a judge is, and a random label
would hide it inside a lower-but-plausible number.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model import Aggregation, Example
from .correlation import degenerate_reason, point_estimates
from .human import human_labels
from .label_agreement import EXCLUSION_REASONS, LabelComparison

GRADED = "graded"
CATEGORICAL = "categorical"
SPEARMAN = "spearman"
KAPPA = "kappa"

#: The rule said under every JUDGE-BENCH table dialjudge prints or writes.
UNPARSED_RULE = ("unparsed: answers that could not be read as a score or a label; they are left out of ρ and κ "
                 "and counted here, never replaced by random labels (JUDGE-BENCH's regular runs replace them)")
SD_RULE = ("mean ± sd over a dataset's metrics of one kind, as in JUDGE-BENCH's tables (sample sd, n−1; – for one "
           "metric; an undefined metric is left out of the mean)")


@dataclass(frozen=True)
class JudgeBenchMetric:
    """One judge on one JUDGE-BENCH metric of one dataset."""

    dataset: str
    metric: str
    category: str  # GRADED or CATEGORICAL
    judge: str
    value: float | None  # Spearman's ρ (graded) or Cohen's κ (categorical); None where undefined
    n: int  # items in the statistic
    unparsed: int  # judged items whose answer could not be read
    judged: int  # items of this metric the judge was asked about
    run_id: int | None = None
    reason: str | None = None

    @property
    def statistic(self) -> str:
        return SPEARMAN if self.category == GRADED else KAPPA

    def to_record(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "metric": self.metric, "category": self.category, "judge": self.judge,
                "statistic": self.statistic, "value": self.value, "n": self.n, "unparsed": self.unparsed,
                "judged": self.judged, "run": self.run_id, "reason": self.reason}


@dataclass(frozen=True)
class JudgeBenchSummary:
    """One judge's mean ± sd over a dataset's metrics of one category."""

    dataset: str
    category: str
    judge: str
    mean: float | None
    sd: float | None
    metrics: int  # metrics with a defined value (those averaged)
    undefined: int  # metrics of this category whose value is undefined (not averaged)
    unparsed: int  # summed over the category's metrics

    def to_record(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "category": self.category, "judge": self.judge,
                "statistic": SPEARMAN if self.category == GRADED else KAPPA, "mean": self.mean, "sd": self.sd,
                "metrics": self.metrics, "undefined": self.undefined, "unparsed": self.unparsed}


def graded_result(examples: Sequence[Example], metric: str, judge_scores: Mapping[str, float | None], *,
                  dataset: str, judge: str, run_id: int | None = None) -> JudgeBenchMetric:
    """Spearman's ρ of ``judge_scores`` (item id -> score, None for an unparsed answer) with the mean
    human score, over the items of ``examples`` rated on ``metric`` that the judge was asked about."""
    humans = human_labels(examples, metric, Aggregation.MEAN).values
    asked = [ex.id for ex in examples if ex.id in judge_scores and ex.id in humans]
    unparsed = sum(1 for item in asked if _missing(judge_scores[item]))
    kept = [item for item in asked if not _missing(judge_scores[item]) and not _missing(humans[item])]
    x = np.array([float(judge_scores[item]) for item in kept])  # type: ignore[arg-type]
    y = np.array([float(humans[item]) for item in kept])  # type: ignore[arg-type]
    reason = degenerate_reason(x, y, "items")
    value = None if reason else point_estimates(x, y)["spearman"][0]
    if value is not None and math.isnan(value):
        value, reason = None, "Spearman's ρ is undefined here"
    return JudgeBenchMetric(dataset, metric, GRADED, judge, value, len(kept), unparsed, len(asked), run_id, reason)


def categorical_result(comparison: LabelComparison, *, dataset: str, run_id: int | None = None) -> JudgeBenchMetric:
    """Cohen's κ with the human majority, from a label comparison (``compare_labels``): failed and
    off-list answers are its unparsed ones."""
    unparsed = comparison.exclusions.get("failed", 0) + comparison.exclusions.get("invalid_label", 0)
    judged = comparison.n + sum(comparison.exclusions.get(r, 0) for r in EXCLUSION_REASONS if r != "not_judged")
    kappa = comparison.kappa.value
    reason = "; ".join(comparison.reasons) or None
    value = None if kappa is None or math.isnan(kappa) else kappa
    if value is None:
        reason = reason or "Cohen's κ is undefined here"
    return JudgeBenchMetric(dataset, comparison.quality, CATEGORICAL, comparison.evaluator, value, comparison.n,
                            unparsed, judged, run_id, reason)


def summarise(results: Iterable[JudgeBenchMetric]) -> list[JudgeBenchSummary]:
    """Mean ± sd per (dataset, category, judge), in the order the results come."""
    groups: dict[tuple[str, str, str], list[JudgeBenchMetric]] = {}
    for result in results:
        groups.setdefault((result.dataset, result.category, result.judge), []).append(result)
    out = []
    for (dataset, category, judge), members in groups.items():
        values = [m.value for m in members if m.value is not None]
        mean = statistics.fmean(values) if values else None
        sd = statistics.stdev(values) if len(values) > 1 else None
        out.append(JudgeBenchSummary(dataset, category, judge, mean, sd, len(values), len(members) - len(values),
                                  sum(m.unparsed for m in members)))
    return out


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
