"""Statistics of pairwise verdicts: position bias, length preference, accuracy, per-candidate scores.

Inputs are plain data: one :class:`AskedVerdict` per asked order (which
candidate was shown first, which second, and the verdict in positions), the
humans' verdict per unordered pair (which candidate the pooled human rating
puts higher, or a tie), and each candidate's length.

Definitions (every share says what its denominator is):

* **position flips** ("position consistency" in issue 12's words): of the pairs
  judged in both orders with a valid verdict each time, the share whose
  verdict *changes with the order* (a different winner, or a winner one way
  and a tie the other). 0 = fully consistent; higher = more position-driven.
  :attr:`PositionStats.consistent_share` is its complement.
* **first-position win share**: first-position wins / decisive verdicts
  (ties left out). 0.5 = no preference for either position.
* **length preference**: of the decisive verdicts on two replies of different
  length (in words), the share won by the longer reply.
* **pairwise accuracy with ties counted**: of the asked orders with a judge
  verdict and a human verdict, the share where both name the same winner or
  both a tie; a human tie is matched only by a tie, so a judge that never says
  tie loses every human tie. Beside it, the accuracy on the human-decisive
  pairs alone.
* **win rate** of a candidate: (wins + ties / 2) / verdicts it took part in. A
  probability answer counts its expected point instead: p(first) + p(tie)/2 for
  the reply shown first, the rest for the other (so with both orders asked, a
  constant pull towards one position cancels out, as the hard verdicts cannot).
* **Bradley-Terry strength** of a candidate within its context: the maximum
  likelihood strengths of P(i beats j) = π_i / (π_i + π_j) (a tie counts half a
  win each way), by Hunter's MM algorithm. With ``prior > 0`` every candidate
  also plays ``prior`` virtual wins and ``prior`` virtual losses against a
  reference of strength 1, so the estimate exists when a candidate wins (or
  loses) all its comparisons or the sampled pairs leave a context
  disconnected; the score is π / (1 + π), the chance to beat that reference.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

VerdictName = Literal["first", "second", "tie"]

#: Virtual wins and losses each candidate plays against a reference of strength 1 (see the module doc).
DEFAULT_BT_PRIOR = 0.5


@dataclass(frozen=True)
class AskedVerdict:
    """One asked order's verdict, in positions (``None``: the judgment failed)."""

    context: str
    first: str
    second: str
    verdict: VerdictName | None
    #: A probability answer's expected share of the point for the first reply, p(first) + p(tie)/2;
    #: the per-candidate scores use it in place of the verdict (None: a generated verdict).
    first_share: float | None = None

    def shares(self) -> tuple[float, float] | None:
        """The point split (first, second) the per-candidate scores count; None without a verdict."""
        if self.verdict is None:
            return None
        if self.first_share is not None:
            return self.first_share, 1.0 - self.first_share
        return {"first": (1.0, 0.0), "second": (0.0, 1.0), "tie": (0.5, 0.5)}[self.verdict]

    @property
    def winner(self) -> str | None:
        """The candidate that won; None for a tie or no verdict."""
        if self.verdict == "first":
            return self.first
        if self.verdict == "second":
            return self.second
        return None

    @property
    def pair(self) -> frozenset[str]:
        return frozenset((self.first, self.second))


#: The humans' verdict on an unordered pair: the preferred candidate's id, or "tie".
HUMAN_TIE = "tie"


@dataclass(frozen=True)
class PositionStats:
    #: Asked orders with a valid verdict.
    verdicts: int
    first_wins: int
    second_wins: int
    ties: int
    #: Pairs judged in both orders with a valid verdict each time.
    both_orders: int
    #: Of those, pairs whose verdict changes with the order.
    flips: int

    @property
    def flip_share(self) -> float | None:
        """Share of pairs whose verdict flips with the order (lower is more consistent)."""
        return self.flips / self.both_orders if self.both_orders else None

    @property
    def consistent_share(self) -> float | None:
        return 1.0 - self.flips / self.both_orders if self.both_orders else None

    @property
    def first_win_share(self) -> float | None:
        """First-position wins among decisive verdicts (0.5: no position preference)."""
        decisive = self.first_wins + self.second_wins
        return self.first_wins / decisive if decisive else None

    @property
    def tie_share(self) -> float | None:
        return self.ties / self.verdicts if self.verdicts else None


