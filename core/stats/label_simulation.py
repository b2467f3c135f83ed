"""Simulated judges of known quality, to check the few-labels estimates against a known truth.

Each replicate draws a population sample: ``n_labelled`` items whose human label
is known and ``n_unlabelled`` items that only the judge scored. Graded labels
are a latent quality on a 1-5-like scale; the judge's score correlates with it
at ``judge_corr`` and may be shifted by ``judge_bias`` (a biased judge). Binary
labels pass with probability ``pass_rate``; the judge agrees with a pass with
probability ``sensitivity`` and with a fail with ``specificity``. The truth is
the population mean, so the share of replicates whose interval holds it is the
interval's coverage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .ppi import Estimate, labels_only_mean, ppi_mean
from .rogan_gladen import rogan_gladen

#: Population mean and spread of the simulated graded labels.
GRADED_MEAN = 3.0
GRADED_SD = 0.8


@dataclass(frozen=True)
class GradedJudge:
    judge_corr: float = 0.7
    judge_bias: float = 0.0

    def draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(human labels, judge scores) of ``n`` items."""
        latent = rng.standard_normal(n)
        noise = rng.standard_normal(n)
        labels = GRADED_MEAN + GRADED_SD * latent
        judged = (GRADED_MEAN + self.judge_bias
                  + GRADED_SD * (self.judge_corr * latent + math.sqrt(1 - self.judge_corr ** 2) * noise))
        return labels, judged

    truth: float = GRADED_MEAN


@dataclass(frozen=True)
class BinaryJudge:
    pass_rate: float = 0.6
    sensitivity: float = 0.85
    specificity: float = 0.8

    def draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        labels = (rng.random(n) < self.pass_rate).astype(float)
        agree = np.where(labels == 1, rng.random(n) < self.sensitivity, rng.random(n) < self.specificity)
        judged = np.where(agree, labels, 1 - labels)
        return labels, judged

    @property
    def truth(self) -> float:
        return self.pass_rate


Judge = GradedJudge | BinaryJudge
Estimator = Callable[[np.ndarray, np.ndarray, np.ndarray, int], Estimate | None]


def labels_only(y: np.ndarray, f: np.ndarray, u: np.ndarray, seed: int) -> Estimate:
    return labels_only_mean(y)


def ppi(y: np.ndarray, f: np.ndarray, u: np.ndarray, seed: int) -> Estimate:
    return ppi_mean(y, f, u)


def rogan_gladen_estimate(y: np.ndarray, f: np.ndarray, u: np.ndarray, seed: int) -> Estimate | None:
    return rogan_gladen(y, f, u, n_boot=1000, seed=seed).estimate


ESTIMATORS: dict[str, Estimator] = {"labels only": labels_only, "PPI++": ppi, "Rogan–Gladen": rogan_gladen_estimate}


@dataclass(frozen=True)
class CoverageResult:
    estimator: str
    replicates: int
    #: Replicates where the estimator gave no interval (e.g. a judge no better than chance).
    undefined: int
    coverage: float
    mean_width: float
    coverage_se: float

    def to_dict(self) -> dict[str, float | int | str]:
        return {"estimator": self.estimator, "replicates": self.replicates, "undefined": self.undefined,
                "coverage": self.coverage, "coverage_se": self.coverage_se, "mean_width": self.mean_width}


def coverage(judge: Judge, estimators: list[str], *, n_labelled: int, n_unlabelled: int, replicates: int,
             seed: int = 0) -> list[CoverageResult]:
    """Share of replicates whose interval holds the truth, and the mean width, per estimator."""
    rng = np.random.default_rng(seed)
    hits: dict[str, list[bool]] = {name: [] for name in estimators}
    widths: dict[str, list[float]] = {name: [] for name in estimators}
    undefined = dict.fromkeys(estimators, 0)
    for rep in range(replicates):
        y, f = judge.draw(rng, n_labelled)
        _, u = judge.draw(rng, n_unlabelled)
        for name in estimators:
            est = ESTIMATORS[name](y, f, u, seed + rep)
            if est is None:
                undefined[name] += 1
                continue
            hits[name].append(est.covers(judge.truth))
            widths[name].append(est.width)
    out = []
    for name in estimators:
        k = len(hits[name])
        cov = float(np.mean(hits[name])) if k else math.nan
        out.append(CoverageResult(name, replicates, undefined[name], cov,
                                  float(np.mean(widths[name])) if k else math.nan,
                                  math.sqrt(cov * (1 - cov) / k) if k else math.nan))
    return out
