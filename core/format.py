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


def collapse_rater_notes(notes: list[str], *, shown_names: int = 3) -> list[str]:
    """Notes of the form ``"WHERE: RATER: WHY"`` that repeat for many raters, as one line with a count.

    A crowd-sourced set has dozens of rater positions; one note per rater and quality buries the
    table. ``"Overall (turn): a1: only 2 items"`` for 40 raters becomes
    ``"Overall (turn): 40 raters (a1, a2, a3, … and 37 more): only 2 items"``. Other notes, and a
    reason only one rater has, are kept as they are, in their first order.
    """
    groups: dict[tuple[str, str], list[str]] = {}
    order: list[tuple[str, str] | str] = []
    for note in notes:
        parts = note.split(": ", 2)
        if len(parts) < 3:
            order.append(note)
            continue
        where, rater, why = parts
        key = (where, why)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(rater)
    out = []
    for item in order:
        if isinstance(item, str):
            out.append(item)
            continue
        where, why = item
        raters = groups[item]
        if len(raters) == 1:
            out.append(f"{where}: {raters[0]}: {why}")
            continue
        names = ", ".join(raters[:shown_names])
        more = f", … and {len(raters) - shown_names} more" if len(raters) > shown_names else ""
        out.append(f"{where}: {len(raters)} raters ({names}{more}): {why}")
    return out


#: The header of a table column that holds :func:`rater_counts_cell`.
RATER_COUNTS_HEADER = "raters: set / item"


def rater_counts_text(in_set: int, per_item: int) -> str:
    """The two annotator counts, each with its definition: the distinct raters over the whole set
    (by name where the file names them) and the most that rated one item. USR Topical-Chat: "5 raters
    in the set, 3 per item"."""
    return f"{in_set} raters in the set, {per_item} per item"


def rater_counts_cell(in_set: int, per_item: int) -> str:
    """:func:`rater_counts_text` for a table cell under :data:`RATER_COUNTS_HEADER`: ``5 / 3``."""
    return f"{in_set} / {per_item}"
