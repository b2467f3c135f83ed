"""Where the judge can be trusted alone: a confidence threshold with a guarantee.

From Jung, Brahman and Choi, "Trust or Escalate: LLM Judges with Provable
Guarantees for Human Agreement" (2024). On labelled items we know the judge's
confidence ``c_i`` (in [0, 1]) and whether it agreed with the humans. For a
threshold ``t`` the risk is ``R(t) = P(judge disagrees | c >= t)``. We want a
threshold ``t^`` such that, with probability at least ``1 - delta`` over the
labelled sample, ``R(t^) <= alpha``: on the items it covers the judge agrees with
the humans with probability at least ``1 - alpha``; the rest go to people.

Fixed-sequence testing: thresholds are tested from the strictest down, on a grid
fixed before the data are seen (``THRESHOLDS``). At each ``t`` the null
``R(t) > alpha`` is tested with the exact binomial p-value
``P(Binomial(n_t, alpha) <= errors_t)`` over the ``n_t`` labelled items with
``c >= t``; testing stops at the first threshold whose null is not rejected at
level ``delta``. Because the order is fixed, no multiplicity correction is
needed (each test spends the whole ``delta``). The chosen threshold is the last
one rejected; if even the strictest is not rejected, no threshold is given.
Thresholds covering too few labelled items for any test to reject, even with no
error (``n_t < log(delta) / log(1 - alpha)``), are passed over: which they are
depends on the confidences alone, not on the agreements the tests look at, so
conditionally on the confidences the sequence is still fixed in advance.
and testing stops below the lowest labelled confidence, where a lower threshold
would cover items no label speaks for; stopping earlier than the full sequence
only rejects less, so the guarantee holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

#: Candidate thresholds, strictest first: 1.00, 0.99, ..., 0.00.
THRESHOLDS = tuple(round(1.0 - k / 100, 2) for k in range(101))
DEFAULT_ALPHA = 0.1
DEFAULT_DELTA = 0.1


@dataclass(frozen=True)
class SelectiveThreshold:
    alpha: float
    delta: float
    #: The lowest threshold whose risk bound held; None when none did.
    threshold: float | None
    #: Labelled items at or above the threshold, and how many of them the judge got wrong.
    n_covered_labelled: int
    errors: int
    #: Share of the items scored (labelled or not, when given) at or above the threshold.
    coverage: float
    n_labelled: int
    reason: str | None = None

    @property
    def agreement(self) -> float:
        """Observed agreement on the covered labelled items."""
        return 1.0 - self.errors / self.n_covered_labelled if self.n_covered_labelled else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "delta": self.delta, "threshold": self.threshold,
                "n_covered_labelled": self.n_covered_labelled, "errors": self.errors,
                "observed_agreement": None if math.isnan(self.agreement) else self.agreement,
                "coverage": self.coverage, "n_labelled": self.n_labelled, "reason": self.reason}


def risk_p_value(n: int, errors: int, alpha: float) -> float:
    """Exact p-value of H0: risk > alpha, given ``errors`` disagreements among ``n`` items."""
    if n == 0:
        return 1.0
    return float(stats.binom.cdf(errors, n, alpha))


def selective_threshold(confidence: ArrayLike, agrees: ArrayLike, *, alpha: float = DEFAULT_ALPHA,
                        delta: float = DEFAULT_DELTA, all_confidence: ArrayLike | None = None
                        ) -> SelectiveThreshold:
    """The fixed-sequence threshold of Trust or Escalate.

    ``confidence`` and ``agrees`` are for the labelled items; ``all_confidence``
    (default: the labelled ones) is what the coverage share is measured on.
    """
    if not 0.0 < alpha < 1.0 or not 0.0 < delta < 1.0:
        raise ValueError("alpha and delta must be in (0, 1)")
    c = np.asarray(confidence, dtype=float)
    ok = np.asarray(agrees, dtype=bool)
    if c.shape != ok.shape:
        raise ValueError(f"{c.size} confidences but {ok.size} agreement flags")
    if np.any((c < 0) | (c > 1)) or not np.all(np.isfinite(c)):
        raise ValueError("confidences must lie in [0, 1]")
    pool = c if all_confidence is None else np.asarray(all_confidence, dtype=float)
    chosen: float | None = None
    covered, errors = 0, 0
    lowest = float(c.min()) if c.size else 1.0
    fewest = math.ceil(math.log(delta) / math.log(1.0 - alpha))
    for t in THRESHOLDS:
        if t < lowest:
            break  # below every labelled confidence the test would only extrapolate; stopping early stays valid
        above = c >= t
        n_t = int(above.sum())
        e_t = int((~ok[above]).sum())
        if n_t < fewest:
            continue  # even with no error this test could not reject: not yet a test, not a failed one
        if risk_p_value(n_t, e_t, alpha) > delta:
            break
        chosen, covered, errors = t, n_t, e_t
    if chosen is None:
        return SelectiveThreshold(alpha, delta, None, 0, 0, 0.0, int(c.size),
                                  f"no confidence threshold keeps disagreement at or below {alpha:.0%} with "
                                  f"{1 - delta:.0%} confidence on these {c.size} labelled items")
    share = float(np.mean(pool >= chosen)) if pool.size else math.nan
    return SelectiveThreshold(alpha, delta, chosen, covered, errors, share, int(c.size))


def answer_confidence(distribution: dict[str, float] | None) -> float | None:
    """The judge's confidence in its answer: the probability of its most likely answer."""
    if not distribution:
        return None
    total = sum(distribution.values())
    return max(distribution.values()) / total if total > 0 else None
