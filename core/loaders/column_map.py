"""A column mapping given as ``COLUMN=FIELD`` pairs: ``--map reply=candidate`` on the command
line, the app's column dialog, or remembered with a file opened before.

It names, for the columns of a CSV/TSV file or the keys of a JSON Lines file of flat
records, the dataset field each one holds: one of :data:`TEXT_FIELDS`, a rating
``QUALITY:ANNOTATOR`` (the standard rating column name), or ``-`` (not a field: the
column is kept in ``Example.extra``). Columns it does not name are read by their
standard names, as without a mapping. The scales of the ratings are inferred from the
values, as for the standard names; a TOML mapping beside the file states them instead
(datasets/README.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ColumnMappingNeeded, DataError
from ..model import Scale, ScaleKind
from .table_mapping import RATING_COLUMN_SEPARATOR, CsvMapping, QualityColumns

#: The fields a column may hold besides ratings, in the order the app's dialog lists them.
TEXT_FIELDS = ("id", "group_id", "context", "candidate", "reference", "fact", "system", "tags")
#: A column that is no field of the dataset (kept in Example.extra).
NOT_A_FIELD = "-"
#: Fields more than one column may hold: each column is one more reference.
REPEATABLE_FIELDS = frozenset({"reference"})
RATING_FIELD_HELP = "QUALITY:ANNOTATOR for a rating (e.g. Overall:a1)"

#: Where each text field goes in a CsvMapping.
_MAPPING_KEY = {"id": "id", "group_id": "group", "context": "context", "candidate": "candidate",
                "fact": "fact", "system": "system", "tags": "tags"}
#: Standard names (and common alternatives) the app's dialog proposes for each text field, compared
#: case-insensitively. Only a proposal: the user sees it and confirms or changes it.
_SUGGESTED_NAMES = {
    "id": ("id", "item_id", "example_id"),
    "group_id": ("group_id", "group", "dialogue_id", "dialog_id", "conversation_id", "context_id"),
    "context": ("context", "history", "dialogue", "dialog", "conversation", "prompt"),
    "candidate": ("candidate", "response", "reply", "hypothesis", "output", "answer"),
    "reference": ("reference", "references", "gold", "ground_truth"),
    "fact": ("fact", "knowledge", "persona"),
    "system": ("system", "model"),
    "tags": ("tags",),
}
_RATING_FIELD = re.compile(r"^(?P<quality>[^:=]*[^:=\s])\s*:\s*(?P<annotator>[^:=\s][^:=]*)$")


def valid_fields_text() -> str:
    return f"{', '.join(TEXT_FIELDS)}, {RATING_FIELD_HELP}, or {NOT_A_FIELD} (not a field)"


def is_rating_field(field: str) -> bool:
    return _RATING_FIELD.match(field) is not None


@dataclass(frozen=True)
class ColumnMap:
    """Which field each named column holds, in the order given."""

    pairs: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        _check_pairs(self.pairs)

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(column for column, _ in self.pairs)

    def as_text(self) -> list[str]:
        """The ``COLUMN=FIELD`` items that give this mapping back through :func:`parse_column_map`."""
        return [f"{column}={field}" for column, field in self.pairs]

    def check_columns(self, header: Sequence[str], where: str) -> None:
        """DataError naming the file's columns when the mapping names one the file does not have."""
        present = set(header)
        for column in self.columns:
            if column not in present:
                raise DataError(f"the column mapping names a column the file does not have (the file's columns: "
                                f"{', '.join(header) or 'none'})", path=where, field=column)

    def table_mapping(self, header: Sequence[str], *, delimiter: str = ",", where: str = "",
                      reference_separator: str | None = None) -> CsvMapping:
        """The CsvMapping for a file with this header: the named columns as given, the others by
        their standard names. The rating scales are inferred from the values when the file is read."""
        self.check_columns(header, where)
        named = dict(self.pairs)
        given = {_field_key(field) for field in named.values()}
        fields: dict[str, Any] = {}
        references: list[str] = []
        ratings: dict[str, list[tuple[str, str]]] = {}
        for column in header:
            field = named.get(column)
            if field is None:
                field = _standard_field(column)
                if field is not None and _field_key(field) in given:
                    continue  # a column of the standard name whose field the mapping gave to another column
            if field is None or field == NOT_A_FIELD:
                continue
            if field in REPEATABLE_FIELDS:
                references.append(column)
            elif field in _MAPPING_KEY:
                fields[_MAPPING_KEY[field]] = column
            else:
                quality, _, annotator = field.partition(RATING_COLUMN_SEPARATOR)
                ratings.setdefault(quality.strip(), []).append((column, annotator.strip()))
        if reference_separator is None and "references" in references and "references" not in named:
            reference_separator = "\n"  # the standard "references" column holds one per line
        if "candidate" not in fields:
            raise ColumnMappingNeeded(
                "no column holds the candidate (the reply to judge): map one to candidate", list(header),
                path=where)
        placeholder = Scale(ScaleKind.CATEGORICAL)  # replaced once the values are seen
        return CsvMapping(
            **fields,
            references=tuple(references),
            reference_separator=reference_separator,
            delimiter=delimiter,
            qualities={q: QualityColumns(tuple(c for c, _ in cols), placeholder, tuple(a for _, a in cols))
                       for q, cols in ratings.items()},
            infer_scales=True,
        )


