"""CSV (or TSV) files with a column mapping.

A :class:`CsvMapping` says which column holds the id, the group, the context (and
how its turns are separated), the candidate, the references, the fact, the
system and the tags, and for each rated quality which columns hold the
annotators' values and on what scale. It can be written in Python or read from a
TOML file (``CsvMapping.from_toml``; the layout is documented in
datasets/README.md). Empty cells are missing ratings (None), never imputed.

Without a mapping, a file whose columns have the standard names is read with
:func:`default_mapping`: ``id``, ``group_id``, ``context``, ``candidate`` (or
``response``), ``reference``/``references``, ``fact``, ``system``, ``tags``, and
one column per annotator named ``<quality>:<annotator>``. Those scales are
inferred from the values seen and recorded in ``meta["inferred_scales"]``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from ..errors import ColumnMappingNeeded, DataError
from ..model import Dataset, Example, Level, Rating, RatingValue, Scale, ScaleKind, Turn
from ._common import (
    alternating_turns,
    read_text_file,
    speaker_turns,
    split_speaker,
)
from .csv_rows import read_csv_rows
from .exclusions import NOT_A_NUMBER, NOT_FINITE, Exclusions, checked_value
from .formats import DatasetFormat, register_format
from .table_mapping import RATING_COLUMN_SEPARATOR, CsvMapping, QualityColumns

if TYPE_CHECKING:
    from .column_map import ColumnMap

# ---------------------------------------------------------------- the default mapping

_STANDARD = {
    "id": ("id",),
    "group": ("group_id", "group"),
    "context": ("context",),
    "candidate": ("candidate", "response"),
    "fact": ("fact",),
    "system": ("system",),
    "tags": ("tags",),
}
_STANDARD_REFERENCES = ("reference", "references")


def default_mapping(header: Sequence[str], *, delimiter: str = ",") -> CsvMapping | None:
    """The mapping for a header with the standard column names, or None when it
    has no candidate/response column or no ``quality:annotator`` columns."""
    present = set(header)
    chosen: dict[str, Any] = {}
    for key, names in _STANDARD.items():
        chosen[key] = next((n for n in names if n in present), None)
    if chosen["candidate"] is None:
        return None
    qualities: dict[str, list[str]] = {}
    for column in header:
        quality, sep, annotator = column.rpartition(RATING_COLUMN_SEPARATOR)
        if sep and quality.strip() and annotator.strip():
            qualities.setdefault(quality.strip(), []).append(column)
    if not qualities:
        return None
    references = tuple(n for n in _STANDARD_REFERENCES if n in present)
    placeholder = Scale(ScaleKind.CATEGORICAL)  # replaced once the values are seen
    return CsvMapping(
        **chosen,
        references=references,
        reference_separator="\n" if "references" in references else None,
        tag_separator=",",
        delimiter=delimiter,
        qualities={q: QualityColumns(tuple(cols), placeholder,
                                     tuple(c.rpartition(RATING_COLUMN_SEPARATOR)[2].strip() for c in cols))
                   for q, cols in qualities.items()},
        infer_scales=True,
    )


def infer_scale(values: Sequence[str]) -> Scale | None:
    """A scale that fits the non-empty cells: 0/1 -> binary, integers -> ordinal
    min..max, other numbers -> continuous min..max, anything else -> categorical.

    Cells that are mostly numbers make a numeric scale from the numbers alone: a stray "abc" or
    "NaN" is a value fault left out when the row is read, never a reason to turn the quality into
    labels (the data contract, datasets/README.md)."""
    cells = [v.strip() for v in values if v.strip()]
    if not cells:
        return None
    parsed = [_parse_number(c) for c in cells]
    numbers = [n for n in parsed if n is not None]
    if len(numbers) * 2 <= len(parsed):
        return Scale(ScaleKind.CATEGORICAL, labels=tuple(sorted(set(cells))))
    low, high = min(numbers), max(numbers)
    if all(isinstance(n, int) for n in numbers):
        if set(numbers) <= {0, 1}:
            return Scale(ScaleKind.BINARY, 0, 1)
        return Scale(ScaleKind.ORDINAL, low, high) if high > low else None
    return Scale(ScaleKind.CONTINUOUS, low, high) if high > low else None


# ---------------------------------------------------------------- reading


def read_csv(path: str | Path, mapping: CsvMapping | ColumnMap | None = None, *,
             name: str | None = None) -> Dataset:
    """Read a CSV file with a column mapping (None: the default mapping for standard column names;
    a ColumnMap: the columns it names, the others by their standard names)."""
    path = Path(path)
    delimiter = mapping.delimiter if isinstance(mapping, CsvMapping) else (
        "\t" if path.suffix.lower() == ".tsv" else ",")
    rows = read_csv_rows(read_text_file(path), str(path), delimiter)
    return table_dataset(rows, mapping, path, name=name, file_format="csv", delimiter=delimiter)


def table_dataset(rows: list[tuple[int, list[str]]], mapping: CsvMapping | ColumnMap | None, path: Path, *,
                  name: str | None, file_format: str, delimiter: str = ",",
                  reference_separator: str | None = None) -> Dataset:
    """The dataset of a table's rows, (line, cells) with the header first: a CSV file's or, with each
    record's values as text, a JSON Lines file's."""
    where = str(path)
    if not rows:
        raise DataError("empty file: expected a header row", path=where)
    header_line, header = rows[0]
    given_map = None if mapping is None or isinstance(mapping, CsvMapping) else mapping
    if mapping is None:
        mapping = default_mapping(header, delimiter=delimiter)
        if mapping is None:
            raise needs_mapping_error(header, where, header_line)
    elif not isinstance(mapping, CsvMapping):
        mapping = mapping.table_mapping(header, delimiter=delimiter, where=where,
                                        reference_separator=reference_separator)
    columns = _column_index(header, mapping, where, header_line)
    data_rows = rows[1:]
    inferred: dict[str, Scale] = {}
    if mapping.infer_scales:
        mapping, inferred = _with_inferred_scales(mapping, columns, data_rows, where)

    examples: list[Example] = []
    first_line: dict[str, int] = {}
    exclusions = Exclusions()
    for number, (line, cells) in enumerate(data_rows, start=1):
        if len(cells) != len(header):
            raise DataError(f"{len(cells)} cells but the header has {len(header)} columns (a "
                            f"{'short' if len(cells) < len(header) else 'long'} row: a cell lost or a "
                            "delimiter inside an unquoted text?)", path=where, line=line)
        example = _row_example(cells, number, line, header, columns, mapping, where, exclusions)
        if example.id in first_line:
            raise DataError(f"duplicate id {example.id!r} (first on line {first_line[example.id]})",
                            path=where, line=line, field=mapping.id)
        first_line[example.id] = line
        examples.append(example)
    meta: dict[str, Any] = {"format": file_format}
    if given_map is not None:
        meta["column_map"] = given_map.as_text()
    if inferred:
        meta["inferred_scales"] = {q: s.to_dict() for q, s in inferred.items()}
    exclusions.record_into(meta)
    return Dataset(name=name or path.stem, examples=examples, source=where, meta=meta)


def needs_mapping_error(header: Sequence[str], where: str, line: int | None = None) -> ColumnMappingNeeded:
    """The error for a table whose columns do not have the standard names: it says how to map them."""
    return ColumnMappingNeeded(
        "the columns do not have the standard names (context, candidate or response, and one "
        "'<quality>:<annotator>' column per rating)", list(header), path=where, line=line)


def _column_index(header: list[str], mapping: CsvMapping, where: str, line: int) -> dict[str, int]:
    index: dict[str, int] = {}
    duplicated = set()
    for i, name in enumerate(header):
        if name in index:
            duplicated.add(name)
        index.setdefault(name, i)
    for name in mapping.named_columns():
        if name not in index:
            raise DataError(f"column named by the mapping is not in the header (columns: "
                            f"{', '.join(header)})", path=where, line=line, field=name)
        if name in duplicated:
            raise DataError("the header has this column twice", path=where, line=line, field=name)
    return index


def _with_inferred_scales(mapping: CsvMapping, columns: dict[str, int],
                          rows: list[tuple[int, list[str]]], where: str) -> tuple[CsvMapping, dict[str, Scale]]:
    qualities = {}
    inferred = {}
    for quality, spec in mapping.qualities.items():
        values = [cells[columns[c]] for _, cells in rows for c in spec.columns if columns[c] < len(cells)]
        scale = infer_scale(values)
        if scale is None:
            raise DataError(f"cannot infer a scale for {quality!r} from its values (none, or one "
                            "value only); give a column mapping with the scale (a TOML mapping beside the "
                            "file: datasets/README.md)", path=where,
                            field=spec.columns[0])
        qualities[quality] = QualityColumns(spec.columns, scale, spec.annotators)
        inferred[quality] = scale
    return replace(mapping, qualities=qualities), inferred


def _row_example(cells: list[str], number: int, line: int, header: list[str], columns: dict[str, int],
                 mapping: CsvMapping, where: str, exclusions: Exclusions) -> Example:
    def cell(name: str | None) -> str:
        if name is None:
            return ""
        i = columns[name]
        return cells[i] if i < len(cells) else ""

    def fail(message: str, column: str | None) -> DataError:
        return DataError(message, path=where, line=line, field=column)

    example_id = cell(mapping.id).strip() if mapping.id else f"row-{number}"
    if not example_id:
        raise fail("empty id", mapping.id)
    group_id = cell(mapping.group).strip() or example_id
    context = _context(cell(mapping.context), mapping, fail) if mapping.context else ()
    references: list[str] = []
    for column in mapping.references:
        text = cell(column)
        parts = text.split(mapping.reference_separator) if mapping.reference_separator else [text]
        references.extend(p.strip() for p in parts if p.strip())
    tags = frozenset(t.strip() for t in cell(mapping.tags).split(mapping.tag_separator) if t.strip())
    ratings = {}
    for quality, spec in mapping.qualities.items():
        scores = tuple(_cell_value(cell(c), spec.scale, exclusions, f"line {line} (id {example_id!r}), field {c!r}")
                       for c in spec.columns)
        ratings[quality] = Rating(scores=scores, scale=spec.scale, annotators=spec.annotator_names)
    extra: dict[str, Any] = {}
    if mapping.keep_other_columns:
        named = set(mapping.named_columns())
        extra = {h: cell(h) for h in header if h not in named and h}
    level = Level(mapping.level)
    return Example(
        id=example_id,
        group_id=group_id,
        context=context,
        candidate=cell(mapping.candidate).strip() if mapping.candidate else None,
        references=tuple(references),
        fact=cell(mapping.fact).strip() or None,
        system=cell(mapping.system).strip() or None,
        tags=tags,
        ratings=ratings,
        level=level,
        language=mapping.language,
        extra=extra,
    )


def _context(text: str, mapping: CsvMapping, fail: Any) -> tuple[Turn, ...]:
    pieces = [p.strip() for p in text.split(mapping.turn_separator) if p.strip()]
    if mapping.parse_speakers is False:
        return alternating_turns(pieces)
    if mapping.parse_speakers is None:
        labelled = speaker_turns(pieces)
        return labelled if labelled is not None else alternating_turns(pieces)
    turns = []
    for k, piece in enumerate(pieces, start=1):
        parsed = split_speaker(piece)
        if parsed is None:
            raise fail(f"turn {k} has no 'Speaker: text' prefix: {piece[:40]!r}", mapping.context)
        turns.append(Turn(*parsed))
    return tuple(turns)


def _cell_value(text: str, scale: Scale, exclusions: Exclusions, place: str) -> RatingValue:
    """A cell's rating; an empty cell is missing, a value fault is missing and counted."""
    text = text.strip()
    if not text:
        return None
    if scale.kind is ScaleKind.CATEGORICAL:
        return checked_value(text, scale, exclusions, place)
    number = _parse_number(text)
    if number is None:
        exclusions.add(NOT_FINITE if _is_non_finite(text) else NOT_A_NUMBER, f"{place}: {text!r}")
        return None
    return checked_value(number, scale, exclusions, place)


def _is_non_finite(text: str) -> bool:
    try:
        return not math.isfinite(float(text))
    except ValueError:
        return False


def _parse_number(text: str) -> int | float | None:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


register_format(DatasetFormat(
    name="csv", priority=50, suffixes=(".csv", ".tsv"), takes_mapping=True,
    layout="a .csv/.tsv table (with a column mapping or the standard column names)",
    read=lambda file: read_csv(file.path, file.mapping, name=file.name)))
