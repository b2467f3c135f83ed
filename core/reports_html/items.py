"""The per-item table's data: one row per judged item, as compact JSON for the page's script.

Columns: the item's id, its context (each distinct context written once, rows point to it), the
reply, the reference, the humans' pooled label and every rating, the review queue's flags, each
judge's 0-1 score, each metric's score, and each judge's raw answer. The script shows some columns
in the table and all of them when a row is opened.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..model import Aggregation, Example
from .escape import finite

#: A judge's raw answer is kept up to this many characters (a reasoning judge can write pages).
RAW_LIMIT = 2_000


@dataclass(frozen=True)
class ItemColumns:
    """What the table shows beside the dataset's own fields, each keyed by its column's label."""

    #: Judge (and pool) scores on 0-1, by item id.
    judges: Mapping[str, Mapping[str, float | None]] = field(default_factory=dict)
    #: Reference-based metrics and baselines, by item id.
    metrics: Mapping[str, Mapping[str, float | None]] = field(default_factory=dict)
    #: Each judge's raw answer (or its error), by item id.
    raw: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: The review queue's reasons per item, and its one-line findings.
    flags: Mapping[str, Sequence[str]] = field(default_factory=dict)
    findings: Mapping[str, str] = field(default_factory=dict)


def _column(label: str, kind: str, *, show: bool, wide: bool = False, digits: int | None = None) -> dict[str, object]:
    column: dict[str, object] = {"label": label, "kind": kind, "show": show}
    if wide:
        column["wide"] = True
    if digits is not None:
        column["digits"] = digits
    return column


def item_table(examples: Sequence[Example], quality: str | None, columns: ItemColumns) -> dict[str, object]:
    """``{"columns": [...], "rows": [[...], ...], "contexts": [...]}`` for the page's script."""
    has_reference = any(ex.references for ex in examples)
    spec = [_column("item", "text", show=True), _column("context", "context", show=False),
            _column("reply", "text", show=True, wide=True)]
    if has_reference:
        spec.append(_column("reference", "text", show=False))
    if quality is not None:
        spec += [_column(f"humans ({quality}, mean)", "num", show=True, digits=2),
                 _column(f"ratings ({quality})", "text", show=False)]
    spec.append(_column("flags", "flags", show=True))
    spec += [_column(f"{name} (0–1)", "num", show=True) for name in columns.judges]
    spec += [_column(name, "num", show=False) for name in columns.metrics]
    spec += [_column(f"{name}: raw answer", "text", show=False) for name in columns.raw]
    if columns.findings:
        spec.append(_column("why flagged", "text", show=False))

    context_index: dict[tuple[object, ...], int] = {}
    contexts: list[str] = []
    rows: list[list[object]] = []
    for ex in examples:
        key = (ex.group_id, ex.context)
        index = context_index.get(key)
        if index is None:
            index = context_index[key] = len(contexts)
            contexts.append(ex.context_text())
        row: list[object] = [ex.id, index, ex.candidate if ex.candidate is not None else _pair_text(ex)]
        if has_reference:
            row.append("\n\n".join(ex.references) or None)
        if quality is not None:
            pooled = ex.human(quality, Aggregation.MEAN)
            row.append(finite(pooled) if isinstance(pooled, (int, float)) else None)
            rating = ex.ratings.get(quality)
            row.append(None if rating is None else ", ".join("–" if v is None else _value(v) for v in rating.scores))
        row.append(list(columns.flags.get(ex.id, ())))
        row += [finite(column.get(ex.id)) for column in columns.judges.values()]
        row += [finite(column.get(ex.id)) for column in columns.metrics.values()]
        row += [_clip(column.get(ex.id)) for column in columns.raw.values()]
        if columns.findings:
            row.append(columns.findings.get(ex.id))
        rows.append(row)
    return {"columns": spec, "rows": rows, "contexts": contexts}


def _value(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _pair_text(ex: Example) -> str | None:
    if ex.pair is None:
        return None
    return f"A: {ex.pair.response_a}\n\nB: {ex.pair.response_b}"


def _clip(raw: str | None) -> str | None:
    if raw is None or len(raw) <= RAW_LIMIT:
        return raw
    return raw[:RAW_LIMIT] + f" … ({len(raw) - RAW_LIMIT:,} more characters)"
