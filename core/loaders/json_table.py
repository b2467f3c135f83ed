"""JSON Lines of flat records read as a table: each key is a column, each record a row.

A ``.jsonl`` file whose records are not dialjudge's native ones (no header line, no
``ratings`` object, no list of context turns) is read like a CSV file
(:mod:`.csv_table`): by the standard column names, by a column mapping
(``--map COLUMN=FIELD``, the app's column dialog, or ``<stem>.mapping.toml`` beside it),
or it stops with an error that says how to give one and lists the file's keys.

Values become the cells a CSV file would hold: numbers and texts as written, ``null``
or a missing key an empty cell (a missing rating), a list of texts one text per line,
a list of ``{speaker, text}`` or ``{role, content}`` turns one ``Speaker: text`` line
per turn. Several references in a list are one reference per item.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DataError
from ..model import Dataset
from ._common import first_json_object, json_lines, json_type, read_text_file
from .csv_table import table_dataset
from .formats import DatasetFile, DatasetFormat, register_format
from .native import HEADER_KEY, RECORD_KEYS
from .table_mapping import CsvMapping

#: Splits a cell made from a list (of references) back into its items.
LIST_SEPARATOR = "\n"


def read_json_table(path: str | Path, mapping: Any = None, *, name: str | None = None,
                    text: str | None = None) -> Dataset:
    """Read a JSON Lines file of flat records with a column mapping (a CsvMapping or a ColumnMap),
    or by the standard column names when ``mapping`` is None."""
    path = Path(path)
    rows = table_rows(read_text_file(path) if text is None else text, str(path))
    separator = LIST_SEPARATOR if not isinstance(mapping, CsvMapping) else None
    return table_dataset(rows, mapping, path, name=name, file_format="jsonl-table",
                         reference_separator=separator)


def table_rows(text: str, where: str) -> list[tuple[int, list[str]]]:
    """The header (every key, in the order first seen) and one row of cells per record."""
    records: list[tuple[int, dict[str, Any]]] = []
    keys: dict[str, None] = {}
    for line, record in json_lines(text, where):
        if not isinstance(record, dict):
            raise DataError(f"expected a JSON object, found {json_type(record)}", path=where, line=line)
        records.append((line, record))
        keys.update(dict.fromkeys(record))
    if not records:
        return []
    header = list(keys)
    rows: list[tuple[int, list[str]]] = [(records[0][0], header)]
    for line, record in records:
        rows.append((line, [_cell(record.get(key), where, line, key) for key in header]))
    return rows


def file_keys(text: str, where: str) -> list[str]:
    """Every key of the records, in the order first seen."""
    rows = table_rows(text, where)
    return rows[0][1] if rows else []


def looks_like_records(text: str) -> bool:
    """A first line that is a JSON object of flat values and not a native record: no header key, no
    ``ratings`` object, and no list of context turns."""
    record = first_json_object(text)
    if not record or HEADER_KEY in record or "ratings" in record:
        return False
    if "id" in record and (isinstance(record.get("context"), list) or set(record) <= set(RECORD_KEYS)):
        return False  # native (a list of {speaker, text} turns, or only native keys): its reader says what is wrong
    return all(_is_flat(value) for value in record.values())


def _is_flat(value: Any) -> bool:
    if isinstance(value, list):
        return all(isinstance(v, (str, dict)) for v in value)
    return value is None or isinstance(value, (str, int, float, bool))


def _cell(value: Any, where: str, line: int, key: str) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return LIST_SEPARATOR.join(_list_item(v, where, line, f"{key}[{i}]") for i, v in enumerate(value))
    raise DataError(f"expected a text, a number or a list of texts or turns, found {json_type(value)}",
                    path=where, line=line, field=key)


def _list_item(value: Any, where: str, line: int, field: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        speaker = value.get("speaker", value.get("role"))
        text = value.get("text", value.get("content"))
        if isinstance(speaker, str) and isinstance(text, str):
            return f"{speaker}: {text}"
    raise DataError("expected a text or a turn ({speaker, text} or {role, content}), found "
                    f"{json_type(value)}", path=where, line=line, field=field)


def _read(file: DatasetFile) -> Dataset:
    return read_json_table(file.path, file.mapping, name=file.name, text=file.text)


register_format(DatasetFormat(
    name="jsonl-table", priority=70, shares_suffixes=(".jsonl",), takes_mapping=True,
    layout="JSON Lines of flat records (.jsonl; the standard column names or a column mapping)",
    # Only a .jsonl file: a .json file holding one object is a JSON document in some other layout.
    recognise=lambda file: file.path.suffix.lower() == ".jsonl" and looks_like_records(file.head), read=_read))

__all__ = ["file_keys", "looks_like_records", "read_json_table", "table_rows"]
