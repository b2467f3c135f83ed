"""Which annotators a human-agreement figure rests on, and how their figures are pooled.

Crowd exports add stray raters: a fourth annotator with one vote, or with three items. Averaged
with equal weight over every pair that shares an item, one such vote halved a 60-item set's
pairwise κ; as an equal leave-one-out slot, three items turned a ceiling of .15 into -.11. So:

* a pairwise figure (Cohen's κ, % agreement, Spearman's ρ between two annotators) is taken only
  for pairs sharing at least ``MIN_SHARED_ITEMS`` items, and the mean over pairs is weighted by
  the items each pair shares;
* a rater is a leave-one-out slot (an annotator against the mean, or the majority, of the others)
  only with at least ``MIN_SHARED_ITEMS`` items that another such rater also rated; raters below
  that are left out of the slots and of "the others" alike, and the slots are weighted by items.

The minimum is the one JUDGE-BENCH's own analysis of annotator agreement uses (Bavaresco et al.
2024, "LLMs instead of Human Judges?"). Every pooled figure carries the raters and items it rests on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

NAN = float("nan")

#: Items two annotators must share for their pairwise figure to count, and a rater must share with
#: the others to be a leave-one-out slot.
MIN_SHARED_ITEMS = 10


@dataclass(frozen=True)
class RaterPair:
    """Two annotators' figure on the items both rated."""

    first: str
    second: str
    n: int
    value: float


@dataclass(frozen=True)
class Pooled:
    """A figure averaged over pairs (or slots) weighted by their items, with what it rests on."""

    value: float
    #: The annotators of the pairs (or the slots) it averages.
    raters: tuple[str, ...]
    #: Distinct items those pairs share (those slots cover).
    n_items: int
    #: Pairs (or slots) averaged.
    n_units: int
    #: Pairs sharing some items, or raters with some, but fewer than the minimum: left out.
    n_left_out: int = 0

    @property
    def n_raters(self) -> int:
        return len(self.raters)

    def rests_on(self, unit: str = "pairs") -> str:
        """``3 pairs of 3 raters, 60 items`` (or ``3 raters, 60 items`` for slots); ``–`` when undefined."""
        if math.isnan(self.value):
            return "–"
        raters = f"{self.n_raters} raters, {self.n_items} items"
        return f"{self.n_units} pairs of {raters}" if unit == "pairs" else raters

    def counts(self, unit: str = "pairs") -> str:
        """The same for a table column headed "pairs / raters / items" (or "raters / items"): ``3 / 3 / 60``."""
        if math.isnan(self.value):
            return "–"
        raters = f"{self.n_raters} / {self.n_items}"
        return f"{self.n_units} / {raters}" if unit == "pairs" else raters

    def to_dict(self) -> dict[str, object]:
        return {"value": None if math.isnan(self.value) else self.value, "raters": list(self.raters),
                "n_raters": self.n_raters, "n_items": self.n_items, "n_units": self.n_units,
                "n_left_out": self.n_left_out}


UNDEFINED = Pooled(NAN, (), 0, 0)


def shared_pairs(values: np.ndarray, minimum: int = MIN_SHARED_ITEMS
                 ) -> tuple[list[tuple[int, int, np.ndarray]], int]:
    """The annotator pairs (rows of the (annotators, items) matrix, NaN where missing) sharing at
    least ``minimum`` items, each with the indices of those items; and how many pairs share some
    items but fewer."""
    rated = np.isfinite(values)
    pairs, left_out = [], 0
    for a in range(rated.shape[0]):
        for b in range(a + 1, rated.shape[0]):
            index = np.flatnonzero(rated[a] & rated[b])
            if index.size >= minimum:
                pairs.append((a, b, index))
            elif index.size:
                left_out += 1
    return pairs, left_out


def slot_raters(rated: np.ndarray, minimum: int = MIN_SHARED_ITEMS) -> list[int]:
    """The rows of the (annotators, items) "rated" mask that are leave-one-out slots: each has at
    least ``minimum`` items that another slot also rated. Dropping a rater can take items from
    another, so it is repeated until nothing changes."""
    kept = list(range(rated.shape[0]))
    while True:
        counts = rated[kept].sum(axis=0)
        still = [a for a in kept if int(((counts - rated[a]) > 0)[rated[a]].sum()) >= minimum]
        if len(still) == len(kept) or len(still) < 2:
            return still if len(still) >= 2 else []
        kept = still


def pool_pairs(names: Sequence[str], pairs: Iterable[tuple[int, int, np.ndarray, float]],
               n_left_out: int = 0) -> tuple[Pooled, tuple[RaterPair, ...]]:
    """The mean of the pairs' defined values weighted by their shared items, and every pair's figure."""
    listed = list(pairs)
    figures = tuple(RaterPair(names[a], names[b], int(index.size), value) for a, b, index, value in listed)
    defined = [(a, b, index, value) for a, b, index, value in listed if not math.isnan(value)]
    if not defined:
        return Pooled(NAN, (), 0, 0, n_left_out), figures
    raters = sorted({a for a, *_ in defined} | {b for _, b, *_ in defined})
    items = np.unique(np.concatenate([index for _, _, index, _ in defined]))
    value = weighted_mean([v for *_, v in defined], [index.size for _, _, index, _ in defined])
    return Pooled(value, tuple(names[r] for r in raters), int(items.size), len(defined), n_left_out), figures


def pool_slots(names: Sequence[str], slots: Iterable[tuple[int, np.ndarray, float]],
               n_left_out: int = 0) -> Pooled:
    """The mean of the slots' defined values weighted by their items (``index``: the items a slot covers)."""
    defined = [(a, index, value) for a, index, value in slots if not math.isnan(value)]
    if not defined:
        return Pooled(NAN, (), 0, 0, n_left_out)
    items = np.unique(np.concatenate([index for _, index, _ in defined]))
    value = weighted_mean([v for *_, v in defined], [index.size for _, index, _ in defined])
    return Pooled(value, tuple(names[a] for a, _, _ in defined), int(items.size), len(defined), n_left_out)


def weighted_mean(values: Sequence[float], weights: Sequence[float]) -> float:
    total = math.fsum(weights)
    return math.fsum(v * w for v, w in zip(values, weights)) / total if total else NAN


def left_out_note(what: str, n_left_out: int, unit: str, minimum: int = MIN_SHARED_ITEMS) -> str | None:
    """Why some pairs or raters are missing from ``what`` (None when none are)."""
    if not n_left_out:
        return None
    noun = {"pairs": "annotator pair" + ("s" if n_left_out > 1 else ""),
            "raters": "rater" + ("s" if n_left_out > 1 else "")}[unit]
    share = "sharing" if unit == "pairs" else "with"
    return (f"{what}: {n_left_out} {noun} {share} fewer than {minimum} items "
            f"{'with each other' if unit == 'pairs' else 'that another rater also rated'} left out")