@dataclass(frozen=True)
class LengthPreference:
    #: Decisive verdicts on two replies of different length.
    n: int
    longer_wins: int

    @property
    def share(self) -> float | None:
        """Share of those won by the longer reply (0.5: no length preference)."""
        return self.longer_wins / self.n if self.n else None


@dataclass(frozen=True)
class PairAccuracy:
    #: Asked orders with both a judge verdict and a human verdict.
    n: int
    correct: int
    #: The same over the asked orders whose humans named a winner.
    n_decisive: int
    correct_decisive: int
    human_ties: int
    judge_ties: int

    @property
    def accuracy(self) -> float | None:
        """Judge and humans agree (same winner, or both tie), ties counted."""
        return self.correct / self.n if self.n else None

    @property
    def decisive_accuracy(self) -> float | None:
        return self.correct_decisive / self.n_decisive if self.n_decisive else None


@dataclass(frozen=True)
class CandidateScores:
    """Per-candidate scores within their context; a candidate never compared has none."""

    win_rate: dict[str, float] = field(default_factory=dict)
    #: π / (1 + π) of the Bradley-Terry strength π (0.5: as strong as the reference).
    bt: dict[str, float] = field(default_factory=dict)
    #: log π, for showing strengths on their natural scale.
    bt_log_strength: dict[str, float] = field(default_factory=dict)


# --------------------------------------------------------------------------- position and length


def position_stats(verdicts: Sequence[AskedVerdict]) -> PositionStats:
    valid = [v for v in verdicts if v.verdict is not None]
    first = sum(1 for v in valid if v.verdict == "first")
    second = sum(1 for v in valid if v.verdict == "second")
    ties = sum(1 for v in valid if v.verdict == "tie")
    by_pair: dict[tuple[str, frozenset[str]], dict[tuple[str, str], AskedVerdict]] = {}
    for v in valid:
        by_pair.setdefault((v.context, v.pair), {})[(v.first, v.second)] = v
    both = flips = 0
    for orders in by_pair.values():
        if len(orders) < 2:
            continue
        (a, b), one = next(iter(orders.items()))
        other = orders.get((b, a))
        if other is None:
            continue
        both += 1
        if one.winner != other.winner:  # a tie has no winner: tie vs a win is a flip too
            flips += 1
    return PositionStats(len(valid), first, second, ties, both, flips)


def length_preference(verdicts: Sequence[AskedVerdict], lengths: Mapping[str, int]) -> LengthPreference:
    n = longer = 0
    for v in verdicts:
        winner = v.winner
        if winner is None:
            continue
        loser = v.second if winner == v.first else v.first
        if winner not in lengths or loser not in lengths or lengths[winner] == lengths[loser]:
            continue
        n += 1
        longer += lengths[winner] > lengths[loser]
    return LengthPreference(n, longer)


def word_count(text: str | None) -> int:
    return len((text or "").split())


# --------------------------------------------------------------------------- humans


def human_pair_verdicts(ratings: Mapping[str, float | None], pairs: Sequence[tuple[str, str]]
                        ) -> dict[frozenset[str], str]:
    """Which candidate of each pair the pooled human rating puts higher ("tie" when equal);
    a pair with a missing rating is left out."""
    out: dict[frozenset[str], str] = {}
    for a, b in pairs:
        ra, rb = ratings.get(a), ratings.get(b)
        if ra is None or rb is None or (isinstance(ra, float) and math.isnan(ra)) or (
                isinstance(rb, float) and math.isnan(rb)):
            continue
        out[frozenset((a, b))] = HUMAN_TIE if math.isclose(ra, rb, abs_tol=1e-12) else (a if ra > rb else b)
    return out


def humans_as_asked(verdicts: Sequence[AskedVerdict], human: Mapping[frozenset[str], str]) -> list[AskedVerdict]:
    """The humans' verdict on the same asked orders, in positions (for their position and length numbers)."""
    out = []
    for v in verdicts:
        h = human.get(v.pair)
        if h is None:
            continue
        verdict: VerdictName = "tie" if h == HUMAN_TIE else ("first" if h == v.first else "second")
        out.append(AskedVerdict(v.context, v.first, v.second, verdict))
    return out


