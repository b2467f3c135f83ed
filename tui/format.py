"""How numbers look on screen: scores, coefficients, intervals, and the disagreement colours."""

from __future__ import annotations

import math

MISSING = "–"


def is_number(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def score_text(value: float | None, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if is_number(value) else MISSING


def coefficient_text(value: float | None) -> str:
    return f"{value:.3f}" if is_number(value) else MISSING


def _short(x: float) -> str:
    """0.41 -> .41, -0.05 -> -.05: intervals stay narrow enough to sit under their value."""
    text = f"{x:.2f}"
    return text.replace("0.", ".", 1) if abs(x) < 1 else text


def interval_text(low: float | None, high: float | None) -> str:
    if not (is_number(low) and is_number(high)):
        return ""
    return f"[{_short(low)},{_short(high)}]"  # type: ignore[arg-type]


#: Upper bounds of |evaluator - human| (both 0-1) and the colour of each band.
DISAGREEMENT_BANDS: tuple[tuple[float, str], ...] = (
    (0.15, "green"),
    (0.30, "yellow"),
    (0.50, "dark_orange"),
    (math.inf, "red"),
)


def disagreement_style(difference: float | None) -> str:
    """The colour of a score given how far it is from the human label (None: not comparable)."""
    if difference is None or math.isnan(difference):
        return "dim"
    for bound, colour in DISAGREEMENT_BANDS:
        if difference < bound:
            return colour
    return DISAGREEMENT_BANDS[-1][1]


def duration_text(seconds: float | None) -> str:
    if seconds is None or math.isnan(seconds):
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
