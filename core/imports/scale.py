"""The stated rule that maps scores from the file's scale onto the template's: linear, end to end."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ConfigError

_RANGE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:-|\.\.|:|to)\s*(-?\d+(?:\.\d+)?)\s*$")


@dataclass(frozen=True)
class ScaleRule:
    """Scores on ``low``-``high`` in the file; ``low`` becomes the template's minimum, ``high`` its maximum."""

    low: float
    high: float

    @classmethod
    def parse(cls, text: str) -> "ScaleRule":
        match = _RANGE.match(text)
        if not match:
            raise ConfigError(f"--scale: {text!r} is not a range LOW-HIGH (e.g. 1-10, 0-1)")
        low, high = float(match.group(1)), float(match.group(2))
        if not high > low:
            raise ConfigError(f"--scale: the high end ({high:g}) must be above the low end ({low:g})")
        return cls(low, high)

    def contains(self, value: float) -> bool:
        return self.low - 1e-9 <= value <= self.high + 1e-9

    def map(self, value: float, to_low: float, to_high: float) -> float:
        return to_low + (value - self.low) / (self.high - self.low) * (to_high - to_low)

    def describe(self, to_low: float, to_high: float) -> str:
        return f"{self.low:g}-{self.high:g} mapped linearly onto {to_low:g}-{to_high:g}"

    def __str__(self) -> str:
        return f"{self.low:g}-{self.high:g}"
