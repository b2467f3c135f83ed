"""What a dataset holds: counts, qualities and scales, splits. Used by `datasets show` and the TUI."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .model import TAG_CLOSED, TAG_OPEN, Dataset, Level, Scale


@dataclass(frozen=True)
class QualitySummary:
    name: str
    scale: Scale
    level: Level
    rated_items: int  # items with at least one present value
    annotators: int  # most annotators seen on one item
    missing_values: int  # individual annotator values that are missing (N/A)
    #: Distinct raters over the set (by name where every rating names them, else as many as the most on one item).
    raters: int = 0

    @property
    def scale_text(self) -> str:
        s = self.scale
        if s.labels:
            return f"{s.kind.value}: {', '.join(s.labels)}"
        return f"{s.kind.value} {_num(s.min)}–{_num(s.max)}"


@dataclass(frozen=True)
class DatasetSummary:
    name: str
    source: str
    description: str
    examples: int
    turn_level: int
    dialog_level: int
    groups: int
    references_as_candidates: int
    with_references: int
    with_fact: int
    open_ended: int
    closed_ended: int
    untagged: int
    adversarial: int
    adversarial_kinds: dict[str, int]
    systems: dict[str, int]
    languages: dict[str, int]
    qualities: list[QualitySummary] = field(default_factory=list)
    illustrative: bool = False
    #: The column mapping a table was read with (``COLUMN=FIELD`` items), shown so it is never implicit.
    column_map: tuple[str, ...] = ()
    #: Annotator values the loader left out as missing, by reason (the data contract's value faults).
    value_exclusions: dict[str, int] = field(default_factory=dict)
    #: Items the loader left out, by reason (a null response, two identical replies).
    items_left_out: dict[str, int] = field(default_factory=dict)

    @property
    def left_out_text(self) -> str:
        """What loading left out, by reason ("" when nothing): shown wherever the dataset is described."""
        return _left_out_text(self.items_left_out, self.value_exclusions)


def left_out_at_load(dataset: Dataset) -> str:
    """What loading ``dataset`` left out, by reason ("" when nothing), for a table's notes."""
    return _left_out_text(_counts(dataset.meta.get("excluded")), _counts(dataset.meta.get("value_exclusions")))


def _left_out_text(items: dict[str, int], values: dict[str, int]) -> str:
    parts = []
    if items:
        parts.append("items left out: " + ", ".join(f"{reason} {n}" for reason, n in items.items()))
    if values:
        parts.append("values counted as missing: " + ", ".join(f"{reason} {n}" for reason, n in values.items()))
    return "; ".join(parts)


def describe(dataset: Dataset) -> DatasetSummary:
    examples = dataset.examples
    ended = Counter(ex.ended for ex in examples)
    quality_rows: dict[tuple[str, Level], list[int]] = {}
    scales: dict[tuple[str, Level], Scale] = {}
    #: The annotator names of each quality; None once a rating names none.
    names: dict[tuple[str, Level], set[str] | None] = {}
    for ex in examples:
        for q, rating in ex.ratings.items():
            key = (q, ex.level)
            stats = quality_rows.setdefault(key, [0, 0, 0])
            scales.setdefault(key, rating.scale)
            named = names.setdefault(key, set())
            if named is not None:
                if rating.annotators:
                    named.update(rating.annotators)
                else:
                    names[key] = None
            present = len(rating.present)
            stats[0] += 1 if present else 0
            stats[1] = max(stats[1], len(rating.scores))
            stats[2] += len(rating.scores) - present
    return DatasetSummary(
        name=dataset.name,
        source=dataset.source,
        description=dataset.description,
        examples=len(examples),
        turn_level=sum(ex.level is Level.TURN for ex in examples),
        dialog_level=sum(ex.level is Level.DIALOG for ex in examples),
        groups=len({ex.group_id for ex in examples}),
        references_as_candidates=sum(ex.is_reference for ex in examples),
        with_references=sum(bool(ex.references) for ex in examples),
        with_fact=sum(bool(ex.fact) for ex in examples),
        open_ended=ended.get(TAG_OPEN, 0),
        closed_ended=ended.get(TAG_CLOSED, 0),
        untagged=ended.get(None, 0),
        adversarial=sum(ex.is_adversarial for ex in examples),
        adversarial_kinds=dict(Counter(ex.adversarial.kind for ex in examples if ex.adversarial)),
        systems=dict(Counter(ex.system or "(none)" for ex in examples).most_common()),
        languages=dict(Counter(ex.language or "(unspecified)" for ex in examples)),
        qualities=[QualitySummary(q, scales[(q, lvl)], lvl, vals[0], vals[1], vals[2],
                                  raters=_raters(names[(q, lvl)], vals[1]))
                   for (q, lvl), vals in quality_rows.items()],
        illustrative=bool(dataset.meta.get("illustrative")),
        column_map=tuple(str(item) for item in dataset.meta.get("column_map", ())),
        value_exclusions=_counts(dataset.meta.get("value_exclusions")),
        items_left_out=_counts(dataset.meta.get("excluded")),
    )


def _counts(value: object) -> dict[str, int]:
    """A meta entry of {reason: count} (anything else: none; meta comes from files)."""
    if not isinstance(value, dict):
        return {}
    return {str(k): int(v) for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}


def _raters(named: set[str] | None, most_on_one_item: int) -> int:
    """Distinct raters over the set: the names, where every rating names its annotators."""
    return len(named) if named else most_on_one_item


def _num(x: float | None) -> str:
    if x is None:
        return "?"
    return str(int(x)) if float(x).is_integer() else f"{x:g}"
