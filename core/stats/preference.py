"""A judge's verdicts on pre-paired replies against the humans' votes.

Inputs are plain data: per pair, the humans' votes (``"A"``, ``"B"`` or ``"tie"``), and the judge's
verdict in each order it was asked (reply A shown first, reply B shown first), named by reply, with the
margin p(A) − p(B) where the answer came with probabilities.

Definitions (every share says what its denominator is):

* **human label** of a pair: the most frequent of its votes. When two or more labels share the top
  count (one vote A, one vote B), the humans are split and the label is a tie; :class:`HumanMajority`
  says so (``split``), and reports count such pairs apart from ties the humans voted for.
* **human–human agreement** (as Zheng et al. report it for MT-Bench): the chance that two different
  votes on the same pair, drawn at random, agree; averaged over the pairs with at least two votes.
  Without ties: tie votes are dropped first (pairs left with fewer than two votes drop out). κ beside it
  is (p_o − p_e) / (1 − p_e), p_e = Σ q_k² with q_k the share of label k among those votes: Fleiss' κ,
  exactly when every pair has the same number of votes.
* **judge verdict** of a pair: its verdict when asked in one order; asked in both, the reply it chose
  both times, else a tie (the conservative rule of Zheng et al.: a win that does not survive the swap
  is no win). The **margin** is the mean over the asked orders of p(A) − p(B) (±1 or 0 for a generated
  verdict).
* **agreement, ties counted**: of the pairs with a judge verdict, the share where it equals the human
  label among {A, B, tie}; Cohen's κ over those three labels. **Ties excluded**: the same over the pairs
  where neither the humans nor the judge say tie, κ over {A, B}. Every pair left out is counted by reason.
* **tie-calibrated accuracy** (Deutsch, Foster and Freitag, EMNLP 2023, "Ties Matter"): the judge says
  tie when |margin| ≤ ε; ε is chosen on one half of the pairs (the one that maximises the accuracy with
  ties counted there; the smallest such ε) and the accuracy is measured on the other half, then the
  halves swap; the figure is the held-out correct pairs over all of them.
* **flip under swap**: of the pairs asked in both orders with a verdict each time, the share whose
  verdict (by reply) differs between the orders. **First-position wins**: of the decisive verdicts
  over every asked order, the share won by the reply shown first.
* **pointwise against pairwise**: a pointwise run rates each reply alone; its implied verdict is the
  reply with the higher score (a difference within a set band is a tie), its margin the difference.
  :func:`compare_agreement` sets two ways of judging side by side on the same pairs (ties counted):
  the difference in agreement with a paired bootstrap interval, and an exact McNemar test on the pairs
  only one of them gets right (it treats pairs as independent; the interval does not need to).
* **longer-reply wins**: of the pairs with a decisive verdict and replies of different length (in
  words), the share where the longer reply won; for the judge (its pair verdict) and the humans (their
  label) alike.

Intervals are seeded percentile bootstraps over pairs, or over prompts (whole) when some prompt has
several pairs, since pairs of one prompt are not independent.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Hashable, Sequence

import numpy as np

from .bootstrap import percentile_interval, resample
from .categorical import cohen_kappa

A, B, TIE = "A", "B", "tie"
LABELS = (A, B, TIE)
DECISIVE = (A, B)

#: Reasons a pair is left out of an agreement figure, in the order they are checked.
NO_VERDICT = "no judge verdict"
HUMANS_TIE = "humans tie"
JUDGE_TIE = "judge tie"


@dataclass(frozen=True)
class HumanMajority:
    label: str | None
    #: The top count is shared by two or more labels: the label is a tie by rule, not by vote.
    split: bool
    votes: int


def human_majority(votes: Sequence[str | None]) -> HumanMajority:
    """The pair's human label (see the module doc)."""
    present = [v for v in votes if v is not None]
    if not present:
        return HumanMajority(None, False, 0)
    counts = Counter(present)
    top = max(counts.values())
    modes = [label for label, c in counts.items() if c == top]
    if len(modes) > 1:
        return HumanMajority(TIE, True, len(present))
    return HumanMajority(modes[0], False, len(present))


@dataclass(frozen=True)
class HumanAgreement:
    #: Pairs with at least two votes (of the kind counted).
    pairs: int
    #: Unordered pairs of votes on the same pair, over all those pairs.
    vote_pairs: int
    percent: float | None
    kappa: float | None


