"""How numbers look on screen: core's number formats, plus the disagreement colours (a UI concern)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from rich.cells import cell_len

from dialjudge.core.format import MISSING, duration_text, interval_text, is_number, number_text

__all__ = ["MISSING", "DISAGREEMENT_BANDS", "disagreement_style", "duration_text", "interval_text", "is_number",
           "number_text", "widest_cells", "widest_number"]

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


def widest_cells(texts: list[str]) -> int:
    """The widest ``cell_len`` of ``texts``. Ids and system names are nearly always printable ASCII,
    one cell a character: then ``len`` measures them, at C speed (100,000 ids on the open's worker)."""
    joined = "".join(texts)
    if joined.isascii() and joined.isprintable():
        return max(map(len, texts), default=0)
    return max(map(cell_len, texts), default=0)


def widest_number(values: Iterable[float | None], digits: int) -> int:
    """The widest ``number_text(value, digits)`` of ``values`` without formatting each one: with a
    fixed number of decimals the widest finite text is that of the smallest or the largest value.
    The values are read as one array (None becomes NaN): a column of 100,000 on the UI thread."""
    values = list(values)
    numbers = np.array(values, dtype=np.float64)
    finite = numbers[np.isfinite(numbers)]
    texts = [number_text(float(finite.min()), digits), number_text(float(finite.max()), digits)] if finite.size else []
    if finite.size < numbers.size:  # None, NaN or an infinity: each has its own text
        n_none = values.count(None)
        if n_none:
            texts.append(number_text(None, digits))
        if int(np.isnan(numbers).sum()) > n_none:
            texts.append(number_text(math.nan, digits))
        texts.extend(number_text(bound, digits) for bound in (math.inf, -math.inf) if bound in numbers)
    return max((cell_len(text) for text in texts), default=0)
