"""Many evaluators of set true agreement on one simulated dataset, and how a leaderboard clusters them.

The data follow :mod:`.synthetic` (k contexts x m candidates, latent quality shared in part within a
context, annotators rating it with noise, the pooled label their mean); each of ``n_evaluators``
evaluators scores the latent quality plus an error whose sd gives it the population Spearman
correlation ``agreements[j]`` with the pooled label, a share of the error common to a context and a
share common to all evaluators (two prompts of one model are alike).

**Mixed scales.** Each evaluator's score is then put on a scale of its own, cycling through
:data:`SCALES`: at the Pearson levels by affine maps only (a 1-5 rating, a 0-1 score, a token-count-like
scale), which leave every evaluator's true r unchanged, so "equal true agreement" stays exact; at the
within-context level also by strictly monotone non-linear maps (a 0-1 normal CDF, a p(yes) logistic),
which leave every per-context τ unchanged. A pairwise evaluator's win rate is not simulated: its true
agreement is not that of a score (docs/calibration.md says so).

:func:`cluster_outcomes` runs the product's own code (``core.stats.significance_clusters``) on each
dataset and says whether clusters were given (the floor) and how many there were.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import expit, ndtr

from ..stats.meta_levels import CONTEXT, Items, level_named
from ..stats.significance_clusters import cluster_evaluators
from .synthetic import SimulationDesign, _judge_errors, draw_ratings

#: Affine scales (all levels) and monotone ones (within-context only): name -> map of the latent score.
AFFINE_SCALES = {"1-5": lambda x: 3.0 + 0.8 * x, "0-1": lambda x: 0.5 + 0.15 * x, "tokens": lambda x: 40.0 + 12.0 * x}
MONOTONE_SCALES = {"0-1 cdf": ndtr, "p(yes)": lambda x: expit(1.7 * x)}


def scales_for(level: str) -> dict[str, object]:
    return {**AFFINE_SCALES, **MONOTONE_SCALES} if level == CONTEXT else dict(AFFINE_SCALES)


@dataclass(frozen=True)
class EvaluatorBatch:
    """``scores[d, j, i]``: evaluator j's score of item i in dataset d; ``human[d, i]`` the pooled label."""

    human: np.ndarray
    scores: np.ndarray
    groups: np.ndarray
    scale_names: tuple[str, ...]


def simulate_evaluators(design: SimulationDesign, agreements: Sequence[float], n_datasets: int, seed: int, *,
                        level: str = CONTEXT) -> EvaluatorBatch:
    """``n_datasets`` datasets of ``design`` scored by one evaluator per entry of ``agreements``."""
    rng = np.random.default_rng(seed)
    d, k, m = n_datasets, design.n_contexts, design.n_candidates
    quality, _ratings, human = draw_ratings(rng, design, d)
    shared = _judge_errors(rng, d, k, m, design.judge_context_share)
    rho = design.error_correlation
    scales = scales_for(level)
    names = tuple(scales)
    chosen = []
    scores = np.empty((d, len(agreements), k * m))
    for j, agreement in enumerate(agreements):
        own = _judge_errors(rng, d, k, m, design.judge_context_share)
        error = math.sqrt(rho) * shared + math.sqrt(1.0 - rho) * own
        latent = quality + design.judge_error_sd(agreement) * error
        name = names[j % len(names)]
        chosen.append(name)
        scores[:, j, :] = scales[name](latent)  # type: ignore[operator]
    return EvaluatorBatch(human, scores, np.repeat(np.arange(k), m), tuple(chosen))


@dataclass(frozen=True)
class ClusterOutcome:
    #: Clusters given (False: below the floor, with ``reason``).
    shown: bool
    n_clusters: int
    clusters: tuple[int | None, ...]
    reason: str | None
    #: The raw (unadjusted) p-value of evaluators 0 and 1 (on different scales): one test's calibration.
    first_pair_p: float = float("nan")


def cluster_outcomes(batch: EvaluatorBatch, level: str, *, alpha: float = 0.05, seed: int = 0
                     ) -> list[ClusterOutcome]:
    """The leaderboard's clusters of every simulated dataset (the product's code, its defaults)."""
    statistic = level_named(level)
    groups = [int(g) for g in batch.groups]
    out = []
    for d in range(batch.human.shape[0]):
        items = Items.build(batch.human[d], groups)
        columns = [batch.scores[d, j] for j in range(batch.scores.shape[1])]
        values = [statistic.value(x, items) for x in columns]
        result = cluster_evaluators(statistic, columns, values, items, alpha=alpha, seed=seed + d)
        given = [c for c in result.clusters if c is not None]
        first = result.test_of(0, 1)
        out.append(ClusterOutcome(result.reason is None, len(set(given)), result.clusters, result.reason,
                                  first.p_value if first is not None else float("nan")))
    return out


def equal_design(k: int, m: int) -> SimulationDesign:
    """The null cell: a 1-5 rating by three annotators, as the paired comparison's calibration uses."""
    return replace(SimulationDesign(n_contexts=2, n_candidates=1, rating_points=5, agreement=0.5),
                   n_contexts=k, n_candidates=m)


__all__ = ["AFFINE_SCALES", "ClusterOutcome", "EvaluatorBatch", "MONOTONE_SCALES", "cluster_outcomes",
           "equal_design", "scales_for", "simulate_evaluators"]
