"""Issue 38's done-when for `dialjudge align`, at the score level (core/tuning/align_simulation.py: the product's
split, selection and paired test on simulated USR Topical-Chat-like data with 30 labelled items).

* Corrections that carry no information: the variants are only other draws of the starting judge, so a
  "better" verdict is false; it must come at most 5% of the time (within twice its Monte-Carlo error). The
  test is two-sided at 5% and the winner is chosen on contexts the test never sees, so about 2.5% is expected.
* Corrections that match the humans, with a judge that gains 0.2 in Spearman from them (the simulated judge's
  correction_gain): the improvement is found (power reported in docs/align.md).

The randomization test draws 199 swaps here instead of the product's 1,000: a p-value that counts the observed
assignment among its draws is valid at any number of them, and the check takes a fifth of the time.
"""

from __future__ import annotations

from dialjudge.core.tuning.align_simulation import AlignDesign, simulate_align


def test_uninformative_corrections_rarely_make_a_false_better_verdict() -> None:
    outcomes = simulate_align(AlignDesign(n_labelled=30, gain=0.2, informative=False), 400, seed=38,
                              n_draws=199)
    better = outcomes.rate("better")
    assert outcomes.leaked == 0
    assert not better.exceeds(0.05), f"false 'better' rate {better}"
    # Both directions are errors of the same two-sided test: together they are about 5% too.
    assert not outcomes.rate("worse").exceeds(0.05)


def test_corrections_that_match_the_humans_are_found_to_help() -> None:
    outcomes = simulate_align(AlignDesign(n_labelled=30, gain=0.2, informative=True), 60, seed=39,
                              n_draws=199)
    power = outcomes.rate("better")
    assert outcomes.leaked == 0
    assert power.value >= 0.6, f"power {power}"
    assert outcomes.rate("worse").hits == 0
