"""Multisets of n-grams, counted in C, and their overlap without a Python loop where possible.

BLEU's clipped matches and ROUGE-N's overlap are sums, over the n-grams two texts
share, of the smaller count; BLEU pools several references by the larger count.
(chrF++ counts the same way, per order, in :mod:`.families.chrf`, and a Latin-1 text's
character n-grams as integer codes, in :mod:`.char_codes`.) A text's n-grams are
counted once into a :class:`Bag` (Counter's own C loop) that remembers whether any
n-gram repeats. The shared n-grams are a set intersection of the two key views (in
C); where either side has no repeated n-gram, every smaller count is 1 and the
overlap is the number of shared n-grams, otherwise the smaller counts are summed by
``map(min, ...)``. The counts are exact integers, so
scores built on them equal the libraries' to the last bit.
"""

from __future__ import annotations

from collections import _count_elements  # type: ignore[attr-defined]  # Counter's C counting loop
from collections.abc import Sequence


def ngrams(tokens: list[str], n: int) -> list[str]:
    """The n-grams of ``tokens`` in order, joined by a space (the tokens hold none, so the
    joined form is unambiguous, and a string hashes once, unlike a tuple)."""
    if n == 1:
        return tokens
    if n == 2:
        return list(map(" ".join, zip(tokens, tokens[1:])))
    return list(map(" ".join, zip(*(tokens[i:] for i in range(n)))))


class Bag:
    """A multiset of n-grams: each n-gram's count, their total, and whether any count exceeds 1."""

    __slots__ = ("counts", "repeats", "total")

    def __init__(self, counts: dict[str, int], total: int) -> None:
        self.counts = counts
        self.total = total
        self.repeats = len(counts) < total

    @classmethod
    def of(cls, grams: list[str]) -> Bag:
        counts: dict[str, int] = {}
        _count_elements(counts, grams)
        return cls(counts, len(grams))


def overlap(a: Bag, b: Bag) -> int:
    """The sum over shared n-grams of the smaller count."""
    shared = a.counts.keys() & b.counts.keys()
    if not (a.repeats and b.repeats):
        return len(shared)  # one side counts every n-gram once: each smaller count is 1
    return sum(map(min, map(a.counts.__getitem__, shared), map(b.counts.__getitem__, shared)))


def largest(bags: Sequence[Bag]) -> Bag:
    """Each n-gram at its largest count in any one bag (sacrebleu's pooling of references)."""
    if len(bags) == 1:
        return bags[0]
    counts: dict[str, int] = {}
    for bag in bags:
        for gram, count in bag.counts.items():
            if count > counts.get(gram, 0):
                counts[gram] = count
    return Bag(counts, sum(counts.values()))
