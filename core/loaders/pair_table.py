"""A team's own preference pairs: CSV/TSV rows or JSON Lines records, one vote each.

Columns (or JSON keys) are recognised by name, case-insensitively:

=============  ==========================================================================
role           names
=============  ==========================================================================
prompt         prompt, context, question, input, instruction, query, conversation
response_a     response_a, output_a, answer_a, reply_a, completion_a, candidate_a
response_b     response_b, output_b, answer_b, reply_b, completion_b, candidate_b
winner         winner, preference, label, choice, preferred, human_preference
annotator      annotator, judge, rater, worker, annotator_id, user
id             id, pair_id                    (optional: rows with one id are one pair)
prompt_id      prompt_id, question_id, group_id, conversation_id   (optional)
category       category, domain, task          (optional: a breakdown by category)
model_a/_b     model_a, model_b                (optional; a winner may name one of them)
=============  ==========================================================================

Or mapped: a ``<stem>.mapping.toml`` beside the file with a ``[pairs]`` table naming the columns by role
(``prompt = "dialogue"``, ``winner = "verdict"``, ...), which overrides the recognised names. A prompt
written as text is one turn, kept byte for byte (its lines are not split into turns, no speaker is
invented); in JSON Lines a list of turns gives the turns. Without an id, rows with the same prompt and the same
two replies (in either order) are one pair with several votes (see :mod:`.preference`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from ..errors import DataError
from ..gc_pause import gc_paused
from ..model import Dataset, Turn
from ._common import json_lines, json_type, read_text_file, read_toml_file
from .csv_rows import read_csv_rows
from .exclusions import EMPTY_VERDICT, Exclusions
from .formats import DatasetFormat, register_format
from .preference import PairRecord, first_line, merge_pairs, vote_of

NAMES: dict[str, tuple[str, ...]] = {
    "prompt": ("prompt", "context", "question", "input", "instruction", "query", "conversation"),
    "response_a": ("response_a", "output_a", "answer_a", "reply_a", "completion_a", "candidate_a"),
    "response_b": ("response_b", "output_b", "answer_b", "reply_b", "completion_b", "candidate_b"),
    "winner": ("winner", "preference", "label", "choice", "preferred", "human_preference"),
    "annotator": ("annotator", "judge", "rater", "worker", "annotator_id", "user"),
    "id": ("id", "pair_id"),
    "prompt_id": ("prompt_id", "question_id", "group_id", "conversation_id"),
    "category": ("category", "domain", "task"),
    "model_a": ("model_a",),
    "model_b": ("model_b",),
}
REQUIRED_ROLES = ("prompt", "response_a", "response_b", "winner")
PAIRS_TABLE = "pairs"


@dataclass(frozen=True)
class PairColumns:
    """Which column (or JSON key) plays each role; None where the file has none."""

    prompt: str | None = None
    response_a: str | None = None
    response_b: str | None = None
    winner: str | None = None
    annotator: str | None = None
    id: str | None = None
    prompt_id: str | None = None
    category: str | None = None
    model_a: str | None = None
    model_b: str | None = None

    def named(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    def missing(self) -> list[str]:
        return [role for role in REQUIRED_ROLES if getattr(self, role) is None]

    @classmethod
    def from_toml(cls, path: Path) -> "PairColumns | None":
        """The ``[pairs]`` table of a mapping file, or None when the file has none."""
        raw = read_toml_file(path)
        table = raw.get(PAIRS_TABLE)
        if table is None:
            return None
        if not isinstance(table, dict):
            raise DataError(f"expected a table, found {json_type(table)}", path=str(path), field=PAIRS_TABLE)
        unknown = sorted(set(table) - set(NAMES))
        if unknown:
            raise DataError(f"unknown role (allowed: {', '.join(NAMES)})", path=str(path),
                            field=f"{PAIRS_TABLE}.{unknown[0]}")
        for role, column in table.items():
            if not isinstance(column, str) or not column:
                raise DataError(f"expected a column name, found {json_type(column)}", path=str(path),
                                field=f"{PAIRS_TABLE}.{role}")
        return cls(**table)


def recognise(names: Iterable[str], given: PairColumns | None = None) -> PairColumns:
    """The roles of ``names`` (a header, or a record's keys), by name; ``given`` overrides."""
    by_lower: dict[str, str] = {}
    for name in names:
        by_lower.setdefault(name.strip().lower(), name)
    found = {role: next((by_lower[n] for n in candidates if n in by_lower), None)
             for role, candidates in NAMES.items()}
    columns = PairColumns(**found)
    return replace(columns, **given.named()) if given is not None else columns


def looks_like_pair_names(names: Iterable[str]) -> bool:
    """Two reply columns and a winner column, by name."""
    return not recognise(names).missing()


def looks_like_pair_file(path: Path) -> bool:
    """A CSV/TSV header or a first JSON Lines record with the pair roles recognised by name, or a
    ``[pairs]`` mapping beside the file."""
    if mapping_beside(path) is not None:
        return True
    first = first_line(path)
    if path.suffix.lower() == ".jsonl":
        try:
            record = json.loads(first)
        except (json.JSONDecodeError, RecursionError):
            return False
        return isinstance(record, dict) and looks_like_pair_names(record)
    rows = read_csv_rows(first, str(path), "\t" if path.suffix.lower() == ".tsv" else ",")
    return bool(rows) and looks_like_pair_names(rows[0][1])


def mapping_beside(path: Path) -> PairColumns | None:
    beside = path.with_name(path.stem + ".mapping.toml")
    return PairColumns.from_toml(beside) if beside.is_file() else None


def read_pair_table(path: str | Path, columns: PairColumns | None = None, *, name: str | None = None) -> Dataset:
    path = Path(path)
    where = str(path)
    given = columns if columns is not None else mapping_beside(path)
    text = read_text_file(path)
    if path.suffix.lower() == ".jsonl":
        rows: Iterator[tuple[int, Mapping[str, Any]]] = _json_rows(text, where)
        records = list(rows)
        if not records:
            raise DataError("no pairs: the file has no records", path=where)
        header_line, keys = records[0][0], list(records[0][1])
        fmt = "pairs-jsonl"
    else:
        delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
        table = read_csv_rows(text, where, delimiter)
        if not table:
            raise DataError("empty file: expected a header row", path=where)
        header_line, keys = table[0]
        records = [(line, dict(zip(keys, cells))) for line, cells in table[1:]]
        for line, cells in table[1:]:
            if len(cells) != len(keys):  # a short row is as ragged as a long one
                raise DataError(f"{len(cells)} cells but the header has {len(keys)} columns", path=where, line=line)
        fmt = "pairs-csv"
    roles = recognise(keys, given)
    missing = roles.missing()
    if missing:
        raise DataError(f"no column for {', '.join(missing)} (recognised by name: "
                        + "; ".join(f"{r}: {', '.join(NAMES[r])}" for r in missing)
                        + f"; or map them in a [pairs] table of {path.stem}.mapping.toml); found: {', '.join(keys)}",
                        path=where, line=header_line)
    for role, column in roles.named().items():
        if column not in keys and fmt == "pairs-csv":
            raise DataError(f"the mapping names column {column!r} for {role}, which the header lacks",
                            path=where, line=header_line, field=column)
    prompts: dict[str, tuple[Turn, ...]] = {}  # each vote of a pair repeats its prompt: kept once
    exclusions = Exclusions()
    with gc_paused():
        pair_records = [_record(record, line, roles, where, prompts) for line, record in records
                        if not _empty_verdict(record, line, roles, exclusions)]
    if not pair_records and exclusions.counts:
        raise DataError("no pairs: every row's winner is empty", path=where, line=records[0][0],
                        field=roles.winner or "winner")
    if not pair_records:
        raise DataError("no pairs: the file has a header and no rows", path=where)
    with gc_paused():
        examples, meta = merge_pairs(pair_records, where, id_field=roles.id or "id")
    meta = {"format": fmt, "columns": roles.named(), **meta}
    exclusions.record_into(meta)
    return Dataset(name=name or path.stem, examples=examples, source=where, meta=meta)


def _empty_verdict(row: Mapping[str, Any], line: int, roles: PairColumns, exclusions: Exclusions) -> bool:
    """A row whose winner is empty is no vote: a value fault, left out and counted (a winner in no
    known spelling is an error: it may be a whole column written another way, never guessed)."""
    column = roles.winner or "winner"
    value = row.get(column)
    if value is None or (isinstance(value, str) and not value.strip()):
        exclusions.add(EMPTY_VERDICT, f"line {line}, field {column!r}")
        return True
    return False


def _json_rows(text: str, where: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    for line, obj in json_lines(text, where):
        if not isinstance(obj, dict):
            raise DataError(f"expected an object, found {json_type(obj)}", path=where, line=line)
        yield line, obj


def _record(row: Mapping[str, Any], line: int, roles: PairColumns, where: str,
            prompts: dict[str, tuple[Turn, ...]]) -> PairRecord:
    def cell(role: str, required: bool = False) -> str | None:
        column = getattr(roles, role)
        value = row.get(column) if column is not None else None
        if type(value) is str and value and not value[0].isspace():
            return value  # the common case, checked first: a 100,000-pair file asks this a million times
        if isinstance(value, (int, float)) and not isinstance(value, bool) and role in ("id", "prompt_id"):
            value = str(value)
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                raise DataError("missing value" if column in row else "missing required field", path=where,
                                line=line, field=column)
            return None
        if not isinstance(value, str):
            raise DataError(f"expected text, found {json_type(value)}", path=where, line=line, field=column)
        return value

    prompt_value = row.get(roles.prompt) if roles.prompt else None
    if isinstance(prompt_value, list):
        prompt = _turns(prompt_value, where, line, roles.prompt or "prompt")
    else:
        prompt_text = cell("prompt", required=True)
        assert prompt_text is not None
        # A plain prompt is one turn, kept byte for byte: its lines are not turns unless the file says so
        # (a JSON list of turns), so no speaker is invented and no blank line or indentation is lost.
        prompt = prompts.get(prompt_text) or prompts.setdefault(prompt_text, (Turn("", prompt_text),))
    model_a, model_b = cell("model_a"), cell("model_b")
    winner = row.get(roles.winner) if roles.winner else None
    response_a, response_b = cell("response_a", required=True), cell("response_b", required=True)
    assert response_a is not None and response_b is not None
    return PairRecord(
        line=line, pair_id=cell("id"), prompt=prompt, response_a=response_a, response_b=response_b,
        vote=vote_of(winner, where, line, roles.winner or "winner", model_a=model_a, model_b=model_b),
        as_written=str(winner), annotator=cell("annotator"), prompt_id=cell("prompt_id"), category=cell("category"),
        model_a=model_a, model_b=model_b)


def _turns(value: list[Any], where: str, line: int, field: str) -> tuple[Turn, ...]:
    turns = []
    for k, item in enumerate(value):
        if isinstance(item, str):
            turns.append(Turn("", item))
        elif isinstance(item, dict) and isinstance(text := item.get("content", item.get("text")), str):
            turns.append(Turn(str(item.get("role", item.get("speaker", ""))), text))
        else:
            raise DataError("expected a turn: a string or an object with 'role' and 'content'", path=where,
                            line=line, field=f"{field}[{k}]")
    return tuple(turns)


register_format(DatasetFormat(
    name="pairs", priority=61, shares_suffixes=(".jsonl", ".csv", ".tsv"),
    layout="preference pairs (.csv/.tsv/.jsonl with prompt, response_a, response_b and winner columns)",
    recognise=lambda file: looks_like_pair_file(file.path),
    read=lambda file: read_pair_table(file.path, name=file.name)))

__all__ = ["NAMES", "PairColumns", "looks_like_pair_file", "looks_like_pair_names", "read_pair_table", "recognise"]