def parse_column_map(items: Iterable[str]) -> ColumnMap:
    """``["reply=candidate", "r1=Overall:a1"]`` as a ColumnMap; DataError for a malformed item, an
    unknown field (naming the valid ones) or a column or field given twice."""
    pairs = []
    for item in items:
        column, sep, field = item.rpartition("=")
        if not sep or not column.strip() or not field.strip():
            raise DataError(f"column mapping: expected COLUMN=FIELD, found {item!r} (fields: {valid_fields_text()})")
        pairs.append((column.strip(), field.strip()))
    return ColumnMap(tuple(pairs))


def column_map_from_fields(fields: Mapping[str, str]) -> ColumnMap:
    """A ColumnMap from {column: field} (the app's dialog)."""
    return ColumnMap(tuple(fields.items()))


def suggested_fields(columns: Sequence[str]) -> dict[str, str]:
    """A proposal for the app's dialog: each column's field by its name (``-`` where none fits).
    A field is proposed for one column only (the first), except references."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for column in columns:
        field = _standard_field(column) or _suggested_field(column) or NOT_A_FIELD
        if field != NOT_A_FIELD and field not in REPEATABLE_FIELDS and field in taken:
            field = NOT_A_FIELD
        taken.add(field)
        out[column] = field
    return out


def _check_pairs(pairs: Sequence[tuple[str, str]]) -> None:
    seen_columns: set[str] = set()
    seen_fields: dict[str, str] = {}
    for column, field in pairs:
        if field not in TEXT_FIELDS and field != NOT_A_FIELD and not is_rating_field(field):
            raise DataError(f"column mapping: unknown field {field!r} for column {column!r} (fields: "
                            f"{valid_fields_text()})")
        if column in seen_columns:
            raise DataError(f"column mapping: column {column!r} is mapped twice")
        seen_columns.add(column)
        key = _field_key(field)
        if field != NOT_A_FIELD and field not in REPEATABLE_FIELDS:
            if key in seen_fields:
                raise DataError(f"column mapping: field {field!r} is given to two columns ({seen_fields[key]!r} "
                                f"and {column!r}); only {', '.join(sorted(REPEATABLE_FIELDS))} may be")
            seen_fields[key] = column


def _field_key(field: str) -> str:
    """Rating fields compare without the spaces around the colon ("Overall : a1" is "Overall:a1")."""
    match = _RATING_FIELD.match(field)
    return f"{match['quality']}:{match['annotator'].strip()}" if match else field


def _standard_field(column: str) -> str | None:
    """The field a column holds by its standard name (as read without a mapping), or None."""
    standard = {"id": "id", "group_id": "group_id", "group": "group_id", "context": "context",
                "candidate": "candidate", "response": "candidate", "reference": "reference",
                "references": "reference", "fact": "fact", "system": "system", "tags": "tags"}
    if column in standard:
        return standard[column]
    return column.strip() if is_rating_field(column) else None


def _suggested_field(column: str) -> str | None:
    lowered = column.strip().lower()
    for field, names in _SUGGESTED_NAMES.items():
        if lowered in names:
            return field
    return None


__all__ = ["ColumnMap", "NOT_A_FIELD", "TEXT_FIELDS", "column_map_from_fields", "is_rating_field",
           "parse_column_map", "suggested_fields", "valid_fields_text"]
