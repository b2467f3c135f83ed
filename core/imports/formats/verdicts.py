"""CSV or JSON Lines of pairwise verdicts on pre-paired preference data: a pair id column (the
pre-paired dataset's item ids), a verdict column, and optionally a column saying which reply was
shown first and a judge column.

Recognised columns, in any case: ``pair_id``/``item_id``/``id``; ``verdict``/``winner``;
``first``/``shown_first``/``order``/``position``; ``judge``. A verdict names the pair's reply (A is
the dataset's reply A, whichever was shown first), in the spellings the preference loaders accept
(:func:`dialjudge.core.loaders.preference.winner_label`). The shown-first cell is ``A`` or ``B`` (the
same spellings), or ``AB``/``BA``. Without a judge column the file is one judge, named after the file.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ...errors import DataError
from ...loaders.preference import VOTE_A, VOTE_B, winner_label
from ..records import ParsedFile, VerdictRow
from .table import _records

NAME = "verdicts"
DESCRIPTION = ("CSV or JSON Lines of pairwise verdicts on pre-paired data: a pair id column, a verdict column "
               "(A/B/tie), optionally the reply shown first and a judge column")

_ALIASES: dict[str, tuple[str, ...]] = {
    "pair id": ("pair_id", "item_id", "id"),
    "verdict": ("verdict", "winner"),
    "shown first": ("first", "shown_first", "order", "position"),
    "judge": ("judge",),
}
_ORDERS = {"ab": VOTE_A, "a>b": VOTE_A, "ba": VOTE_B, "b>a": VOTE_B}


def _headers(path: Path, text: str) -> list[str]:
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        line = next((line for line in text.splitlines() if line.strip()), "")
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            return []
        return list(value) if isinstance(value, dict) else []
    dialect = "excel-tab" if path.suffix.lower() == ".tsv" else "excel"
    return next(csv.reader(io.StringIO(text), dialect=dialect), [])


def _found(headers: list[str]) -> dict[str, str | None]:
    lower = {h.lower().strip(): h for h in headers}
    return {kind: next((lower[a] for a in aliases if a in lower), None) for kind, aliases in _ALIASES.items()}


def sniff(path: Path, text: str) -> bool:
    if path.suffix.lower() not in (".csv", ".tsv", ".jsonl", ".ndjson"):
        return False
    found = _found(_headers(path, text))
    return found["pair id"] is not None and found["verdict"] is not None


def read(path: Path, text: str) -> ParsedFile:
    records, where = _records(path, text)
    if not records:
        raise DataError(f"{path}: no rows")
    headers = list(dict.fromkeys(k for r in records for k in r))
    found = _found(headers)
    if found["pair id"] is None or found["verdict"] is None:
        raise DataError(f"{path}: a verdicts file needs a pair id column (pair_id, item_id or id) and a verdict "
                        f"column (verdict or winner); columns: {', '.join(headers)}")
    rows = []
    for record, place in zip(records, where):
        pair = str(record.get(found["pair id"] or "") or "").strip()
        if not pair:
            raise DataError(f"{path}: {place}: the pair id column {found['pair id']!r} is empty")
        judge = path.stem
        if found["judge"] is not None:
            judge = str(record.get(found["judge"]) or "").strip()
            if not judge:
                raise DataError(f"{path}: {place}: the judge column {found['judge']!r} is empty")
        written = record.get(found["verdict"] or "")
        first = None
        if found["shown first"] is not None:
            cell = record.get(found["shown first"])
            if cell not in (None, ""):
                first = _first(cell)
                if first is None:
                    raise DataError(f"{path}: {place}: {found['shown first']} must name the reply shown first "
                                    f"(A, B, AB or BA), not {cell!r}")
        rows.append(VerdictRow(place, judge, pair, winner_label(written), first,
                               "" if written is None else str(written)))
    fields = {kind: column for kind, column in found.items() if column is not None}
    return ParsedFile(NAME, (), fields, verdicts=tuple(rows))


def _first(cell: object) -> str | None:
    text = str(cell).strip().lower().replace(" ", "")
    if text in _ORDERS:
        return _ORDERS[text]
    label = winner_label(cell)
    return label if label in (VOTE_A, VOTE_B) else None
