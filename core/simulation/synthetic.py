"""Synthetic judged datasets whose true agreement with the humans is known.

The model (all draws seeded, many datasets at once):

* latent quality of candidate j in context i: q = sqrt(s) c_i + sqrt(1 - s) e_ij, with
  c, e standard normal, so q has variance 1 and a share ``context_share`` of it is
  shared by the candidates of one context (they are not independent items);
* each of ``n_annotators`` annotators sees q plus normal noise of sd ``annotator_noise``,
  optionally rounded onto a 1..``rating_points`` scale; the pooled human label is
  their mean (what dialjudge correlates with);
* judge A and judge B score q plus normal error. The error variance is set so that
  the judge's *population* Spearman correlation with the pooled human label is
  ``agreement`` for A and ``agreement + delta`` for B; ``judge_context_share`` of the
  error is shared within a context (a judge that likes some conversations), and the
  two judges' errors correlate by ``error_correlation``.

Population values ("the truth") are exact for continuous labels: (judge, pooled
label) is bivariate normal, so r = 2 sin(pi rho_s / 6) and tau = (2 / pi) asin(r)
(Kendall 1948; Pearson 1907 for Spearman). With rounded labels they are computed
once per design on a large sample (``TRUTH_SAMPLE`` candidates). With ``delta = 0``
A and B have the same distribution, so every true difference is exactly 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

METHODS = ("pearson", "spearman", "kendall")
#: Candidates drawn to compute the truth of a design with rounded labels (Monte-Carlo error ~ 0.002).
TRUTH_SAMPLE = 400_000


@dataclass(frozen=True)
class SimulationDesign:
    """One cell of a simulation: the shape of the data and the truth to recover."""

    n_contexts: int
    n_candidates: int = 1
    n_annotators: int = 3
    #: sd of one annotator's noise, in units of the latent quality's sd.
    annotator_noise: float = 0.6
    #: None: continuous labels; else annotators answer on 1..rating_points (rounded).
    rating_points: int | None = None
    #: Share of the latent quality's variance shared by the candidates of a context.
    context_share: float = 0.3
    #: Judge A's population Spearman correlation with the pooled human label.
    agreement: float = 0.5
    #: Judge B's minus judge A's population Spearman correlation (the true Δρ).
    delta: float = 0.0
    #: Share of each judge's error shared within a context.
    judge_context_share: float = 0.3
    #: Correlation of judge A's and judge B's errors (two prompts of one model are alike).
    error_correlation: float = 0.5

    def __post_init__(self) -> None:
        if self.n_contexts < 1 or self.n_candidates < 1 or self.n_annotators < 1:
            raise ValueError("n_contexts, n_candidates and n_annotators must be at least 1")
        for name in ("context_share", "judge_context_share", "error_correlation"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, not {value}")
        if self.rating_points is not None and self.rating_points < 2:
            raise ValueError(f"rating_points must be at least 2, not {self.rating_points}")
        ceiling = self.ceiling
        for name, value in (("agreement", self.agreement), ("agreement + delta", self.agreement + self.delta)):
            if not 0.0 < value < ceiling:
                raise ValueError(f"{name} = {value:.3f}: a judge's Spearman correlation with the pooled label "
                                 f"must lie in (0, {ceiling:.3f}), the correlation of the latent quality with it")

    @property
    def n_items(self) -> int:
        return self.n_contexts * self.n_candidates

    @property
    def label_noise_variance(self) -> float:
        return self.annotator_noise ** 2 / self.n_annotators

    @property
    def ceiling(self) -> float:
        """Spearman correlation of the latent quality itself with the pooled (continuous) label."""
        return _spearman_of_pearson(1.0 / math.sqrt(1.0 + self.label_noise_variance))

    def judge_error_sd(self, spearman: float) -> float:
        """The judge error sd that gives this population Spearman correlation with the pooled label."""
        r = 2.0 * math.sin(math.pi * spearman / 6.0)
        return math.sqrt(1.0 / (r * r * (1.0 + self.label_noise_variance)) - 1.0)

    def truth(self) -> dict[str, tuple[float, float]]:
        """Population (judge A, judge B) correlation with the pooled label, per coefficient."""
        if self.rating_points is None:
            out: dict[str, list[float]] = {}
            for spearman in (self.agreement, self.agreement + self.delta):
                r = 2.0 * math.sin(math.pi * spearman / 6.0)
                out.setdefault("pearson", []).append(r)
                out.setdefault("spearman", []).append(spearman)
                out.setdefault("kendall", []).append(2.0 / math.pi * math.asin(r))
            return {m: (v[0], v[1]) for m, v in out.items()}
        return _sampled_truth(replace(self, n_contexts=1, n_candidates=1))

    def true_delta(self, method: str) -> float:
        if self.delta == 0.0:
            return 0.0  # A and B are identically distributed: exactly 0, not a sampled ~0
        a, b = self.truth()[method]
        return b - a


@dataclass(frozen=True)
class SimulatedBatch:
    """``n_datasets`` datasets of one design: rows are datasets, columns items (context-major)."""

    design: SimulationDesign
    human: np.ndarray
    judge_a: np.ndarray
    judge_b: np.ndarray
    #: Context index of every item column (0..k-1, each repeated m times).
    groups: np.ndarray
    #: Each annotator's rating (n_datasets, n_items, n_annotators), for agreement statistics.
    ratings: np.ndarray
    #: The latent quality (n_datasets, n_items).
    quality: np.ndarray

    @property
    def n_datasets(self) -> int:
        return int(self.human.shape[0])

    def dataset(self, index: int) -> tuple[dict[str, float], dict[str, float], dict[str, float], dict[str, int]]:
        """One dataset as the mappings dialjudge's statistics take: judge A's scores, judge B's,
        the pooled human labels and each item's context, keyed by item id ("c3-1")."""
        ids = self.item_ids
        return (dict(zip(ids, self.judge_a[index].tolist())), dict(zip(ids, self.judge_b[index].tolist())),
                dict(zip(ids, self.human[index].tolist())), dict(zip(ids, self.groups.tolist())))

    @property
    def item_ids(self) -> list[str]:
        m = self.design.n_candidates
        return [f"c{g}-{j % m}" for j, g in enumerate(self.groups.tolist())]


