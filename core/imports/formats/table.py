"""CSV or JSON Lines of scores: an item id column (or context and response columns) and either one
score column per judge (wide) or a ``judge`` column with one ``score`` column (long).

Recognised columns, in any case: ``item_id``/``id``; ``context``, ``response``/``candidate``;
``judge``, ``score``; ``raw_output``/``answer``/``output``; ``reasoning``/``explanation``;
``distribution``/``probabilities`` (a JSON object answer -> probability); ``latency``/``latency_s``;
``prompt_tokens``, ``completion_tokens``; ``repeat``. In a wide file every other column whose
non-empty cells are all numbers is a judge's score column, named by its header; a lone ``score``
column without a ``judge`` column is one judge, named after the file. A row without a score but
with a raw answer is read with the template's parser, as a generate run reads its answers.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...errors import DataError
from ...loaders._common import json_lines
from ..records import ImportedRow, ParsedFile, number_or_none

NAME = "table"
DESCRIPTION = "CSV or JSON Lines: an item id column and score columns (one per judge, or a judge column)"

_ALIASES: dict[str, tuple[str, ...]] = {
    "item id": ("item_id", "id"),
    "context": ("context",),
    "response": ("response", "candidate"),
    "judge": ("judge",),
    "score": ("score",),
    "raw answer": ("raw_output", "answer", "output"),
    "reasoning": ("reasoning", "explanation"),
    "probabilities": ("distribution", "probabilities"),
    "latency": ("latency", "latency_s"),
    "prompt tokens": ("prompt_tokens",),
    "completion tokens": ("completion_tokens",),
    "repeat": ("repeat",),
}


def sniff(path: Path, text: str) -> bool:
    return path.suffix.lower() in (".csv", ".tsv", ".jsonl", ".ndjson")


def read(path: Path, text: str) -> ParsedFile:
    records, where = _records(path, text)
    if not records:
        raise DataError(f"{path}: no rows")
    headers = list(dict.fromkeys(k for r in records for k in r))
    lower = {h.lower().strip(): h for h in headers}
    found = {kind: next((lower[a] for a in aliases if a in lower), None) for kind, aliases in _ALIASES.items()}
    fields = {kind: column for kind, column in found.items() if column is not None}
    if found["item id"] is None and (found["context"] is None or found["response"] is None):
        raise DataError(f"{path}: no item id column (item_id or id) and no context and response columns to match "
                        f"items by their text (columns: {', '.join(headers)})")
    if found["judge"] is not None:
        if found["score"] is None:
            raise DataError(f"{path}: a judge column ({found['judge']}) needs a score column")
        score_columns = None
    elif found["score"] is not None:  # one judge, named after the file (--judge-name renames it)
        score_columns = [found["score"]]
    else:
        known = {c for c in found.values() if c is not None}
        score_columns = [h for h in headers if h not in known and _all_numbers(r.get(h) for r in records)]
        if not score_columns:
            raise DataError(f"{path}: no score column (a column of numbers, one per judge, or judge and score "
                            f"columns; columns: {', '.join(headers)})")
        fields["score"] = ", ".join(score_columns)
    rows: list[ImportedRow] = []
    for record, place in zip(records, where):
        common = _common(record, found, place, path)
        if score_columns is None:
            judge = str(record.get(found["judge"] or "") or "").strip()
            if not judge:
                raise DataError(f"{path}: {place}: the judge column {found['judge']!r} is empty")
            rows.append(_row(record, found["score"] or "", judge, place, common))
        else:
            rows.extend(_row(record, column, path.stem if column == found["score"] else column, place, common)
                        for column in score_columns)
    return ParsedFile(NAME, tuple(rows), fields)


def _records(path: Path, text: str) -> tuple[list[Mapping[str, Any]], list[str]]:
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        records: list[Mapping[str, Any]] = []
        where: list[str] = []
        for number, value in json_lines(text, str(path)):
            if not isinstance(value, dict):
                raise DataError(f"{path}: line {number}: a JSON object per line expected")
            records.append(value)
            where.append(f"line {number}")
        return records, where
    dialect = "excel-tab" if path.suffix.lower() == ".tsv" else "excel"
    reader = csv.DictReader(io.StringIO(text), dialect=dialect)
    rows: list[Mapping[str, Any]] = list(reader)
    # The header is line 1; a row's line is its index + 2 (no multi-line cells counted).
    return rows, [f"line {i + 2}" for i in range(len(rows))]


def _all_numbers(values: Any) -> bool:
    seen = False
    for value in values:
        try:
            number = number_or_none(value)
        except (TypeError, ValueError):
            return False
        seen = seen or number is not None
    return seen


def _text(record: Mapping[str, Any], column: str | None) -> str | None:
    if column is None:
        return None
    value = record.get(column)
    return None if value is None or value == "" else str(value)


def _int(record: Mapping[str, Any], column: str | None, place: str, path: Path) -> int:
    value = _text(record, column)
    if value is None:
        return 0
    try:
        return int(float(value))
    except ValueError:
        raise DataError(f"{path}: {place}: {column} is not a whole number: {value!r}") from None


def _common(record: Mapping[str, Any], found: Mapping[str, str | None], place: str, path: Path) -> dict[str, Any]:
    distribution = record.get(found["probabilities"] or "")
    if isinstance(distribution, str) and distribution.strip():
        try:
            distribution = json.loads(distribution)
        except json.JSONDecodeError:
            raise DataError(f"{path}: {place}: {found['probabilities']} is not a JSON object") from None
    if distribution in ("", None):
        distribution = None
    elif not isinstance(distribution, dict):
        raise DataError(f"{path}: {place}: {found['probabilities']} must map answers to probabilities")
    latency = _text(record, found["latency"])
    try:  # a text where a number belongs is a wrong type: named, never a traceback
        probabilities = {str(k): float(v) for k, v in distribution.items()} if distribution else None
    except (TypeError, ValueError):
        raise DataError(f"{path}: {place}: {found['probabilities']} must map answers to numbers") from None
    try:
        latency_s = float(latency) if latency else 0.0
    except ValueError:
        raise DataError(f"{path}: {place}: {found['latency']} is not a number: {latency!r}") from None
    return {
        "item_id": _text(record, found["item id"]),
        "context": _text(record, found["context"]),
        "response": _text(record, found["response"]),
        "raw_output": _text(record, found["raw answer"]) or "",
        "reasoning": _text(record, found["reasoning"]),
        "distribution": probabilities,
        "latency_s": latency_s,
        "prompt_tokens": _int(record, found["prompt tokens"], place, path),
        "completion_tokens": _int(record, found["completion tokens"], place, path),
        "repeat": _int(record, found["repeat"], place, path),
    }


def _row(record: Mapping[str, Any], column: str, judge: str, place: str, common: Mapping[str, Any]) -> ImportedRow:
    value = record.get(column)
    try:
        score, error = number_or_none(value), None
    except (TypeError, ValueError):
        score, error = None, f"the score {value!r} is not a number"
    return ImportedRow(where=place, judge=judge, score=score, error=error, **common)


