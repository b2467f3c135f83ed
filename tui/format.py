"""How numbers look on screen: core's number formats, plus the disagreement colours (a UI concern)."""

from __future__ import annotations

import math

from dialjudge.core.format import MISSING, duration_text, interval_text, is_number, number_text

__all__ = ["MISSING", "DISAGREEMENT_BANDS", "disagreement_style", "duration_text", "interval_text", "is_number",
           "number_text"]

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