def draw_ratings(rng: np.random.Generator, design: SimulationDesign, n_datasets: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each dataset's true quality per item, its annotators' ratings and their mean, drawn in this order
    from ``rng`` (the simulations that share it draw the same numbers from the same seed)."""
    d, k, m = n_datasets, design.n_contexts, design.n_candidates
    context = rng.standard_normal((d, k, 1))
    quality = (math.sqrt(design.context_share) * context
               + math.sqrt(1.0 - design.context_share) * rng.standard_normal((d, k, m))).reshape(d, k * m)
    ratings = quality[:, :, None] + design.annotator_noise * rng.standard_normal((d, k * m, design.n_annotators))
    if design.rating_points is not None:
        ratings = _rounded(ratings, design.rating_points)
    return quality, ratings, ratings.mean(axis=2)


def simulate(design: SimulationDesign, n_datasets: int, seed: int) -> SimulatedBatch:
    """Draw ``n_datasets`` independent datasets of ``design``."""
    rng = np.random.default_rng(seed)
    d, k, m = n_datasets, design.n_contexts, design.n_candidates
    quality, ratings, human = draw_ratings(rng, design, d)
    shared = _judge_errors(rng, d, k, m, design.judge_context_share)
    error_a, error_b = _judge_errors(rng, d, k, m, design.judge_context_share), \
        _judge_errors(rng, d, k, m, design.judge_context_share)
    rho = design.error_correlation
    error_a = math.sqrt(rho) * shared + math.sqrt(1.0 - rho) * error_a
    error_b = math.sqrt(rho) * shared + math.sqrt(1.0 - rho) * error_b
    judge_a = quality + design.judge_error_sd(design.agreement) * error_a
    judge_b = quality + design.judge_error_sd(design.agreement + design.delta) * error_b
    groups = np.repeat(np.arange(k), m)
    return SimulatedBatch(design, human, judge_a, judge_b, groups, ratings, quality)


def _judge_errors(rng: np.random.Generator, d: int, k: int, m: int, share: float) -> np.ndarray:
    """Unit-variance errors, a share of whose variance is common to a context."""
    common = rng.standard_normal((d, k, 1))
    own = rng.standard_normal((d, k, m))
    return (math.sqrt(share) * common + math.sqrt(1.0 - share) * own).reshape(d, k * m)


def _rounded(values: np.ndarray, points: int) -> np.ndarray:
    """A 1..points scale centred on the latent mean, about 4 sd wide."""
    middle, step = (points + 1) / 2.0, (points - 1) / 4.0
    return np.clip(np.rint(middle + step * values), 1, points)


def _spearman_of_pearson(r: float) -> float:
    return 6.0 / math.pi * math.asin(r / 2.0)


@lru_cache(maxsize=64)
def _sampled_truth(design: SimulationDesign) -> dict[str, tuple[float, float]]:
    from scipy import stats

    batch = simulate(replace(design, n_contexts=TRUTH_SAMPLE), 1, seed=20261124)
    y = batch.human[0]
    out = {}
    for method, fn in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
        out[method] = (float(fn(batch.judge_a[0], y).statistic), float(fn(batch.judge_b[0], y).statistic))
    return out
