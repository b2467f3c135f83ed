"""Rates over simulated datasets, with their Monte-Carlo error.

A coverage or false-verdict rate measured on D simulated datasets is itself an
estimate: its binomial standard error sqrt(p (1 - p) / D) says how far it can
stray from the true rate by chance, so a check allows that much (``z`` of them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Rate:
    """``hits`` of ``trials`` (datasets where the statistic was shown at all)."""

    hits: int
    trials: int

    @property
    def value(self) -> float:
        return self.hits / self.trials if self.trials else float("nan")

    def mc_error(self, at: float | None = None) -> float:
        """Binomial standard error of the rate, at the rate ``at`` (default: the measured one)."""
        p = self.value if at is None else at
        return math.sqrt(p * (1.0 - p) / self.trials) if self.trials else float("nan")

    def exceeds(self, nominal: float, z: float = 2.0) -> bool:
        """Above ``nominal`` by more than z Monte-Carlo errors (computed at the nominal rate)."""
        return self.value > nominal + z * self.mc_error(nominal)

    def falls_below(self, floor: float, z: float = 2.0) -> bool:
        return self.value < floor - z * self.mc_error(floor)

    def __str__(self) -> str:
        return f"{self.value:.3f} ± {self.mc_error():.3f} ({self.hits}/{self.trials})"


def coverage_rate(low: np.ndarray, high: np.ndarray, truth: float | np.ndarray) -> Rate:
    """How often [low, high] holds the truth, over the datasets where an interval was given (not NaN)."""
    shown = np.isfinite(low) & np.isfinite(high)
    truth = np.broadcast_to(np.asarray(truth, dtype=float), low.shape)
    held = shown & (low <= truth) & (truth <= high)
    return Rate(int(held.sum()), int(shown.sum()))


def false_verdict_rate(decided: np.ndarray, shown: np.ndarray | None = None) -> Rate:
    """How often a verdict claimed a difference that does not exist (the truth is 0), over the
    datasets where a verdict was given at all (``shown``; default: all)."""
    decided = np.asarray(decided, dtype=bool)
    shown = np.ones_like(decided) if shown is None else np.asarray(shown, dtype=bool)
    return Rate(int((decided & shown).sum()), int(shown.sum()))
