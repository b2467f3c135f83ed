"""chrF++'s character n-grams of a Latin-1 text as integers, counted and matched in numpy.

Building ~6 strings per character and hashing them is most of chrF++'s cost on English
texts (about 75 characters without blanks: 450 n-grams). A text whose characters are all
Latin-1 (every English text) has a byte per character, and an n-gram of up to
:data:`MAX_ORDER` bytes fits one int64 exactly: its bytes plus one as the digits of a
number in base 257 (digits 1-256, so no two n-grams of any orders share a code). A code
of order n lies between ``sum(257**k for k < n)`` and 256 times that, below the smallest
code of order n+1, so sorted codes come grouped by order. Each text's codes are sorted
and counted once (:class:`CodedGrams`); a pair's matches are a ``searchsorted`` of one
text's codes in the other's, the smaller counts of the hits, summed per order. All of it
is integer arithmetic, so the matches are the very integers sacrebleu counts.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

BASE = 257
#: 257**8 > 2**63: codes of up to 7 characters fit an int64.
MAX_ORDER = 7


def is_latin1(line: str) -> bool:
    return line.isascii() or max(line) <= "\xff"


@lru_cache(maxsize=None)
def smallest_codes(max_order: int) -> np.ndarray:
    """The smallest code of each order 2..max_order (an n-gram of ones, 'digit' 1 each)."""
    return np.array([sum(BASE ** k for k in range(n)) for n in range(2, max_order + 1)], dtype=np.int64)


class CodedGrams:
    """A Latin-1 text's distinct character 1..max_order-grams as sorted int64 codes, with each
    one's count and order (0-based)."""

    __slots__ = ("codes", "counts", "max_order", "orders")

    def __init__(self, line: str, max_order: int) -> None:
        if max_order > MAX_ORDER:
            raise ValueError(f"character n-grams longer than {MAX_ORDER} do not fit an int64 code")
        digits = np.frombuffer(line.encode("latin-1"), dtype=np.uint8).astype(np.int64) + 1
        grams = [digits]
        for n in range(2, max_order + 1):  # order n: each (n-1)-gram's code shifted, plus the next character
            grams.append(grams[-1][:-1] * BASE + digits[n - 1:])
        # np.unique(return_counts=True), without its Python-level overhead (a third of the time on
        # texts this short): sort, mark where a new code starts, count the run of each.
        codes = np.concatenate(grams)
        codes.sort()
        starts = np.empty(len(codes) + 1, dtype=bool)  # the extra last mark closes the last run
        starts[0] = starts[-1] = True
        np.not_equal(codes[1:], codes[:-1], out=starts[1:-1])
        bounds = starts.nonzero()[0]
        self.codes = codes[bounds[:-1]]
        self.counts = bounds[1:] - bounds[:-1]
        # Array methods, not np.searchsorted: the function form's dispatch costs as much as the search.
        self.orders = smallest_codes(max_order).searchsorted(self.codes, side="right")
        self.max_order = max_order

    def matches(self, other: CodedGrams) -> list[int]:
        """Per order, the sum over the n-grams in both texts of the smaller count."""
        if not (len(self.codes) and len(other.codes)):
            return [0] * self.max_order
        at = other.codes.searchsorted(self.codes)
        at[at == len(other.codes)] = 0  # past the other's largest code: not there (the test below fails)
        hit = other.codes[at] == self.codes
        smaller = np.minimum(self.counts[hit], other.counts[at[hit]])
        # Counts are far below 2**53, so the float sums are exact integers.
        per_order: list[float] = np.bincount(self.orders[hit], weights=smaller, minlength=self.max_order).tolist()
        return [int(total) for total in per_order]
