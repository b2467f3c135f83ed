"""How numbers read in dialjudge's tables, panels and command output (no UI here).

Missing and NaN values show as an en dash, so a table column never holds ``nan``.
"""

from __future__ import annotations

import math

MISSING = "–"


def is_number(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def number_text(value: float | None, digits: int = 3, *, signed: bool = False) -> str:
    """``value`` with ``digits`` decimals (``signed``: always with its sign); MISSING when absent or NaN."""
    if value is None or not is_number(float(value)):
        return MISSING
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def percent_text(value: float | None, digits: int = 1) -> str:
    """A value already in percent, with ``digits`` decimals and no sign."""
    return number_text(value, digits)


def _short(x: float) -> str:
    """0.41 -> .41, -0.05 -> -.05: intervals stay narrow enough to sit under their value."""
    text = f"{x:.2f}"
    return text.replace("0.", ".", 1) if abs(x) < 1 else text


def interval_text(low: float | None, high: float | None) -> str:
    """A confidence interval as ``[.41,.58]``; empty when either end is missing."""
    if low is None or high is None or not (is_number(low) and is_number(high)):
        return ""
    return f"[{_short(low)},{_short(high)}]"


def duration_text(seconds: float | None) -> str:
    """``m:ss`` or ``h:mm:ss``; ``?`` when unknown."""
    if seconds is None or math.isnan(seconds):
        return "?"
    whole = int(round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
