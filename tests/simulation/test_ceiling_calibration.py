"""The numeric human ceiling's CIs (leave-one-annotator-out r, ρ, τ, and the graded pairwise Spearman)
against a simulation with a known truth: a reduced, seeded version of ``python -m bench.calibration
--parts loo-ceiling,loo-ceiling-sparse``.

A coverage measured on D datasets has a Monte-Carlo error of sqrt(p (1 - p) / D); a check fails
when a coverage falls below the 90% floor by more than two of them (``Rate.falls_below``).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from bench import calibration
from bench.calibration import COVERAGE_FLOOR, LABELS, run_loo_ceiling_cell

from dialjudge.core.stats.ceiling_ci import MIN_CONTEXTS_CEILING
from dialjudge.core.stats.rater_pairs import MIN_SHARED_ITEMS

COVERAGES = ("cover ceiling r", "cover ceiling ρ", "cover ceiling τ", "cover pairwise ρ")


@pytest.mark.parametrize(("k", "m"), [(MIN_CONTEXTS_CEILING, 2), (MIN_CONTEXTS_CEILING, 6), (20, 4)])
def test_the_leave_one_out_ceilings_ci_covers_at_every_shown_k(k: int, m: int) -> None:
    cell = run_loo_ceiling_cell(replace(LABELS, n_contexts=k, n_candidates=m), 150, seed=300 + k + m, n_boot=400)
    for name in COVERAGES:
        rate = cell.rates[name]
        assert rate.trials > 140, name  # a CI is shown at the floor and above
        assert not rate.falls_below(COVERAGE_FLOOR), f"{name} at k={k}, m={m}: {rate}"


def test_below_the_shared_items_minimum_no_ceiling_is_shown() -> None:
    """Six single-candidate contexts are 6 items: fewer than the annotators must share."""
    assert MIN_CONTEXTS_CEILING < MIN_SHARED_ITEMS
    cell = run_loo_ceiling_cell(replace(LABELS, n_contexts=MIN_CONTEXTS_CEILING, n_candidates=1), 20, seed=5,
                                n_boot=100)
    assert all(cell.rates[name].trials == 0 for name in COVERAGES)


def test_with_sparse_raters_and_a_stray_one_the_cis_cover(monkeypatch: pytest.MonkeyPatch) -> None:
    """USR's layout (one rater on every item, four more two at a time) and a stray rater on 3 items:
    the ceiling rests on the five, each slot and pair weighted by its items, and its CIs still cover.
    The truth from 20,000 contexts here (Monte-Carlo error about 0.005, far inside the CIs)."""
    monkeypatch.setattr(calibration, "LOO_TRUTH_CONTEXTS", 20_000)
    calibration.loo_ceiling_truth.cache_clear()
    try:
        cell = run_loo_ceiling_cell(replace(LABELS, n_contexts=20, n_candidates=4), 150, seed=77, n_boot=400,
                                    sparse=True)
    finally:
        calibration.loo_ceiling_truth.cache_clear()
    assert cell.design == "loo ceiling, sparse raters"
    for name in COVERAGES:
        rate = cell.rates[name]
        assert rate.trials > 140, name
        assert not rate.falls_below(COVERAGE_FLOOR), f"{name}, sparse raters: {rate}"