def human_agreement(votes_per_pair: Sequence[Sequence[str]], *, ties: bool = True) -> HumanAgreement:
    """Human–human agreement over the pairs with several votes (see the module doc)."""
    shares: list[float] = []
    pooled: Counter[str] = Counter()
    vote_pairs = 0
    for votes in votes_per_pair:
        kept = [v for v in votes if v is not None and (ties or v != TIE)]
        n = len(kept)
        if n < 2:
            continue
        counts = Counter(kept)
        agreeing = sum(c * (c - 1) // 2 for c in counts.values())
        total = n * (n - 1) // 2
        shares.append(agreeing / total)
        vote_pairs += total
        pooled.update(kept)
    if not shares:
        return HumanAgreement(0, 0, None, None)
    observed = math.fsum(shares) / len(shares)
    n_votes = sum(pooled.values())
    expected = math.fsum((c / n_votes) ** 2 for c in pooled.values())
    kappa = None if expected >= 1.0 else (observed - expected) / (1.0 - expected)
    return HumanAgreement(len(shares), vote_pairs, observed, kappa)


@dataclass(frozen=True)
class OrderVerdict:
    """The judge's answer when asked in one order, named by reply (None: the judgment failed)."""

    verdict: str | None
    #: p(A) − p(B) from the answer's probabilities; None for a generated verdict.
    margin: float | None = None

    @property
    def signed(self) -> float | None:
        """The margin, or ±1 / 0 for a generated verdict."""
        if self.verdict is None:
            return None
        if self.margin is not None:
            return self.margin
        return {A: 1.0, B: -1.0, TIE: 0.0}[self.verdict]


@dataclass(frozen=True)
class JudgedPair:
    pair: str
    #: The prompt the pair answers: pairs of one prompt are resampled together.
    prompt: Hashable
    human: str | None
    length_a: int
    length_b: int
    #: The judge when reply A was shown first / reply B was shown first (None: not asked).
    a_first: OrderVerdict | None = None
    b_first: OrderVerdict | None = None
    category: str | None = None
    human_split: bool = False
    #: A verdict not asked in an order: a pointwise run's implied preference (the higher score wins).
    direct: OrderVerdict | None = None

    @property
    def orders(self) -> list[OrderVerdict]:
        return [o for o in (self.a_first, self.b_first) if o is not None]

    def _answers(self) -> list[OrderVerdict]:
        return self.orders or ([self.direct] if self.direct is not None else [])

    @property
    def verdict(self) -> str | None:
        """The judge's pair verdict (see the module doc); None without a valid verdict."""
        valid = [o.verdict for o in self._answers() if o.verdict is not None]
        if not valid:
            return None
        if len(valid) == 1:
            return valid[0]
        return valid[0] if valid[0] == valid[1] else TIE

    @property
    def margin(self) -> float | None:
        values = [s for s in (o.signed for o in self._answers()) if s is not None]
        return math.fsum(values) / len(values) if values else None

    @property
    def flipped(self) -> bool | None:
        """Whether the verdict changes with the order; None unless both orders have a verdict."""
        if self.a_first is None or self.b_first is None:
            return None
        if self.a_first.verdict is None or self.b_first.verdict is None:
            return None
        return self.a_first.verdict != self.b_first.verdict


@dataclass(frozen=True)
class Agreement:
    """Agreement of a judge's pair verdicts with the human labels."""

    ties: bool
    n: int
    agree: int
    kappa: float | None
    #: Percentile bootstrap interval of the agreement share and of κ (None without resamples).
    ci: tuple[float, float] | None
    kappa_ci: tuple[float, float] | None
    #: Resampling units: "pairs", or "prompts" when some prompt has several pairs; and how many.
    unit: str
    units: int
    excluded: dict[str, int] = field(default_factory=dict)

    @property
    def share(self) -> float | None:
        return self.agree / self.n if self.n else None


def agreement(pairs: Sequence[JudgedPair], *, ties: bool, n_boot: int = 1000, seed: int = 0,
              confidence: float = 0.95) -> Agreement:
    """Judge against the human labels, with ties counted (``ties=True``) or excluded."""
    excluded: Counter[str] = Counter()
    kept: list[JudgedPair] = []
    for p in pairs:
        if p.human is None:
            excluded["no human vote"] += 1
        elif p.verdict is None:
            excluded[NO_VERDICT] += 1
        elif not ties and p.human == TIE:
            excluded[HUMANS_TIE] += 1
        elif not ties and p.verdict == TIE:
            excluded[JUDGE_TIE] += 1
        else:
            kept.append(p)
    labels = LABELS if ties else DECISIVE
    human = [p.human for p in kept]
    judge = [p.verdict for p in kept]
    agree = sum(1 for h, j in zip(human, judge) if h == j)
    kappa = _finite(cohen_kappa(human, judge, categories=labels)) if kept else None
    by_prompt = _clustered(kept)
    unit = "prompts" if by_prompt else "pairs"
    units = len({p.prompt for p in kept}) if by_prompt else len(kept)
    ci = kappa_ci = None
    if kept and n_boot > 0:
        weights = resample(len(kept), [p.prompt for p in kept] if by_prompt else None, n_boot=n_boot,
                           seed=seed).item_weights
        shares, kappas = _resampled(weights, human, judge, labels)
        lo, hi, used = percentile_interval(shares, confidence)
        ci = (lo, hi) if used else None
        lo, hi, used = percentile_interval(kappas, confidence)
        kappa_ci = (lo, hi) if used else None
    return Agreement(ties, len(kept), agree, kappa, ci, kappa_ci, unit, units, dict(excluded))


def _clustered(pairs: Sequence[JudgedPair]) -> bool:
    counts = Counter(p.prompt for p in pairs)
    return any(c > 1 for c in counts.values())


def _resampled(weights: np.ndarray, human: Sequence[str | None], judge: Sequence[str | None],
               labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Agreement share and Cohen's κ of every resample, from weighted confusion tables."""
    k = len(labels)
    index = {label: i for i, label in enumerate(labels)}
    cell = np.array([index[h] * k + index[j] for h, j in zip(human, judge)])  # type: ignore[index]
    onehot = np.zeros((len(cell), k * k))
    onehot[np.arange(len(cell)), cell] = 1.0
    tables = (weights @ onehot).reshape(-1, k, k)
    totals = tables.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        tables = tables / totals[:, None, None]
        observed = np.trace(tables, axis1=1, axis2=2)
        expected = np.einsum("bi,bi->b", tables.sum(axis=2), tables.sum(axis=1))
        kappas = np.where(expected < 1.0, (observed - expected) / (1.0 - expected), np.nan)
    return observed, kappas


@dataclass(frozen=True)
class TieFold:
    epsilon: float
    tuned_on: int
    tested_on: int
    correct: int
    #: The pairs the band was chosen on.
    tuned: tuple[str, ...] = ()


@dataclass(frozen=True)
class TieCalibration:
    n: int
    correct: int
    folds: tuple[TieFold, ...]
    #: Pairs left out: no judge verdict (no margin) or no human label.
    excluded: int

    @property
    def share(self) -> float | None:
        return self.correct / self.n if self.n else None


def label_with_band(margin: float, epsilon: float) -> str:
    """The verdict a margin gives with tie band ε."""
    if abs(margin) <= epsilon or margin == 0:
        return TIE
    return A if margin > 0 else B


def best_epsilon(margins: Sequence[float], human: Sequence[str]) -> float:
    """The ε that maximises the accuracy with ties counted (the smallest of equals)."""
    candidates = sorted({0.0, *(abs(m) for m in margins)})
    best, best_correct = 0.0, -1
    for eps in candidates:
        correct = sum(1 for m, h in zip(margins, human) if label_with_band(m, eps) == h)
        if correct > best_correct:
            best, best_correct = eps, correct
    return best


def tie_calibrated_accuracy(pairs: Sequence[JudgedPair], *, seed: int = 0) -> TieCalibration:
    """Two-fold tie calibration (see the module doc): halves are drawn with ``seed`` over prompts when
    some prompt has several pairs, else over pairs."""
    usable = [p for p in pairs if p.human is not None and p.margin is not None]
    excluded = len(pairs) - len(usable)
    if len(usable) < 2:
        return TieCalibration(0, 0, (), excluded)
    by_prompt = _clustered(usable)
    units = list(dict.fromkeys(p.prompt if by_prompt else p.pair for p in usable))
    random.Random(seed).shuffle(units)
    first_half = set(units[: len(units) // 2])
    halves = ([p for p in usable if (p.prompt if by_prompt else p.pair) in first_half],
              [p for p in usable if (p.prompt if by_prompt else p.pair) not in first_half])
    folds = []
    for tune, test in ((halves[0], halves[1]), (halves[1], halves[0])):
        tuned = [(float(p.margin or 0.0), str(p.human)) for p in tune]
        tested = [(float(p.margin or 0.0), str(p.human)) for p in test]
        eps = best_epsilon([m for m, _ in tuned], [h for _, h in tuned])
        correct = sum(1 for m, h in tested if label_with_band(m, eps) == h)
        folds.append(TieFold(eps, len(tune), len(test), correct, tuple(p.pair for p in tune)))
    return TieCalibration(sum(f.tested_on for f in folds), sum(f.correct for f in folds), tuple(folds), excluded)


@dataclass(frozen=True)
class OrderStats:
    #: Pairs asked in both orders with a verdict each time, and how many of them flip.
    both_orders: int
    flips: int
    #: Decisive verdicts over every asked order, and how many the reply shown first won.
    decisive: int
    first_wins: int
    #: Pairs asked in one order only.
    one_order: int


def order_stats(pairs: Sequence[JudgedPair]) -> OrderStats:
    both = flips = decisive = first = one = 0
    for p in pairs:
        flipped = p.flipped
        if flipped is not None:
            both += 1
            flips += int(flipped)
        if len(p.orders) == 1:
            one += 1
        for order, first_reply in ((p.a_first, A), (p.b_first, B)):
            if order is not None and order.verdict in DECISIVE:
                decisive += 1
                first += order.verdict == first_reply
    return OrderStats(both, flips, decisive, first, one)


@dataclass(frozen=True)
class LongerWins:
    n: int
    longer_wins: int

    @property
    def share(self) -> float | None:
        return self.longer_wins / self.n if self.n else None


def longer_wins(pairs: Sequence[JudgedPair], *, humans: bool) -> LongerWins:
    """Of the decisive pairs whose replies differ in length, how often the longer one won (the judge's
    pair verdict, or with ``humans`` the human label)."""
    n = wins = 0
    for p in pairs:
        label = p.human if humans else p.verdict
        if label not in DECISIVE or p.length_a == p.length_b:
            continue
        n += 1
        wins += (label == A) == (p.length_a > p.length_b)
    return LongerWins(n, wins)


@dataclass(frozen=True)
class PairedAgreement:
    """Two ways of judging the same pairs against the human labels (ties counted)."""

    n: int
    agree_x: int
    agree_y: int
    #: Pairs only x gets right, and only y.
    only_x: int
    only_y: int
    #: Agreement of x minus agreement of y, with its percentile bootstrap interval (pairs, or prompts).
    difference: float | None
    ci: tuple[float, float] | None
    #: Exact McNemar test on the pairs only one of them gets right (two-sided).
    p_value: float | None
    unit: str
    units: int
    #: Pairs left out: a verdict missing on either side, or no human label.
    excluded: int


def compare_agreement(x: Sequence[JudgedPair], y: Sequence[JudgedPair], *, n_boot: int = 1000, seed: int = 0,
                      confidence: float = 0.95) -> PairedAgreement:
    """x against y on the pairs both judged (matched by pair id), ties counted."""
    from scipy.stats import binomtest

    by_id = {p.pair: p for p in y}
    both = [(p, by_id[p.pair]) for p in x if p.pair in by_id and p.human is not None and p.verdict is not None
            and by_id[p.pair].verdict is not None]
    excluded = len({p.pair for p in x} | set(by_id)) - len(both)
    right_x = np.array([p.verdict == p.human for p, _ in both], dtype=float)
    right_y = np.array([q.verdict == p.human for p, q in both], dtype=float)
    only_x = int(((right_x == 1) & (right_y == 0)).sum())
    only_y = int(((right_x == 0) & (right_y == 1)).sum())
    kept = [p for p, _ in both]
    by_prompt = _clustered(kept)
    unit, units = ("prompts", len({p.prompt for p in kept})) if by_prompt else ("pairs", len(kept))
    if not both:
        return PairedAgreement(0, 0, 0, 0, 0, None, None, None, unit, 0, excluded)
    difference = float(right_x.mean() - right_y.mean())
    ci = None
    if n_boot > 0:
        weights = resample(len(kept), [p.prompt for p in kept] if by_prompt else None, n_boot=n_boot,
                           seed=seed).item_weights
        with np.errstate(invalid="ignore", divide="ignore"):
            diffs = (weights @ (right_x - right_y)) / weights.sum(axis=1)
        lo, hi, used = percentile_interval(diffs, confidence)
        ci = (lo, hi) if used else None
    discordant = only_x + only_y
    p_value = float(binomtest(only_x, discordant, 0.5).pvalue) if discordant else None
    return PairedAgreement(len(both), int(right_x.sum()), int(right_y.sum()), only_x, only_y, difference, ci,
                           p_value, unit, units, excluded)


def by_category(pairs: Sequence[JudgedPair], *, n_boot: int = 1000, seed: int = 0
                ) -> dict[str, tuple[Agreement, Agreement]]:
    """Per category (where the data names one): agreement with ties counted, then excluded."""
    groups: dict[str, list[JudgedPair]] = {}
    for p in pairs:
        if p.category is not None:
            groups.setdefault(p.category, []).append(p)
    return {name: (agreement(members, ties=True, n_boot=n_boot, seed=seed),
                   agreement(members, ties=False, n_boot=n_boot, seed=seed))
            for name, members in sorted(groups.items())}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


__all__ = ["A", "B", "TIE", "Agreement", "HumanAgreement", "HumanMajority", "JudgedPair", "LongerWins",
           "OrderStats", "OrderVerdict", "PairedAgreement", "TieCalibration", "TieFold", "agreement", "compare_agreement", "best_epsilon", "by_category",
           "human_agreement", "human_majority", "label_with_band", "longer_wins", "order_stats",
           "tie_calibrated_accuracy"]
