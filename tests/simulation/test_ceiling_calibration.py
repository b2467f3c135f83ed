"""The numeric human ceiling's CIs (leave-one-annotator-out r, ρ, τ) against a simulation with a
known truth: a reduced, seeded version of ``python -m bench.calibration --parts loo-ceiling``.

A coverage measured on D datasets has a Monte-Carlo error of sqrt(p (1 - p) / D); a check fails
when a coverage falls below the 90% floor by more than two of them (``Rate.falls_below``).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from bench.calibration import COVERAGE_FLOOR, LABELS, run_loo_ceiling_cell

from dialjudge.core.stats.ceiling_ci import MIN_CONTEXTS_CEILING


@pytest.mark.parametrize(("k", "m"), [(MIN_CONTEXTS_CEILING, 1), (MIN_CONTEXTS_CEILING, 6), (20, 4)])
def test_the_leave_one_out_ceilings_ci_covers_at_every_shown_k(k: int, m: int) -> None:
    cell = run_loo_ceiling_cell(replace(LABELS, n_contexts=k, n_candidates=m), 150, seed=300 + k + m, n_boot=400)
    for name in ("cover ceiling r", "cover ceiling ρ", "cover ceiling τ"):
        rate = cell.rates[name]
        assert rate.trials > 140, name  # a CI is shown at the floor and above
        assert not rate.falls_below(COVERAGE_FLOOR), f"{name} at k={k}, m={m}: {rate}"
