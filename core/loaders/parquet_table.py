"""Parquet tables of rated data (Hugging Face datasets and annotation platforms ship them), read with
the same contract and column mapping as a CSV file.

Each column is a column of the table and each row a row; the rows are numbered as the same table
written as CSV would be (the header is line 1, the first row line 2), so a message names the row
a spreadsheet shows. Scalars are cells as written, null is an empty cell. A list-valued column of
numbers (a rating per annotator position, as platforms export them) becomes one rating column per
position: ``Overall`` holding ``[4, 5, null]`` is ``Overall:1``, ``Overall:2``, ``Overall:3``, the
annotators named by their position; a list of texts or of ``{role, content}`` turns is one text
per line, as in a JSON Lines table. Reading needs pyarrow, an optional extra
(``pip install 'dialjudge[parquet]'``); without it the load stops with a message that says so.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..model import Dataset
from .csv_table import RATING_COLUMN_SEPARATOR, table_dataset
from .formats import DatasetFile, DatasetFormat, register_format
from .json_table import _cell

#: The message where pyarrow is not installed.
NEEDS_PYARROW = "reading Parquet needs pyarrow, an optional extra: pip install 'dialjudge[parquet]' (or pyarrow)"


def read_parquet(path: str | Path, mapping: Any = None, *, name: str | None = None) -> Dataset:
    path = Path(path)
    rows = parquet_rows(path)
    return table_dataset(rows, mapping, path, name=name, file_format="parquet")


def parquet_rows(path: Path) -> list[tuple[int, list[str]]]:
    """The header and one row of cells per record, as :func:`json_table.table_rows` gives them."""
    where = str(path)
    try:
        parquet = importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise DataError(NEEDS_PYARROW, path=where) from None
    try:
        table = parquet.read_table(path)
    except FileNotFoundError:
        raise DataError("file not found", path=where) from None
    except Exception as exc:  # pyarrow's errors (ArrowInvalid, OSError, ...): a file it cannot read
        raise DataError(f"not a readable Parquet file: {exc}", path=where) from None
    columns: dict[str, list[Any]] = table.to_pydict()
    if not columns:
        return []
    header: list[str] = []
    expanded: list[list[str]] = []
    n_rows = table.num_rows
    for name, values in columns.items():
        positions = _rating_positions(values)
        if positions is None:
            header.append(name)
            expanded.append([_cell(v, where, row + 2, name) for row, v in enumerate(values)])
            continue
        # One rating column per annotator position; a row with fewer ratings has empty cells there.
        for k in range(positions):
            header.append(f"{name}{RATING_COLUMN_SEPARATOR}{k + 1}")
            expanded.append([_number_cell(v[k]) if v is not None and k < len(v) else "" for v in values])
    rows: list[tuple[int, list[str]]] = [(1, header)]
    rows.extend((row + 2, [column[row] for column in expanded]) for row in range(n_rows))
    return rows


def _rating_positions(values: list[Any]) -> int | None:
    """The number of annotator positions of a list-valued column of numbers, or None for any other column."""
    lists = [v for v in values if v is not None]
    if not lists or not all(isinstance(v, list) for v in lists):
        return None
    items = [x for v in lists for x in v if x is not None]
    if not items or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in items):
        return None
    return max(len(v) for v in lists)


def _number_cell(value: Any) -> str:
    if value is None:
        return ""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _read(file: DatasetFile) -> Dataset:
    return read_parquet(file.path, file.mapping, name=file.name)


register_format(DatasetFormat(
    name="parquet", priority=80, suffixes=(".parquet",), takes_mapping=True,
    layout="a .parquet table (the standard column names or a column mapping; list-valued rating columns: one "
           "rating per annotator position; needs pyarrow)",
    read=_read))

__all__ = ["NEEDS_PYARROW", "parquet_rows", "read_parquet"]
