"""Column mappings: reading a CSV/TSV or JSON Lines table whose columns have other names.

The command line takes ``--map COLUMN=FIELD`` (:func:`parse_column_map`); the app asks for
the field of each column in a dialog, prefilled from :func:`column_choices`, and builds the
same :class:`ColumnMap` (:func:`column_map_from_fields`). Both open the file with
``open_dataset(path, column_map=...)``, which remembers the mapping with the file.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from ..dataset_catalogue import resolve_dataset
from ..loaders import table_preview
from ..loaders.column_map import (
    NOT_A_FIELD,
    RATING_FIELD_HELP,
    TEXT_FIELDS,
    ColumnMap,
    column_map_from_fields,
    is_rating_field,
    parse_column_map,
    suggested_fields,
    valid_fields_text,
)

#: The field the app's dialog offers for a rating column (its quality is typed beside it).
RATING = "rating"
#: Splits "overall_a1" into its quality and annotator when the column names no quality otherwise.
_QUALITY_ANNOTATOR = re.compile(r"^(?P<quality>.+?)[_\- .](?P<annotator>[A-Za-z]{0,3}\d+)$")
#: "rater1", "score2": a numbered column; its quality is the name without the number.
_NUMBERED = re.compile(r"^(?P<quality>.*[^\d_\- .])[_\- .]?\d+$")


@dataclass(frozen=True)
class ColumnChoice:
    """One column as the app's dialog shows it: a field (or RATING with a quality), proposed by name
    or, for a column of numbers, as a rating."""

    column: str
    field: str  # one of TEXT_FIELDS, RATING or NOT_A_FIELD
    quality: str = ""  # for RATING
    annotator: str = ""  # for RATING
    example: str = ""  # the first non-empty value, shortened

    def field_text(self) -> str:
        """The FIELD of ``COLUMN=FIELD`` (the rating's ``QUALITY:ANNOTATOR``)."""
        return rating_field(self.quality, self.annotator or self.column) if self.field == RATING else self.field


@dataclass(frozen=True)
class ColumnChoices:
    """A table's columns with a proposed field for each."""

    path: Path
    choices: tuple[ColumnChoice, ...]

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(c.column for c in self.choices)


def column_choices(name_or_path: str) -> ColumnChoices:
    """The file's columns and a proposal for each (standard and common names; numbers as ratings)."""
    entry = resolve_dataset(name_or_path)
    assert entry.path is not None
    header, rows = table_preview(entry.path)
    proposed = suggested_fields(header)
    choices = []
    for index, column in enumerate(header):
        values = [row[index].strip() for row in rows if index < len(row) and row[index].strip()]
        example = values[0][:40] if values else ""
        field = proposed[column]
        if is_rating_field(field):
            quality, _, annotator = field.partition(":")
            choices.append(ColumnChoice(column, RATING, quality.strip(), annotator.strip(), example))
        elif field == NOT_A_FIELD and values and all(_is_number(v) for v in values):
            match = _QUALITY_ANNOTATOR.match(column)
            numbered = _NUMBERED.match(column)
            quality, annotator = ((match["quality"], match["annotator"]) if match
                                  else (numbered["quality"], column) if numbered else (column, column))
            choices.append(ColumnChoice(column, RATING, _clean(quality), _clean(annotator), example))
        else:
            choices.append(ColumnChoice(column, field, example=example))
    return ColumnChoices(entry.path, tuple(choices))


def rating_field(quality: str, annotator: str) -> str:
    """``QUALITY:ANNOTATOR``, with the characters a field cannot hold (``:`` and ``=``) replaced."""
    return f"{_clean(quality)}:{_clean(annotator)}"


def _clean(text: str) -> str:
    return text.replace(":", "_").replace("=", "_").strip()


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


__all__ = ["NOT_A_FIELD", "RATING", "RATING_FIELD_HELP", "TEXT_FIELDS", "ColumnChoice", "ColumnChoices", "ColumnMap",
           "column_choices", "column_map_from_fields", "parse_column_map", "rating_field", "valid_fields_text"]
