"""Value faults: a rating that cannot stand on its scale is left out and counted by reason.

The data contract (datasets/README.md) splits bad input in two. A structural fault (a missing
required key, a wrong type, a truncated file, a ragged row) stops the load with a DataError. A
value fault (a non-number or NaN rating, a value off the scale or between its points, a label the
scale does not list) is one annotator's value: it is stored as missing (None, never imputed, never
a reason to widen the scale) and counted here, so ``datasets show``, ``datasets stats``, the
exports and the app's summary can say how many values were left out and why.

The counts go to ``meta["value_exclusions"]`` ({reason: count}); a warning in ``meta["warnings"]``
names the first few places of each reason.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from ..model import RatingValue, Scale, ScaleKind

#: The reasons a value is left out, as the reports print them.
NOT_A_NUMBER = "not a number"
NOT_FINITE = "NaN or infinite"
OUTSIDE_SCALE = "outside the scale"
BETWEEN_POINTS = "between the scale's points"
NOT_A_LABEL = "not one of the labels"
METRIC_MISSING = "metric missing"
ANNOTATIONS_MISSING = "annotations missing"
EMPTY_VERDICT = "empty verdict"
EMPTY_LABEL = "empty label"

#: The meta key holding {reason: count}.
META_KEY = "value_exclusions"
#: How many places a warning names per reason before it says "and N more".
PLACES_SHOWN = 3


class Exclusions:
    """The value faults one load met, counted by reason, with the first places of each."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._places: dict[str, list[str]] = {}

    def add(self, reason: str, place: str) -> None:
        self.counts[reason] += 1
        places = self._places.setdefault(reason, [])
        if len(places) < PLACES_SHOWN:
            places.append(place)

    def record_into(self, meta: dict[str, Any]) -> None:
        """Adds the counts and one warning per reason to a dataset's meta (nothing when none)."""
        if not self.counts:
            return
        counts = dict(meta.get(META_KEY) or {})
        for reason, n in self.counts.items():
            counts[reason] = counts.get(reason, 0) + n
        meta[META_KEY] = counts
        warnings = list(meta.get("warnings") or [])
        for reason, n in self.counts.items():
            more = n - len(self._places[reason])
            warnings.append(f"{reason}: {n} counted as missing — " + "; ".join(self._places[reason])
                            + (f"; and {more} more" if more > 0 else ""))
        meta["warnings"] = warnings


def value_fault(value: Any, scale: Scale) -> str | None:
    """Why ``value`` cannot stand on ``scale`` (one of the reasons above), or None when it can.
    None (a missing value) is never a fault. Numbers written as text are the caller's to parse."""
    if value is None:
        return None
    if scale.kind is ScaleKind.CATEGORICAL:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return NOT_A_LABEL
        if isinstance(value, float) and not math.isfinite(value):
            return NOT_FINITE
        if isinstance(value, str) and not value.strip():
            return EMPTY_LABEL  # said as such: an empty answer is not a label off the list
        return None if scale.contains(label_of(value)) else NOT_A_LABEL
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return NOT_A_NUMBER
    if not math.isfinite(value):
        return NOT_FINITE
    if not scale.contains(value):
        return OUTSIDE_SCALE
    if scale.kind in (ScaleKind.ORDINAL, ScaleKind.BINARY):
        assert scale.min is not None
        if not float(value - scale.min).is_integer():
            return BETWEEN_POINTS
    return None


def label_of(value: str | int | float) -> str:
    """A categorical value as its label: 1.0 and 1 are both "1"."""
    if isinstance(value, str):
        return value
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def checked_value(value: Any, scale: Scale, exclusions: Exclusions, place: str) -> RatingValue:
    """The value as the scale holds it, or None where it is a value fault (counted with its place)."""
    reason = value_fault(value, scale)
    if reason is not None:
        shown = "NaN" if isinstance(value, float) and math.isnan(value) else repr(value)
        exclusions.add(reason, f"{place}: {shown}")
        return None
    if value is None or scale.kind is not ScaleKind.CATEGORICAL:
        return value
    return label_of(value)


def total(meta: dict[str, Any]) -> dict[str, int]:
    """A dataset's value exclusions by reason (empty when none)."""
    counts = meta.get(META_KEY) or {}
    return {str(k): int(v) for k, v in counts.items()} if isinstance(counts, dict) else {}
