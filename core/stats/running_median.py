"""The median and least of a stream of numbers, exact, in O(log n) per value.

The run status line shows the median valid-answer mass of every judgment so far; recomputing
``statistics.median`` over the whole list on each refresh was O(n log n) per refresh, 60 ms of the
UI thread per refresh at 100,000 judgments.
"""

from __future__ import annotations

import heapq
import math


class RunningMedian:
    """Two heaps split at the middle: the lower half as a max-heap (negated), the upper as a
    min-heap, kept equal in size or the lower one larger by one."""

    __slots__ = ("_lower", "_upper", "_least")

    def __init__(self) -> None:
        self._lower: list[float] = []
        self._upper: list[float] = []
        self._least = math.inf

    def __len__(self) -> int:
        return len(self._lower) + len(self._upper)

    def add(self, value: float) -> None:
        if math.isnan(value):
            raise ValueError("a median of NaN is undefined")
        self._least = min(self._least, value)
        if not self._lower or value <= -self._lower[0]:
            heapq.heappush(self._lower, -value)
        else:
            heapq.heappush(self._upper, value)
        if len(self._lower) > len(self._upper) + 1:
            heapq.heappush(self._upper, -heapq.heappop(self._lower))
        elif len(self._upper) > len(self._lower):
            heapq.heappush(self._lower, -heapq.heappop(self._upper))

    @property
    def median(self) -> float:
        """As ``statistics.median``: the middle value, or the mean of the two middle ones."""
        if not self._lower:
            raise ValueError("no values yet")
        if len(self._lower) > len(self._upper):
            return -self._lower[0]
        return (-self._lower[0] + self._upper[0]) / 2

    @property
    def least(self) -> float:
        if not self._lower:
            raise ValueError("no values yet")
        return self._least
