"""Calibration of dialjudge's intervals, p-values and verdicts on simulated data with a known truth.

    PYTHONPATH=src python -m bench.calibration                  # the table in docs/calibration.md
    PYTHONPATH=src python -m bench.calibration --datasets 200   # a reduced run while developing
    PYTHONPATH=src python -m bench.calibration --workers 8 --markdown docs/calibration.md
    PYTHONPATH=src python -m bench.calibration --parts null --no-intervals   # only the verdicts, quick
    PYTHONPATH=src python -m bench.calibration --render bench/calibration_runs/*.json   # the docs' table

For every k (contexts) x m (candidates per context) cell, ``--datasets`` datasets are drawn
(``dialjudge.core.simulation``) and each goes through the product's own code
(``correlate``-style item correlation and ``paired_comparison``) with its defaults:

* coverage of the 95% CI of r, ρ and τ (judge A against the pooled human label), and of
  Δr, Δρ, Δτ (B minus A), over the datasets where a CI is shown;
* the false-verdict rate of the paired verdict (design "null": A and B equally good, so
  any "X agrees better" is false), over the datasets where a verdict is shown, next to
  the old rule's (a percentile CI over contexts excluding 0) and Williams's test at p < 0.05;
* the power of the verdict where B truly agrees better (design "effect": Δρ = +0.2);
* coverage of the label statistics' CIs (κ, α, agreement, ROC-AUC; design "labels") and of the
  human ceiling's α CI (design "ceiling") and of its leave-one-annotator-out r, ρ, τ CIs and the graded
  pairwise Spearman's CI (design "loo ceiling", part ``loo-ceiling``; with USR's sparse rater layout
  and a stray rater, design "loo ceiling, sparse raters", part ``loo-ceiling-sparse``); the stop
  rule's false "better" over its looks.
* the leaderboard's significance clusters (parts ``clusters-global`` and ``clusters-context``): with
  ``CLUSTER_EVALUATORS`` evaluators of equal true agreement on mixed scales, how often they are split
  into more than one cluster (at most 5% is the claim), how often clusters are given at all (below the
  floor none are, with the reason), and the power to put two evaluators of ρ 0.6 above two of ρ 0.3.

Each rate is printed with its Monte-Carlo standard error. The last lines derive the
smallest number of contexts at which every shown CI covers >= 90% (and the exact
test can reach p < 0.05), which ``core/stats/small_samples.MIN_CONTEXTS`` must equal.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from dialjudge.core.simulation import SimulationDesign, coverage_rate, false_verdict_rate, simulate
from dialjudge.core.simulation.calibration import Rate
from dialjudge.core.simulation.evaluators import cluster_outcomes, equal_design, simulate_evaluators
from dialjudge.core.stats import bootstrap as bs
from dialjudge.core.stats.ceiling_ci import CEILING_CI_MAX_ITEMS as DEFAULT_CEILING_MAX_ITEMS
from dialjudge.core.stats.ceiling_ci import MIN_CONTEXTS_CEILING
from dialjudge.core.stats.correlation import METHODS, item_correlation
from dialjudge.core.stats.paired import paired_comparison
from dialjudge.core.stats.randomization import DEFAULT_DRAWS
from dialjudge.core.stats.small_samples import MIN_CONTEXTS, MIN_CONTEXTS_LABELS

CONTEXTS = (2, 3, 5, 6, 10, 20, 60)
CANDIDATES = (1, 4, 6)
#: The coverage no CI reported as 95% may fall below.
COVERAGE_FLOOR = 0.90
NOMINAL_FALSE = 0.05
SYMBOL = {"pearson": "r", "spearman": "ρ", "kendall": "τ"}

#: Three annotators on a 1-5 scale; judge A with population ρ = 0.5; a share of every variance per context.
NULL = SimulationDesign(n_contexts=2, n_candidates=1, rating_points=5, agreement=0.5, delta=0.0)
EFFECT = replace(NULL, agreement=0.4, delta=0.2)


@dataclass
class CellResult:
    design: str
    k: int
    m: int
    n_datasets: int
    rates: dict[str, Rate]
    seconds: float
    #: Run with ``--no-intervals``: its coverage columns measured nothing.
    intervals_skipped: bool = False
    #: Datasets per cell of every run merged into this one (``overlaid``).
    sources: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"design": self.design, "k": self.k, "m": self.m, "datasets": self.n_datasets, "seconds": self.seconds,
                "intervals_skipped": self.intervals_skipped,
                **{name: {"hits": r.hits, "trials": r.trials, "rate": r.value} for name, r in self.rates.items()}}


def overlaid(runs: Sequence[Sequence[CellResult]]) -> list[CellResult]:
    """Cells of several runs merged by (design, k, m): a later run's rates replace an earlier run's of
    the same name; a run of only the verdicts (``--no-intervals``) replaces the false-verdict and
    power columns and keeps the coverage columns (and the old rule's, which needs the bootstrap)."""
    merged: dict[tuple[str, int, int], CellResult] = {}
    for run in runs:
        for cell in run:
            key = (cell.design, cell.k, cell.m)
            if key not in merged:
                merged[key] = CellResult(cell.design, cell.k, cell.m, cell.n_datasets, dict(cell.rates), cell.seconds,
                                         cell.intervals_skipped, (cell.n_datasets,))
                continue
            base = merged[key]
            for name, rate in cell.rates.items():
                if not cell.intervals_skipped or name not in base.rates or _verdict_rate(name):
                    base.rates[name] = rate
            if cell.n_datasets not in base.sources:
                base.sources = base.sources + (cell.n_datasets,)
    return list(merged.values())


def _verdict_rate(name: str) -> bool:
    """A rate a run without the bootstrap (``--no-intervals``) measures: a verdict's, not a CI's."""
    return not name.startswith("cover") and not name.endswith("old rule")


def cell_from_dict(row: dict[str, Any]) -> CellResult:
    """A cell written by ``--json`` read back."""
    rates = {name: Rate(int(v["hits"]), int(v["trials"])) for name, v in row.items() if isinstance(v, dict)}
    return CellResult(row["design"], int(row["k"]), int(row["m"]), int(row["datasets"]), rates, float(row["seconds"]),
                      bool(row.get("intervals_skipped", False)))


def run_cell(name: str, design: SimulationDesign, n_datasets: int, seed: int, n_boot: int = 1000,
             paired_boot: int = 2000, n_draws: int = DEFAULT_DRAWS) -> CellResult:
    """One cell: every statistic on ``n_datasets`` simulated datasets, as the product computes it."""
    started = time.perf_counter()
    batch = simulate(design, n_datasets, seed)
    truth = design.truth()
    groups = batch.groups.tolist()
    ci = {m: (np.full(n_datasets, np.nan), np.full(n_datasets, np.nan)) for m in METHODS}
    delta_ci = {m: (np.full(n_datasets, np.nan), np.full(n_datasets, np.nan)) for m in METHODS}
    decided = {m: np.zeros(n_datasets, bool) for m in METHODS}
    right_way = {m: np.zeros(n_datasets, bool) for m in METHODS}
    shown = np.zeros(n_datasets, bool)
    old_decided = np.zeros(n_datasets, bool)
    old_shown = np.zeros(n_datasets, bool)
    williams = np.zeros(n_datasets, bool)
    williams_shown = np.zeros(n_datasets, bool)
    for d in range(n_datasets):
        if n_boot:
            result = item_correlation(batch.judge_a[d], batch.human[d], groups, n_excluded=0, n_boot=n_boot,
                                      seed=d, confidence=0.95)
            for method in METHODS:
                c = result.coefficient(method)
                ci[method][0][d], ci[method][1][d] = c.ci_low, c.ci_high
        a, b, human, item_groups = batch.dataset(d)
        comparison = paired_comparison(a, b, human, item_groups, n_boot=paired_boot, seed=d, n_draws=n_draws)
        if not comparison.defined:
            continue
        shown[d] = comparison.too_few_contexts is None
        for method in METHODS:
            delta = comparison.delta(method)
            delta_ci[method][0][d], delta_ci[method][1][d] = delta.ci_low, delta.ci_high
            decided[method][d] = comparison.decided(method)
            right_way[method][d] = decided[method][d] and delta.delta * design.delta > 0
        if design.delta == 0 and paired_boot:
            old_decided[d], old_shown[d] = _old_rule(a, b, human, item_groups, paired_boot, d)
        if comparison.williams is not None and math.isfinite(comparison.williams.p_value):
            williams_shown[d] = True
            williams[d] = comparison.williams.p_value < NOMINAL_FALSE
    rates: dict[str, Rate] = {}
    for method in METHODS:
        s = SYMBOL[method]
        rates[f"cover {s}"] = coverage_rate(*ci[method], truth[method][0])
        rates[f"cover Δ{s}"] = coverage_rate(*delta_ci[method], design.true_delta(method))
        if design.delta == 0:
            rates[f"false Δ{s}"] = false_verdict_rate(decided[method], shown)
        else:
            rates[f"power Δ{s}"] = false_verdict_rate(right_way[method], shown)
    if design.delta == 0:
        rates["false Δρ, old rule"] = false_verdict_rate(old_decided, old_shown)
        rates["false Δr, Williams"] = false_verdict_rate(williams, williams_shown)
    return CellResult(name, design.n_contexts, design.n_candidates, n_datasets, rates,
                      time.perf_counter() - started, intervals_skipped=not (n_boot or paired_boot))


def _old_rule(a: dict[str, float], b: dict[str, float], human: dict[str, float], groups: dict[str, int],
              n_boot: int, seed: int) -> tuple[bool, bool]:
    """The verdict dialjudge gave before: a plain percentile 95% CI of Δρ over contexts excluding 0."""
    ids = list(human)
    x_a, x_b, y = (np.array([m[i] for i in ids]) for m in (a, b, human))
    rs = bs.resample(len(ids), [groups[i] for i in ids], n_boot=n_boot, seed=seed)
    deltas = bs.weighted_spearman(x_b, y, rs.item_weights, rs.memo) - bs.weighted_spearman(x_a, y, rs.item_weights,
                                                                                          rs.memo)
    low, high, n_ok = bs.percentile_interval(deltas, 0.95)
    if not n_ok:
        return False, False
    return bool(low > 0 or high < 0), True


def stop_rule_cell(n_datasets: int, seed: int, k: int = 40, m: int = 4, check_every: int = 5,
                   min_contexts: int = 10) -> CellResult:
    """The stop rule against a baseline under the null (A and B equally good), fed context by context:
    how often does it stop claiming one is better at any of its looks?"""
    from dialjudge.core.judges.run.stopping import StopRule

    started = time.perf_counter()
    design = replace(NULL, n_contexts=k, n_candidates=m)
    batch = simulate(design, n_datasets, seed)
    false_stop = np.zeros(n_datasets, bool)
    for d in range(n_datasets):
        a, b, human, groups = batch.dataset(d)
        rule = StopRule(human, groups, baseline=a, check_every=check_every, min_contexts=min_contexts, seed=d)
        for item, score in b.items():
            state = rule.observe("judge", item, score)
            if state is not None and state.decided:
                false_stop[d] = True
                break
    return CellResult("stop rule", k, m, n_datasets, {"false stop": false_verdict_rate(false_stop)},
                      time.perf_counter() - started)


#: Binary labels: 3 annotators and the judge answer yes where their latent view is above 0.
LABELS = replace(NULL, agreement=0.5)
LABEL_STATS = ("percent_agreement", "kappa", "alpha", "auc")
LABEL_NAMES = {"percent_agreement": "agreement", "kappa": "κ", "alpha": "α", "auc": "ROC-AUC"}


def label_examples(batch: Any, d: int) -> tuple[list[Any], dict[str, Any], dict[str, float]]:
    """Dataset ``d`` of a batch as binary-labelled examples: each annotator says 1 where their rating
    is above the latent mean; the judge says 1 where its score is above 0, with p(1) = Φ(score)."""
    from scipy.stats import norm

    from dialjudge.core.model import BINARY_01, Example, Rating

    noise = batch.ratings[d] - batch.quality[d][:, None]  # the annotators' own noise
    votes = (batch.quality[d][:, None] + noise > 0).astype(int)
    examples, judge, p_yes = [], {}, {}
    probabilities = norm.cdf(batch.judge_a[d])
    for j, item in enumerate(batch.item_ids):
        examples.append(Example(item, f"c{batch.groups[j]}", (), "", ratings={
            "label": Rating(tuple(int(v) for v in votes[j]), BINARY_01)}))
        score = float(batch.judge_a[d][j])
        judge[item] = int(score > 0)
        p_yes[item] = float(probabilities[j])
    return examples, judge, p_yes


@lru_cache(maxsize=8)
def _label_truth(design: SimulationDesign) -> dict[str, float]:
    from dialjudge.core.stats.label_agreement import compare_labels

    big = simulate(replace(design, n_contexts=50_000, n_candidates=1, rating_points=None), 1, seed=20261124)
    examples, judge, p_yes = label_examples(big, 0)
    result = compare_labels(examples, "label", judge, probabilities=p_yes, positive=1, n_boot=0)
    return {name: float(getattr(result, name).value) for name in LABEL_STATS}


def run_label_cell(design: SimulationDesign, n_datasets: int, seed: int, n_boot: int = 1000) -> CellResult:
    """κ, α (annotators plus the judge), percent agreement and ROC-AUC of a binary judge: coverage of
    their bootstrap CIs (``compare_labels``, as the label report computes them)."""
    from dialjudge.core.stats.label_agreement import compare_labels

    started = time.perf_counter()
    sim = replace(design, rating_points=None)  # annotators vote on the continuous view, thresholded
    truth = _label_truth(replace(sim, n_contexts=1, n_candidates=1))
    batch = simulate(sim, n_datasets, seed)
    bounds = {name: (np.full(n_datasets, np.nan), np.full(n_datasets, np.nan)) for name in LABEL_STATS}
    for d in range(n_datasets):
        examples, judge, p_yes = label_examples(batch, d)
        result = compare_labels(examples, "label", judge, probabilities=p_yes, positive=1, n_boot=n_boot, seed=d)
        for name in LABEL_STATS:
            estimate = getattr(result, name)
            if estimate is not None:
                bounds[name][0][d], bounds[name][1][d] = estimate.low, estimate.high
    rates = {f"cover {LABEL_NAMES[name]}": coverage_rate(*bounds[name], truth[name]) for name in LABEL_STATS}
    return CellResult("labels", design.n_contexts, design.n_candidates, n_datasets, rates,
                      time.perf_counter() - started)


def run_ceiling_cell(design: SimulationDesign, n_datasets: int, seed: int, n_boot: int = 1000) -> CellResult:
    """The human ceiling of a binary quality: coverage of the CI of Krippendorff's α among the three
    annotators (``label_ceiling``, as the label report computes it), resampling contexts."""
    from dialjudge.core.stats.label_agreement import label_ceiling

    started = time.perf_counter()
    sim = replace(design, rating_points=None)
    truth = _ceiling_truth(replace(sim, n_contexts=1, n_candidates=1))
    batch = simulate(sim, n_datasets, seed)
    low, high = np.full(n_datasets, np.nan), np.full(n_datasets, np.nan)
    for d in range(n_datasets):
        examples, _, _ = label_examples(batch, d)
        ceiling = label_ceiling(examples, "label", n_boot=n_boot, seed=d)
        low[d], high[d] = ceiling.alpha_low, ceiling.alpha_high
    return CellResult("ceiling", design.n_contexts, design.n_candidates, n_datasets,
                      {"cover ceiling α": coverage_rate(low, high, truth)}, time.perf_counter() - started)


@lru_cache(maxsize=8)
def _ceiling_truth(design: SimulationDesign) -> float:
    from dialjudge.core.stats.label_agreement import label_ceiling

    big = simulate(replace(design, n_contexts=50_000, n_candidates=1, rating_points=None), 1, seed=20261124)
    return float(label_ceiling(label_examples(big, 0)[0], "label").alpha)


#: USR's layout: one rater on every item, four more two at a time (a pair per context, rotating over
#: the six pairs), and a stray sixth rater on the first 3 items only (left out by the shared-items minimum).
SPARSE_PAIRS = ((1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4))
SPARSE_STRAY_ITEMS = 3
SPARSE_ANNOTATORS = 6


def sparse_ceiling_examples(batch: Any, d: int) -> list[Any]:
    """Dataset ``d`` of a batch with ``SPARSE_ANNOTATORS`` annotators, each item keeping only the
    ratings of USR's layout (``SPARSE_PAIRS``), the annotators named."""
    from dialjudge.core.model import Example, Rating, Scale, ScaleKind

    points = batch.design.rating_points
    scale = Scale(ScaleKind.ORDINAL, 1, points) if points else Scale(ScaleKind.CONTINUOUS, -100, 100)
    ratings = batch.ratings[d].tolist()
    out = []
    for j, item in enumerate(batch.item_ids):
        raters = (0, *SPARSE_PAIRS[int(batch.groups[j]) % len(SPARSE_PAIRS)])
        if j < SPARSE_STRAY_ITEMS:
            raters = (*raters, SPARSE_ANNOTATORS - 1)
        out.append(Example(item, f"c{batch.groups[j]}", (), "", ratings={"q": Rating(
            tuple(ratings[j][a] for a in raters), scale, tuple(f"r{a}" for a in raters))}))
    return out


def ceiling_examples(batch: Any, d: int) -> list[Any]:
    """Dataset ``d`` of a batch as examples carrying every annotator's rating (1..5 when the design
    rounds, else continuous) of the quality "q"."""
    from dialjudge.core.model import Example, Rating, Scale, ScaleKind

    points = batch.design.rating_points
    scale = Scale(ScaleKind.ORDINAL, 1, points) if points else Scale(ScaleKind.CONTINUOUS, -100, 100)
    ratings = batch.ratings[d].tolist()
    return [Example(item, f"c{batch.groups[j]}", (), "", ratings={"q": Rating(tuple(ratings[j]), scale)})
            for j, item in enumerate(batch.item_ids)]


#: Contexts of the one large dataset whose leave-one-out ceiling stands in for the truth (its
#: Monte-Carlo error is about 0.002, far inside the CIs it is compared with).
LOO_TRUTH_CONTEXTS = 100_000


#: The graded pairwise Spearman between annotators, beside the leave-one-out coefficients.
PAIRWISE = "pairwise"


@lru_cache(maxsize=8)
def loo_ceiling_truth(design: SimulationDesign, sparse: bool = False) -> dict[str, float]:
    """The estimand: the leave-one-out ceiling (averaged over the same annotators) and the graded
    pairwise Spearman on infinitely many contexts, approximated by one very large simulated dataset
    (``sparse``: in the sparse layout). It does not depend on k or m: the coefficients are functionals
    of one item's (own rating, others' mean) or (one rating, another's) distribution."""
    from dialjudge.core.stats.ceiling import human_ceiling

    big = simulate(replace(design, n_contexts=LOO_TRUTH_CONTEXTS, n_candidates=1), 1, seed=20261125)
    examples = sparse_ceiling_examples(big, 0) if sparse else ceiling_examples(big, 0)
    ceiling = human_ceiling(examples, "q", n_boot=0)
    assert ceiling.pairwise_spearman is not None
    return {**{m: float(ceiling.coefficient(m)) for m in METHODS}, PAIRWISE: ceiling.pairwise_spearman.value}


def run_loo_ceiling_cell(design: SimulationDesign, n_datasets: int, seed: int, n_boot: int = 1000,
                         sparse: bool = False) -> CellResult:
    """The numeric human ceiling (leave-one-annotator-out r, ρ, τ and the graded pairwise Spearman of
    annotators on a 1-5 scale: three on every item, or ``sparse``: USR's layout with a stray rater):
    coverage of its context-bootstrap CIs (``human_ceiling``, as every report computes them)."""
    from dialjudge.core.stats.ceiling import human_ceiling

    started = time.perf_counter()
    if sparse:
        design = replace(design, n_annotators=SPARSE_ANNOTATORS)
    truth = loo_ceiling_truth(replace(design, n_contexts=1, n_candidates=1), sparse)
    batch = simulate(design, n_datasets, seed)
    bounds = {m: (np.full(n_datasets, np.nan), np.full(n_datasets, np.nan)) for m in (*METHODS, PAIRWISE)}
    for d in range(n_datasets):
        examples = sparse_ceiling_examples(batch, d) if sparse else ceiling_examples(batch, d)
        ceiling = human_ceiling(examples, "q", n_boot=n_boot, seed=d)
        for m in METHODS:
            bounds[m][0][d], bounds[m][1][d] = ceiling.ci(m)
        if ceiling.pairwise_spearman is not None:
            bounds[PAIRWISE][0][d], bounds[PAIRWISE][1][d] = ceiling.pairwise_spearman.ci()
    rates = {f"cover ceiling {SYMBOL[m]}": coverage_rate(*bounds[m], truth[m]) for m in METHODS}
    rates["cover pairwise ρ"] = coverage_rate(*bounds[PAIRWISE], truth[PAIRWISE])
    name = loo_ceiling_design_name() + (", sparse raters" if sparse else "")
    return CellResult(name, design.n_contexts, design.n_candidates, n_datasets, rates, time.perf_counter() - started)


def loo_ceiling_design_name() -> str:
    """"loo ceiling", or, when ``--ceiling-max-items`` lowered the size above which the ceiling's CI is
    an m-out-of-n bootstrap, a name of its own (so that its rows never replace the full bootstrap's)."""
    from dialjudge.core.stats import ceiling_ci

    if ceiling_ci.CEILING_CI_MAX_ITEMS == DEFAULT_CEILING_MAX_ITEMS:
        return "loo ceiling"
    return f"loo ceiling, m-out-of-n above {ceiling_ci.CEILING_CI_MAX_ITEMS} items"


#: Evaluators of one simulated leaderboard (6 pairs: Holm's first threshold 0.05/6).
CLUSTER_EVALUATORS = 4
#: The power design: two evaluators of this population ρ ...
CLUSTER_WEAK, CLUSTER_STRONG = 0.3, 0.6
CLUSTER_PARTS = {"clusters-global": "global", "clusters-context": "context"}


def run_cluster_cell(level: str, k: int, m: int, n_datasets: int, seed: int,
                     n_evaluators: int = CLUSTER_EVALUATORS) -> CellResult:
    """False splits of equally good evaluators, clusters shown, and the power for a set difference."""
    started = time.perf_counter()
    design = equal_design(k, m)
    null = cluster_outcomes(simulate_evaluators(design, [design.agreement] * n_evaluators, n_datasets, seed,
                                                level=level), level)
    shown = np.array([o.shown for o in null])
    split = np.array([o.shown and o.n_clusters > 1 for o in null])
    half = n_evaluators // 2
    agreements = [CLUSTER_WEAK] * half + [CLUSTER_STRONG] * (n_evaluators - half)
    effect = cluster_outcomes(simulate_evaluators(design, agreements, n_datasets, seed + 1, level=level), level)
    separated = np.array([o.shown and all(o.clusters[i] is not None and o.clusters[j] is not None
                                          and o.clusters[j] < o.clusters[i]  # type: ignore[operator]
                                          for i in range(half) for j in range(half, n_evaluators))
                          for o in effect])
    pair_p = np.array([o.first_pair_p for o in null])
    rates = {"clusters shown": Rate(int(shown.sum()), n_datasets),
             "false split": false_verdict_rate(split, shown),
             "one pair p < 0.05": false_verdict_rate(pair_p < NOMINAL_FALSE, shown & np.isfinite(pair_p)),
             f"power ρ {CLUSTER_STRONG} over {CLUSTER_WEAK}": false_verdict_rate(
                 separated, np.array([o.shown for o in effect]))}
    return CellResult(f"clusters {level}", k, m, n_datasets, rates, time.perf_counter() - started)


#: (design name, design, datasets, seed, correlation resamples, paired resamples)
Cell = tuple[str, SimulationDesign, int, int, int, int]


def cells(n_datasets: int, contexts: Sequence[int], candidates: Sequence[int], seed: int,
          parts: Sequence[str] = ("null", "effect", "labels"), n_boot: int = 1000,
          paired_boot: int = 2000) -> list[Cell]:
    out = []
    for name, base in (("null", NULL), ("effect", EFFECT), ("labels", LABELS), ("ceiling", LABELS),
                       ("loo-ceiling", LABELS), ("loo-ceiling-sparse", LABELS)):
        if name not in parts:
            continue
        offset = {"null": 0, "effect": 5, "labels": 5, "ceiling": 7, "loo-ceiling": 8, "loo-ceiling-sparse": 9}[name]
        for m in candidates:
            for k in contexts:
                design = replace(base, n_contexts=k, n_candidates=m)
                out.append((name, design, n_datasets, seed + 1000 * k + 10 * m + offset, n_boot, paired_boot))
    for name in CLUSTER_PARTS:
        if name in parts:
            out.extend((name, equal_design(k, m), n_datasets, seed + 1000 * k + 10 * m + 3, 0, 0)
                       for m in candidates for k in contexts)
    return out


def _run(args: Cell) -> CellResult:
    name, design, n_datasets, seed, n_boot, paired_boot = args
    if name in CLUSTER_PARTS:
        return run_cluster_cell(CLUSTER_PARTS[name], design.n_contexts, design.n_candidates, n_datasets, seed)
    if name == "labels":
        return run_label_cell(design, n_datasets, seed, n_boot)
    if name == "ceiling":
        return run_ceiling_cell(design, n_datasets, seed, n_boot)
    if name == "loo-ceiling":
        return run_loo_ceiling_cell(design, n_datasets, seed, n_boot)
    if name == "loo-ceiling-sparse":
        return run_loo_ceiling_cell(design, n_datasets, seed, n_boot, sparse=True)
    return run_cell(name, design, n_datasets, seed, n_boot, paired_boot)


def derived_min_contexts(results: Sequence[CellResult]) -> tuple[int, int]:
    """(smallest k at and above which every shown CI covers >= the floor, smallest k at which
    the exact randomization test can reach p < 0.05)."""
    ks = sorted({r.k for r in results})
    ok_from = ks[-1] + 1
    for k in reversed(ks):
        at_k = [rate for r in results if r.k == k for name, rate in r.rates.items()
                if name.startswith("cover") and rate.trials]
        if at_k and all(rate.value >= COVERAGE_FLOOR for rate in at_k):
            ok_from = k
        else:
            break  # below: a cell under the floor, or no CI shown at all (no evidence either way)
    test_from = next(k for k in range(1, 64) if 2.0 / 2 ** k < NOMINAL_FALSE)
    return ok_from, test_from


def markdown(results: Sequence[CellResult], n_datasets: int | None, command: str) -> str:
    per_cell = "simulated datasets per cell: the column \"datasets\"" if n_datasets is None else \
        f"{n_datasets} simulated datasets per cell"
    lines = [f"Regenerate: `{command}` ({per_cell}; rates ± Monte-Carlo standard error; \"—\": not shown at "
             "that k, so nothing to calibrate).", ""]
    loo_designs = sorted({r.design for r in results if r.design.startswith("loo ceiling")})
    for design in ("null", "effect", "labels", "ceiling", *loo_designs, "clusters global", "clusters context"):
        rows = [r for r in results if r.design == design]
        if not rows:
            continue
        names = list(dict.fromkeys(name for r in rows for name in r.rates))
        rows.sort(key=lambda r: (r.m, r.k))
        lines += [f"### Design \"{design}\"", "",
                  "| k | m | datasets | " + " | ".join(names) + " |", "|---|---|---|" + "---|" * len(names)]
        for r in rows:
            cellsx = []
            for name in names:
                rate = r.rates.get(name, Rate(0, 0))
                cellsx.append("—" if not rate.trials else f"{rate.value:.3f} ± {rate.mc_error():.3f}")
            datasets = " / ".join(str(n) for n in (r.sources or (r.n_datasets,)))
            lines.append(f"| {r.k} | {r.m} | {datasets} | " + " | ".join(cellsx) + " |")
        lines.append("")
    stops = [r for r in results if r.design == "stop rule"]
    for r in stops:
        rate = r.rates["false stop"]
        lines.append(f"Stop rule against a baseline, null design, k = {r.k} contexts x m = {r.m}, a look every 5 "
                     f"contexts from 10 ({r.n_datasets} datasets): stopped with a false \"better\" in "
                     f"{rate.value:.3f} ± {rate.mc_error():.3f} of runs (nominal at most {NOMINAL_FALSE}).")
        lines.append("")
    correlations = [r for r in results if r.design in ("null", "effect")]
    if correlations:
        ok_from, test_from = derived_min_contexts(correlations)
        lines.append(f"Correlations and paired comparisons: every CI covers >= {COVERAGE_FLOOR:.0%} from "
                     f"k = {ok_from}; the exact randomization test can first give p < {NOMINAL_FALSE} at "
                     f"k = {test_from}; MIN_CONTEXTS = {MIN_CONTEXTS}.")
    labels = [r for r in results if r.design == "labels"]
    if labels:
        lines.append(f"Label statistics: every CI covers >= {COVERAGE_FLOOR:.0%} from "
                     f"k = {derived_min_contexts(labels)[0]}; MIN_CONTEXTS_LABELS = {MIN_CONTEXTS_LABELS}.")
    ceilings = [r for r in results if r.design.startswith("loo ceiling")]
    if ceilings:
        lines.append(f"Human ceiling (leave-one-out r, ρ, τ; pairwise ρ): every CI covers >= {COVERAGE_FLOOR:.0%} from "
                     f"k = {derived_min_contexts(ceilings)[0]}; MIN_CONTEXTS_CEILING = {MIN_CONTEXTS_CEILING}.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.calibration", description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000, help="simulated datasets per cell")
    parser.add_argument("--contexts", default=",".join(map(str, CONTEXTS)))
    parser.add_argument("--candidates", default=",".join(map(str, CANDIDATES)))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="processes (the cells are independent)")
    parser.add_argument("--parts", default="null,effect,labels,stop",
                        help="which designs: null, effect (correlations and paired comparisons), labels (κ, α, "
                             "AUC), ceiling (the human ceiling's α), loo-ceiling (the human ceiling's leave-one-out "
                             "r, ρ, τ and pairwise ρ), loo-ceiling-sparse (the same with USR's sparse raters and a "
                             "stray one), stop (the stop rule), clusters-global and clusters-context (the "
                             "leaderboard's significance clusters)")
    parser.add_argument("--stop-datasets", type=int, default=300, help="simulated runs for the stop rule (0: skip)")
    parser.add_argument("--json", help="write the rates as JSON here")
    parser.add_argument("--markdown", help="write the tables as Markdown here (else to stdout)")
    parser.add_argument("--boot", type=int, default=1000,
                        help="bootstrap resamples of one correlation's CI (dialjudge judge's default)")
    parser.add_argument("--paired-boot", type=int, default=2000,
                        help="bootstrap resamples of a paired comparison's CI (runs compare's default)")
    parser.add_argument("--no-intervals", action="store_true",
                        help="no bootstrap at all: only the verdicts (false-verdict rate, power); --render keeps "
                             "the coverage of an earlier run under them")
    parser.add_argument("--no-floor", action="store_true",
                        help="show CIs at every k (MIN_CONTEXTS, MIN_ITEMS_RANK_DELTA_CI, MIN_CONTEXTS_LABELS and "
                             "MIN_CONTEXTS_CEILING lowered to 2): the runs the floors are derived from")
    parser.add_argument("--ceiling-max-items", type=int, default=DEFAULT_CEILING_MAX_ITEMS,
                        help="items above which the human ceiling's CI is an m-out-of-n bootstrap (lower it to "
                             "calibrate that path on small simulated datasets; its rows get a design of their own)")
    parser.add_argument("--render", nargs="+", metavar="JSON",
                        help="only write the Markdown from the JSON of earlier runs (several runs' cells merged)")
    args = parser.parse_args(argv)
    if args.render:
        saved = overlaid([[cell_from_dict(row) for row in json.loads(Path(path).read_text("utf-8"))]
                          for path in args.render])
        text = markdown(saved, None, "PYTHONPATH=src python -m bench.calibration --render "
                        + " ".join(args.render))
        if args.markdown:
            Path(args.markdown).write_text(text + "\n", encoding="utf-8")
        else:
            print(text)
        return 0
    if args.no_floor:
        from dialjudge.core.stats import ceiling_ci, label_agreement, small_samples

        small_samples.MIN_CONTEXTS = 2
        ceiling_ci.MIN_CONTEXTS_CEILING = 2
        small_samples.MIN_ITEMS_RANK_DELTA_CI = 2
        label_agreement.MIN_CONTEXTS_LABELS = 2
    if args.ceiling_max_items != DEFAULT_CEILING_MAX_ITEMS:
        from dialjudge.core.stats import ceiling_ci

        if args.workers > 1:
            parser.error("--ceiling-max-items works in one process (--workers 1)")
        ceiling_ci.CEILING_CI_MAX_ITEMS = args.ceiling_max_items
    parts = args.parts.split(",")
    todo = cells(args.datasets, [int(k) for k in args.contexts.split(",")],
                 [int(m) for m in args.candidates.split(",")], args.seed, parts,
                 0 if args.no_intervals else args.boot, 0 if args.no_intervals else args.paired_boot)
    results: list[CellResult] = []
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            results = list(pool.map(_run, todo))
    else:
        for item in todo:
            results.append(_run(item))
            r = results[-1]
            print(f"{r.design} k={r.k} m={r.m}: {r.seconds:.1f}s", file=sys.stderr, flush=True)
            if args.json:  # after every cell, so that an interrupted run keeps what it measured
                with open(args.json, "w", encoding="utf-8") as out:
                    json.dump([r.to_dict() for r in results], out, indent=1)
    if args.stop_datasets and "stop" in parts:
        results.append(stop_rule_cell(args.stop_datasets, args.seed + 99))
        print(f"stop rule: {results[-1].seconds:.1f}s", file=sys.stderr, flush=True)
    command = " ".join(["PYTHONPATH=src python -m bench.calibration",
                        *(sys.argv[1:] if argv is None else argv)])
    text = markdown(results, args.datasets, command)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    else:
        print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump([r.to_dict() for r in results], out, indent=1)
    correlations = [r for r in results if r.design in ("null", "effect")]
    labels = [r for r in results if r.design == "labels"]
    ok = not correlations or max(derived_min_contexts(correlations)) <= MIN_CONTEXTS
    ok = ok and (not labels or derived_min_contexts(labels)[0] <= MIN_CONTEXTS_LABELS)
    ceilings = [r for r in results if r.design.startswith("loo ceiling")]
    ok = ok and (not ceilings or derived_min_contexts(ceilings)[0] <= MIN_CONTEXTS_CEILING)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
