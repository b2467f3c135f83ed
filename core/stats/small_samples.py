"""What a bootstrap over few contexts can say, and the floor below which it says nothing.

A percentile bootstrap over k contexts has few distinct resamples when k is small
(3 for k = 2) and its intervals are too narrow: in simulation (``python -m
bench.calibration``, table in docs/calibration.md) the plain percentile CI of r over
10-20 single-candidate contexts covered the truth 88-89% of the time at a nominal
95%. Two remedies, both checked by that simulation:

* the *expanded* percentile interval (Hesterberg, "What Teachers Should Know About
  the Bootstrap", The American Statistician 2015): the percentile interval taken at
  the tail probability whose normal quantile is sqrt(k / (k - 1)) t_{k-1}, the
  small-sample widening a t interval has over a z interval. It covers >= 0.93 at
  every k >= 5 of the simulation (every m), and is close to the plain one at large k;
* ``MIN_CONTEXTS``: below it no CI, no p-value-based verdict is shown. It is the
  smallest k at which (a) the expanded interval covered >= 90% in every simulated
  cell at that k and above, and (b) the exact randomization test of a paired
  comparison (``randomization``) can reach p < 0.05 at all (its smallest two-sided
  p is 2 / 2^k: 0.0625 at k = 5, 0.031 at k = 6). The bench prints the k each
  condition gives; the test suite re-checks both at reduced size.
"""

from __future__ import annotations

import math

#: Contexts (resampling units: contexts, or items when there are no contexts) below which
#: no confidence interval and no verdict is shown. See the module note for its derivation.
MIN_CONTEXTS = 6
#: The same floor for the label statistics (percent agreement, κ, α, ROC-AUC, precision and
#: recall): in simulation κ's CI covered 0.872 and α's 0.893 on 6 single-candidate contexts
#: (6 binary items), and every label CI covered >= 0.93 from 10 contexts on, at every m.
MIN_CONTEXTS_LABELS = 10
#: Items below which a paired comparison shows no CI of Δρ or Δτ (the verdict, from the exact
#: randomization test, still shows). In simulation (effect design, true Δρ = +0.2, 2,000 datasets
#: per cell; docs/calibration.md) the expanded percentile CI of Δρ covered 0.890 ± 0.007 on 6
#: single-candidate contexts (``--no-floor --parts effect --contexts 6 --candidates 1``; 6 items:
#: a resample of 6 items is mostly ties for a rank coefficient) and 0.928 ± 0.006 on 7; with 4 or
#: more candidates per context it covered >= 0.97 from 6 contexts on. Δr's CI covered 0.952 on 6 items.
MIN_ITEMS_RANK_DELTA_CI = 7


def too_few_contexts(n_units: int, purpose: str = "to decide", minimum: int | None = None) -> str | None:
    """The user-facing reason no CI or verdict is shown, or None when there are enough contexts.
    ``minimum`` defaults to ``MIN_CONTEXTS`` (read at call time)."""
    needed = MIN_CONTEXTS if minimum is None else minimum
    if n_units >= needed:
        return None
    return f"too few contexts {purpose}: {n_units} (at least {needed} are needed)"


def too_few_items_for_rank_delta_ci(n_items: int) -> str | None:
    """Why a paired comparison shows no CI of Δρ or Δτ (too few items), or None."""
    if n_items >= MIN_ITEMS_RANK_DELTA_CI:
        return None
    return f"too few items for a CI of a rank correlation's difference: {n_items}, " \
           f"at least {MIN_ITEMS_RANK_DELTA_CI} are needed"


def expanded_tail(confidence: float, n_units: int) -> float:
    """The lower tail probability at which the expanded percentile interval is read."""
    from scipy.stats import norm, t

    alpha = 1.0 - confidence
    if n_units < 2:
        return alpha / 2.0
    z = math.sqrt(n_units / (n_units - 1.0)) * float(t.ppf(1.0 - alpha / 2.0, n_units - 1))
    return float(norm.sf(z))