def pair_accuracy(verdicts: Sequence[AskedVerdict], human: Mapping[frozenset[str], str]) -> PairAccuracy:
    n = correct = n_decisive = correct_decisive = human_ties = judge_ties = 0
    for v in verdicts:
        h = human.get(v.pair)
        if v.verdict is None or h is None:
            continue
        n += 1
        judge_says = v.winner if v.winner is not None else HUMAN_TIE
        hit = judge_says == h
        correct += hit
        human_ties += h == HUMAN_TIE
        judge_ties += judge_says == HUMAN_TIE
        if h != HUMAN_TIE:
            n_decisive += 1
            correct_decisive += hit
    return PairAccuracy(n, correct, n_decisive, correct_decisive, human_ties, judge_ties)


# --------------------------------------------------------------------------- per-candidate scores


def win_rates(verdicts: Sequence[AskedVerdict]) -> dict[str, float]:
    points: dict[str, float] = {}
    games: dict[str, int] = {}
    for v in verdicts:
        shares = v.shares()
        if shares is None:
            continue
        for c, share in zip((v.first, v.second), shares):
            games[c] = games.get(c, 0) + 1
            points[c] = points.get(c, 0.0) + share
    return {c: points[c] / games[c] for c in games}


def bradley_terry(wins: Mapping[tuple[str, str], float], *, prior: float = DEFAULT_BT_PRIOR,
                  tol: float = 1e-10, max_iter: int = 100_000) -> dict[str, float]:
    """Bradley-Terry strengths π (Hunter's MM algorithm) from ``wins[(i, j)]`` = times i beat j
    (a tie adds 0.5 each way). With ``prior > 0`` each player also wins and loses ``prior`` virtual
    games against a reference of strength 1 (π is then on that reference's scale); with
    ``prior == 0`` the plain maximum-likelihood strengths, scaled to a geometric mean of 1 (they
    exist only when every player both wins and loses within a connected comparison graph)."""
    if prior < 0:
        raise ValueError("prior must be 0 or more")
    players = sorted({p for pair in wins for p in pair})
    won = {p: prior for p in players}
    games: dict[str, dict[str, float]] = {p: {} for p in players}
    for (i, j), w in wins.items():
        if w < 0:
            raise ValueError("win counts must not be negative")
        if i == j or w == 0:
            continue
        won[i] += w
        games[i][j] = games[i].get(j, 0.0) + w
        games[j][i] = games[j].get(i, 0.0) + w
    if prior == 0 and any(won[p] <= 0 for p in players):
        raise ValueError("with prior 0 every player needs at least one win (the MLE does not exist)")
    pi = {p: 1.0 for p in players}
    for _ in range(max_iter):
        new = {}
        for p in players:
            denom = sum(n / (pi[p] + pi[q]) for q, n in games[p].items())
            denom += 2 * prior / (pi[p] + 1.0)
            new[p] = won[p] / denom if denom > 0 else pi[p]
        if prior == 0:
            scale = math.exp(sum(math.log(v) for v in new.values()) / len(new))
            new = {p: v / scale for p, v in new.items()}
        change = max(abs(math.log(new[p]) - math.log(pi[p])) for p in players) if players else 0.0
        pi = new
        if change < tol:
            break
    return pi


def candidate_scores(verdicts: Sequence[AskedVerdict], *, prior: float = DEFAULT_BT_PRIOR) -> CandidateScores:
    """Win rate and Bradley-Terry strength of every compared candidate, each within its context."""
    scores = CandidateScores(win_rate=win_rates(verdicts))
    by_context: dict[str, dict[tuple[str, str], float]] = {}
    for v in verdicts:
        shares = v.shares()
        if shares is None:
            continue
        table = by_context.setdefault(v.context, {})
        for (i, j), share in zip(((v.first, v.second), (v.second, v.first)), shares):
            table[(i, j)] = table.get((i, j), 0.0) + share
    for table in by_context.values():
        for c, pi in bradley_terry(table, prior=prior).items():
            scores.bt[c] = pi / (1.0 + pi)
            scores.bt_log_strength[c] = math.log(pi)
    return scores


__all__ = ["AskedVerdict", "HUMAN_TIE", "DEFAULT_BT_PRIOR", "PositionStats", "LengthPreference", "PairAccuracy",
           "CandidateScores", "position_stats", "length_preference", "word_count", "human_pair_verdicts",
           "humans_as_asked", "pair_accuracy", "win_rates", "bradley_terry", "candidate_scores"]
