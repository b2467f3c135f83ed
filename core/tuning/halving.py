"""Successive halving's bookkeeping (no judging here: the search feeds it scores).

Round 0 judges every variant on the first ``first_sample`` tuning contexts; each later round
keeps the better ``1/eta`` of the variants (rounded up) and multiplies the sample by ``eta``.
A round is never run for a single variant: the search ends once one survivor is left.
Samples are nested (each round takes the first n contexts of one seeded order), so a survivor
only needs judgments on the contexts its sample added: that is what a round costs. The search
stops when one variant is left, when the sample holds every tuning context, or when the budget
cannot pay for a larger sample; a round that would overrun the budget is shrunk to fit.

A judgment counts against the budget whether or not the response cache answers it, so a rerun
of the same search plans exactly the same rounds (and the cache makes them free).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from ..errors import ConfigError


@dataclass(frozen=True)
class Round:
    index: int
    variants: tuple[str, ...]
    #: Tuning contexts in this round's sample (the first n of the seeded order).
    n_contexts: int
    n_items: int
    #: New judgments this round needs: variants × items the previous sample did not hold.
    cost: int


@dataclass(frozen=True)
class Standing:
    """A variant's place on the tuning leaderboard: the last round it reached and its score there."""

    variant: str
    round: int
    score: float | None
    n_contexts: int
    n_items: int


class SuccessiveHalving:
    def __init__(self, variants: Sequence[str], context_sizes: Sequence[int], *, first_sample: int,
                 eta: int = 2, budget: int = 0) -> None:
        """``context_sizes``: items in each tuning context, in sampling order; ``budget``: most
        judgments the tuning rounds may make (0: no limit)."""
        if not variants:
            raise ConfigError("successive halving needs at least one variant")
        if not context_sizes:
            raise ConfigError("successive halving needs at least one tuning context")
        if eta < 2:
            raise ConfigError(f"eta must be at least 2, not {eta}")
        self.variants = tuple(variants)
        self._cumulative = [0]
        for size in context_sizes:
            self._cumulative.append(self._cumulative[-1] + int(size))
        self.first_sample = max(1, first_sample)
        self.eta = eta
        self.budget = budget
        self.spent = 0
        self.rounds: list[Round] = []
        self.scores: list[dict[str, float | None]] = []
        self.stop_reason = ""

    @property
    def n_contexts(self) -> int:
        return len(self._cumulative) - 1

    def items_in(self, n_contexts: int) -> int:
        return self._cumulative[min(n_contexts, self.n_contexts)]

    def next_round(self) -> Round | None:
        """The next round to judge, or None when the search is over (``stop_reason`` says why)."""
        if len(self.scores) < len(self.rounds):
            raise RuntimeError("record the current round's scores before asking for the next")
        if not self.rounds:
            variants, previous = self.variants, 0
            wanted = min(self.first_sample, self.n_contexts)
        else:
            last = self.rounds[-1]
            if len(last.variants) == 1:
                self.stop_reason = "one variant left"
                return None
            if last.n_contexts >= self.n_contexts:
                self.stop_reason = "the sample holds every tuning context"
                return None
            keep = math.ceil(len(last.variants) / self.eta)
            if keep == 1:  # judging the last survivor alone on more data would decide nothing
                self.stop_reason = "one variant left"
                return None
            variants = tuple(self.ranking(len(self.rounds) - 1)[:keep])
            previous = last.n_contexts
            wanted = min(previous * self.eta, self.n_contexts)
        n = self._affordable(len(variants), previous, wanted)
        if n <= previous:
            if not self.rounds:
                need = len(variants) * self.items_in(1)
                raise ConfigError(f"a budget of {self.budget} judgments cannot judge the {len(variants)} variants "
                                  f"on even one tuning context ({need} judgments)")
            self.stop_reason = "the budget is spent"
            return None
        cost = len(variants) * (self.items_in(n) - self.items_in(previous))
        round_ = Round(len(self.rounds), variants, n, self.items_in(n), cost)
        self.rounds.append(round_)
        self.spent += cost
        return round_

    def _affordable(self, n_variants: int, previous: int, wanted: int) -> int:
        if not self.budget:
            return wanted
        left = self.budget - self.spent
        n = wanted
        while n > previous and n_variants * (self.items_in(n) - self.items_in(previous)) > left:
            n -= 1
        return n

    def record(self, scores: Mapping[str, float | None]) -> None:
        """The current round's agreement score of every variant in it (None: undefined)."""
        if len(self.scores) != len(self.rounds) - 1:
            raise RuntimeError("no round is waiting for scores")
        current = self.rounds[-1]
        missing = [v for v in current.variants if v not in scores]
        if missing:
            raise ValueError(f"no score for variant {missing[0]!r} in round {current.index}")
        self.scores.append({v: _clean(scores[v]) for v in current.variants})

    def ranking(self, round_index: int) -> list[str]:
        """The round's variants, best first (undefined scores last, ties in space order)."""
        scores = self.scores[round_index]
        order = {v: i for i, v in enumerate(self.variants)}
        return sorted(scores, key=lambda v: (scores[v] is None, -(scores[v] or 0.0), order[v]))

    def leaderboard(self) -> list[Standing]:
        """Every judged variant, best first: those that reached a later round rank higher."""
        standings = {}
        for index, scores in enumerate(self.scores):
            round_ = self.rounds[index]
            for variant, score in scores.items():
                standings[variant] = Standing(variant, index, score, round_.n_contexts, round_.n_items)
        order = {v: i for i, v in enumerate(self.variants)}
        return sorted(standings.values(),
                      key=lambda s: (-s.round, s.score is None, -(s.score or 0.0), order[s.variant]))


def planned_tuning_cost(variants: Sequence[str], context_sizes: Sequence[int], *, first_sample: int,
                        eta: int = 2, budget: int = 0) -> int:
    """The judgments the tuning rounds of :class:`SuccessiveHalving` with these settings will ask for.

    What a round costs depends on how many variants it keeps and how many contexts it adds, never
    on the scores, so a dry run that gives every variant the same score counts them exactly.
    """
    dry = SuccessiveHalving(variants, context_sizes, first_sample=first_sample, eta=eta, budget=budget)
    while (round_ := dry.next_round()) is not None:
        dry.record({v: 0.0 for v in round_.variants})
    return dry.spent


def _clean(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value
