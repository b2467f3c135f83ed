"""The rows of CSV or TSV text, each with the line it starts on: what the table readers
(:mod:`.csv_table`, :mod:`.pair_table`) both read before they look at the columns."""

from __future__ import annotations

import csv
import io

from ..errors import DataError


def read_csv_rows(text: str, where: str, delimiter: str) -> list[tuple[int, list[str]]]:
    """Non-blank rows with the line each starts on (a quoted cell may span lines;
    the first line is the one an editor or a spreadsheet shows for the row)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    rows = []
    start = 1
    try:
        for cells in reader:
            if any(c.strip() for c in cells):
                rows.append((start, cells))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise DataError(f"not valid CSV: {exc}", path=where, line=start) from None
    return rows
