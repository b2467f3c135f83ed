"""dialjudge's own format: JSON Lines, one example per line (see datasets/README.md).

An optional first line ``{"dialjudge_dataset": 1, "name": ..., "description": ...,
"meta": {...}}`` names the dataset. Every other line is one example record. Keys
the format does not define are kept in ``Example.extra`` and written back at the
top level of the record, so a file survives read -> write unchanged.

Reading checks every record and stops at the first problem with a DataError
naming the file, the line and the field; nothing is returned half-loaded.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import DataError
from ..gc_pause import gc_paused
from ..model import Dataset, Example, Level, Perturbation, Rating, Scale, ScaleKind, Turn
from ._common import (
    describe_scale,
    first_json_object,
    iter_file_line_blocks,
    json_line_parser,
    json_type,
    leading_lines,
    line_blocks,
    type_name,
)
from .formats import DatasetFormat, register_format

FORMAT_VERSION = 1
HEADER_KEY = "dialjudge_dataset"
HEADER_KEYS = frozenset({HEADER_KEY, "name", "description", "meta"})

#: The keys the format defines, in the order the writer puts them.
RECORD_KEYS = ("id", "group_id", "level", "context", "candidate", "references", "fact", "system",
               "language", "tags", "is_reference", "adversarial", "ratings")
_RECORD_KEY_SET = frozenset(RECORD_KEYS)
_LEVELS = {level.value: level for level in Level}
_SCALE_KINDS = {kind.value: kind for kind in ScaleKind}


# ---------------------------------------------------------------- writing


def example_to_record(example: Example) -> dict[str, Any]:
    """The JSON object of one example. Fields at their default are left out
    (group_id equal to id, level turn, empty lists, null, false)."""
    record: dict[str, Any] = {"id": example.id}
    if example.group_id != example.id:
        record["group_id"] = example.group_id
    if example.level is not Level.TURN:
        record["level"] = example.level.value
    record["context"] = [{"speaker": t.speaker, "text": t.text} for t in example.context]
    if example.level is Level.TURN or example.candidate is not None:
        record["candidate"] = example.candidate
    if example.references:
        record["references"] = list(example.references)
    for key in ("fact", "system", "language"):
        value = getattr(example, key)
        if value is not None:
            record[key] = value
    if example.tags:
        record["tags"] = sorted(example.tags)
    if example.is_reference:
        record["is_reference"] = True
    if example.adversarial is not None:
        record["adversarial"] = example.adversarial.to_dict()
    record["ratings"] = {quality: rating.to_dict() for quality, rating in example.ratings.items()}
    for key, value in example.extra.items():
        if key in _RECORD_KEY_SET or key == HEADER_KEY:
            raise DataError(f"extra key {key!r} clashes with a field of the format",
                            record=example.id, field=f"extra.{key}")
        record[key] = value
    return record


def header_record(dataset: Dataset) -> dict[str, Any]:
    return {HEADER_KEY: FORMAT_VERSION, "name": dataset.name, "description": dataset.description,
            "meta": dataset.meta}


def write_native(dataset: Dataset, path: str | Path) -> Path:
    """Write the dataset as native JSONL (header line first).

    Each record is checked with the reader's own rules before anything is
    written, so the writer never leaves a file the reader would refuse; the file
    is replaced in one step, so a failed write leaves any old file intact.
    """
    path = Path(path)
    lines = [_dumps(header_record(dataset), path, "header")]
    for example in dataset.examples:
        try:
            record = example_to_record(example)
        except DataError as exc:
            raise DataError(exc.reason, path=str(path), record=example.id, field=exc.field) from None
        record_to_example(record, path=str(path), label=example.id)
        lines.append(_dumps(record, path, example.id))
    text = "\n".join(lines) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise DataError(f"cannot write: {exc.strerror or exc}", path=str(path)) from None
    return path


def _dumps(record: Mapping[str, Any], path: Path, what: str) -> str:
    try:
        line = json.dumps(record, ensure_ascii=False, allow_nan=False)
        line.encode("utf-8")  # a lone surrogate would only fail halfway through the write
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        raise DataError(f"cannot be written as JSON: {exc}", path=str(path), record=what) from None
    return line


# ---------------------------------------------------------------- reading


def read_native(path: str | Path, *, name: str | None = None) -> Dataset:
    """Read a native JSONL file. ``name`` overrides the header's name (default: the file stem)."""
    path = Path(path)
    return native_dataset_of_blocks(iter_file_line_blocks(path), path, name=name)


def looks_like_native(text: str) -> bool:
    """A first line that is a whole JSON object with a header or an id, followed by more lines.
    ``text`` may be the whole file or only its first two non-blank lines."""
    lines = leading_lines(text, 2)
    record = first_json_object(lines[0]) if lines else None
    if record is None:
        return False
    if "dialjudge_dataset" in record:
        return True
    return "id" in record and "context" in record and (len(lines) < 2 or lines[1].startswith("{"))


def split_records(text: str) -> list[str]:
    """The file's lines. Only "\\n" ends a record: str.splitlines would also split
    inside texts holding U+2028 or U+0085, which JSON leaves unescaped."""
    return text.split("\n")


class SharedValues:
    """The values many records of one file repeat, kept once (see :class:`Example`'s note on sharing).

    Every candidate of one context repeats its turns, the fact and the references; every record
    repeats the speakers, the annotator names, the quality names, the scales and most ratings.
    Each is looked up by its value, and the first one read is the one every later record points
    to, so a 100,000-item dataset holds one copy of each and its memory grows with its distinct
    texts. A table lives for one read; the dataset keeps only the shared values themselves.
    """

    __slots__ = ("strings", "turns", "contexts", "string_tuples", "tag_sets", "ratings", "rating_maps",
                 "extras")

    def __init__(self) -> None:
        self.strings: dict[str, str] = {}
        self.turns: dict[tuple[str, str], Turn] = {}
        self.contexts: dict[tuple[int, ...], tuple[Turn, ...]] = {}
        self.string_tuples: dict[tuple[str, ...], tuple[str, ...]] = {}
        self.tag_sets: dict[tuple[str, ...], frozenset[str]] = {}
        #: (the scale's items and their types, scores, their types, annotators) -> the Rating checked once.
        self.ratings: dict[tuple[Any, ...], Rating] = {}
        self.rating_maps: dict[tuple[tuple[str, int], ...], Mapping[str, Rating]] = {}
        self.extras: dict[tuple[Any, ...], Mapping[str, Any]] = {}

    def string(self, value: str) -> str:
        return self.strings.setdefault(value, value)

    def optional_string(self, value: str | None) -> str | None:
        return None if value is None else self.strings.setdefault(value, value)

    def turn(self, speaker: str, text: str) -> Turn:
        key = (speaker, text)
        turn = self.turns.get(key)
        if turn is None:
            turn = self.turns[key] = Turn(self.string(speaker), self.string(text))
        return turn

    def context(self, turns: list[Turn]) -> tuple[Turn, ...]:
        key = tuple(map(id, turns))  # the turns are shared, so equal turns are the same objects
        context = self.contexts.get(key)
        if context is None:
            context = self.contexts[key] = tuple(turns)
        return context

    def strings_tuple(self, values: list[str]) -> tuple[str, ...]:
        key = tuple(values)
        shared = self.string_tuples.get(key)
        if shared is None:
            shared = self.string_tuples[key] = tuple(self.string(v) for v in values)
        return shared

    def tags(self, values: list[str]) -> frozenset[str]:
        key = tuple(values)
        shared = self.tag_sets.get(key)
        if shared is None:
            shared = self.tag_sets[key] = frozenset(self.string(v) for v in values)
        return shared

    def rating_map(self, ratings: dict[str, Rating]) -> Mapping[str, Rating]:
        key = tuple((quality, id(rating)) for quality, rating in ratings.items())
        shared = self.rating_maps.get(key)
        if shared is None:
            shared = self.rating_maps[key] = {self.string(q): r for q, r in ratings.items()}
        return shared

    def extra(self, extra: dict[str, Any]) -> Mapping[str, Any]:
        """Extras of plain values (a topic, a split name) are shared; others are the record's own."""
        try:
            key = tuple((k, type(v), v) for k, v in extra.items() if type(v) in _PLAIN_TYPES)
        except TypeError:
            return extra
        if len(key) != len(extra):
            return extra
        shared = self.extras.get(key)
        if shared is None:
            shared = self.extras[key] = {self.string(k): v for k, v in extra.items()}
        return shared


_PLAIN_TYPES = (str, int, float, bool, type(None))


def native_dataset(lines: Iterable[str], path: Path, *, name: str | None = None) -> Dataset:
    """The dataset of a native file's lines (as ``text.split("\\n")``)."""
    return native_dataset_of_blocks(line_blocks(lines), path, name=name)


def native_dataset_of_blocks(blocks: Iterable[list[str]], path: Path, *, name: str | None = None) -> Dataset:
    """The dataset of a native file's lines, given a block of lines at a time (each block's lines
    are parsed by one :func:`json_line_parser`)."""
    # Millions of small containers, none of them garbage: collections would walk them again and again.
    with gc_paused():
        return _native_dataset(blocks, path, name, SharedValues())


def _numbered_lines(blocks: Iterable[list[str]]) -> Iterator[tuple[int, str, Callable[[str], Any]]]:
    """(line number, line, its JSON parser) for every line of ``blocks``."""
    number = 0
    for block in blocks:
        loads = json_line_parser(block)
        for line in block:
            number += 1
            yield number, line, loads


def _native_dataset(blocks: Iterable[list[str]], path: Path, name: str | None, shared: SharedValues) -> Dataset:
    where = str(path)
    header: dict[str, Any] | None = None
    examples: list[Example] = []
    first_line: dict[str, int] = {}
    for number, line, loads in _numbered_lines(blocks):
        if not line.strip():
            continue
        try:
            record = loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"not valid JSON: {exc.msg} (column {exc.colno})", path=where,
                            line=number) from None
        except RecursionError:
            raise DataError("not valid JSON: nested too deeply", path=where, line=number) from None
        if isinstance(record, dict) and HEADER_KEY in record:
            if header is not None or examples:
                raise DataError("the dataset header must be the first line", path=where,
                                line=number, field=HEADER_KEY)
            header = _check_header(record, where, number)
            continue
        example = record_to_example(record, path=where, line=number, shared=shared)
        if example.id in first_line:
            raise DataError(f"duplicate id {example.id!r} (first on line {first_line[example.id]})",
                            path=where, line=number, field="id")
        first_line[example.id] = number
        examples.append(example)
    header = header or {}
    return Dataset(
        name=name or header.get("name") or path.stem,
        examples=examples,
        source=where,
        description=header.get("description", ""),
        meta=dict(header.get("meta", {})),
    )


def _check_header(record: dict[str, Any], where: str, line: int) -> dict[str, Any]:
    version = record[HEADER_KEY]
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise DataError(f"unsupported format version {version!r} (this dialjudge reads "
                        f"{FORMAT_VERSION})", path=where, line=line, field=HEADER_KEY)
    unknown = sorted(set(record) - HEADER_KEYS)
    if unknown:
        raise DataError(f"unknown header key (allowed: {', '.join(sorted(HEADER_KEYS))})",
                        path=where, line=line, field=unknown[0])
    for key, kind in (("name", str), ("description", str), ("meta", dict)):
        if key in record and not isinstance(record[key], kind):
            raise DataError(f"expected {type_name(kind)}, found {json_type(record[key])}",
                            path=where, line=line, field=key)
    return record


def record_to_example(record: Any, *, path: str | None = None, line: int | None = None,
                      label: str | None = None, shared: SharedValues | None = None) -> Example:
    """Check one record and build its Example. Problems raise DataError naming
    ``path``, ``line`` (or ``label``, the record's name when there is no line) and the field.
    ``shared``: the table of one file's repeated values (a fresh one when None)."""

    named: list[str] = []  # the record's id, once read: a line's message names it too

    def fail(message: str, field: str | None = None) -> DataError:
        return DataError(message, path=path, line=line, record=label, field=field,
                         record_id=named[0] if named and label is None else None)

    if not isinstance(record, dict):
        raise fail(f"expected a JSON object, found {json_type(record)}")
    if HEADER_KEY in record:
        raise fail("only the first line (the header) may hold this key", HEADER_KEY)
    if "id" not in record:
        raise fail("missing required field", "id")
    example_id = record["id"]
    if not isinstance(example_id, str) or not example_id:
        raise fail(f"expected a non-empty string, found {json_type(example_id)}", "id")
    named.append(example_id)

    level_name = record.get("level", "turn")
    level = _LEVELS.get(level_name) if isinstance(level_name, str) else None
    if level is None:
        raise fail(f"expected \"turn\" or \"dialog\", found {record.get('level')!r}", "level")

    if "context" not in record:
        raise fail("missing required field", "context")
    if shared is None:
        shared = SharedValues()
    context = _context(record["context"], fail, shared)

    if "candidate" in record:
        candidate = record["candidate"]
        if not (isinstance(candidate, str) or (candidate is None and level is Level.DIALOG)):
            raise fail(f"expected a string, found {json_type(candidate)}"
                       + (" (a turn-level example needs a candidate)" if level is Level.TURN else ""),
                       "candidate")
    elif level is Level.TURN:
        raise fail("missing required field (a turn-level example needs a candidate)", "candidate")
    else:
        candidate = None

    ratings_raw = record.get("ratings", {})
    if not isinstance(ratings_raw, dict):
        raise fail(f"expected an object, found {json_type(ratings_raw)}", "ratings")
    ratings = shared.rating_map({quality: _rating(quality, raw, fail, shared)
                                 for quality, raw in ratings_raw.items()})

    adversarial = record.get("adversarial")
    if adversarial is not None:
        adversarial = _perturbation(adversarial, fail)

    is_reference = record.get("is_reference", False)
    if not isinstance(is_reference, bool):
        raise fail(f"expected true or false, found {json_type(is_reference)}", "is_reference")

    group_id = record.get("group_id", example_id)
    if not isinstance(group_id, str) or not group_id:
        raise fail(f"expected a non-empty string, found {json_type(group_id)}", "group_id")

    return Example(
        id=example_id,
        group_id=shared.string(group_id),
        context=context,
        candidate=candidate,
        references=shared.strings_tuple(_strings(record.get("references", []), "references", fail)),
        fact=shared.optional_string(_optional_string(record, "fact", fail)),
        system=shared.optional_string(_optional_string(record, "system", fail)),
        tags=shared.tags(_strings(record.get("tags", []), "tags", fail)),
        ratings=ratings,
        is_reference=is_reference,
        level=level,
        language=shared.optional_string(_optional_string(record, "language", fail)),
        adversarial=adversarial,
        # Most records hold only the format's keys: a set comparison at C speed, not a loop over them.
        extra=shared.extra({} if record.keys() <= _RECORD_KEY_SET else
                           {k: v for k, v in record.items() if k not in _RECORD_KEY_SET}),
    )


def _context(value: Any, fail: Any, shared: SharedValues) -> tuple[Turn, ...]:
    if not isinstance(value, list):
        raise fail(f"expected an array of {{speaker, text}} turns, found {json_type(value)}", "context")
    turns = []
    for i, turn in enumerate(value):
        if type(turn) is dict and len(turn) == 2:  # the usual {speaker, text}: checked quickly
            speaker, text = turn.get("speaker"), turn.get("text")
            if type(speaker) is str and type(text) is str:
                turns.append(shared.turn(speaker, text))
                continue
        if not isinstance(turn, dict):
            raise fail(f"expected a {{speaker, text}} object, found {json_type(turn)}", f"context[{i}]")
        speaker, text = turn.get("speaker", ""), turn.get("text")
        if not isinstance(text, str):
            raise fail("missing required field" if text is None else
                       f"expected a string, found {json_type(text)}", f"context[{i}].text")
        if not isinstance(speaker, str):
            raise fail(f"expected a string, found {json_type(speaker)}", f"context[{i}].speaker")
        unknown = set(turn) - {"speaker", "text"}
        if unknown:
            raise fail("unknown turn key (a turn has speaker and text)",
                       f"context[{i}].{sorted(unknown)[0]}")
        turns.append(shared.turn(speaker, text))
    return shared.context(turns)


def _strings(value: Any, field: str, fail: Any) -> list[str]:
    if not isinstance(value, list):
        raise fail(f"expected an array of strings, found {json_type(value)}", field)
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise fail(f"expected a string, found {json_type(item)}", f"{field}[{i}]")
    return value


def _optional_string(record: Mapping[str, Any], key: str, fail: Any) -> str | None:
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        raise fail(f"expected a string or null, found {json_type(value)}", key)
    return value


def _perturbation(value: Any, fail: Any) -> Perturbation:
    if not isinstance(value, dict):
        raise fail(f"expected an object or null, found {json_type(value)}", "adversarial")
    for key in ("kind", "source_id"):
        if not isinstance(value.get(key), str):
            raise fail("missing required field" if key not in value else
                       f"expected a string, found {json_type(value[key])}", f"adversarial.{key}")
    for key in ("original_span", "replacement"):
        if not isinstance(value.get(key, ""), str):
            raise fail(f"expected a string, found {json_type(value[key])}", f"adversarial.{key}")
    unknown = set(value) - {"kind", "source_id", "original_span", "replacement"}
    if unknown:
        raise fail("unknown key (allowed: kind, source_id, original_span, replacement)",
                   f"adversarial.{sorted(unknown)[0]}")
    return Perturbation.from_dict(value)


# Many ratings share a handful of scales; building each Scale once keeps 10,000-line files fast.
_scale_cache: dict[tuple[Any, ...], Scale] = {}


def _scale(value: Any, field: str, fail: Any) -> Scale:
    if not isinstance(value, dict):
        raise fail(f"expected a {{kind, min, max, labels}} object, found {json_type(value)}", field)
    labels = value.get("labels", [])
    low, high = value.get("min"), value.get("max")
    key: tuple[Any, ...] | None = (value.get("kind"), type(low), low, type(high), high,
                                   tuple(labels) if isinstance(labels, list) else labels, tuple(value))
    try:
        cached = _scale_cache.get(key)  # type: ignore[arg-type]
    except TypeError:  # an unhashable bound; the checks below report it
        cached, key = None, None
    if cached is not None:
        return cached
    kind_name = value.get("kind")
    kind = _SCALE_KINDS.get(kind_name) if isinstance(kind_name, str) else None
    if kind is None:
        raise fail(f"expected one of {', '.join(_SCALE_KINDS)}, found {value.get('kind')!r}",
                   f"{field}.kind")
    unknown = set(value) - {"kind", "min", "max", "labels"}
    if unknown:
        raise fail("unknown scale key (allowed: kind, min, max, labels)", f"{field}.{sorted(unknown)[0]}")
    for bound in ("min", "max"):
        number = value.get(bound)
        if number is None:
            if kind is not ScaleKind.CATEGORICAL:
                raise fail(f"a {kind.value} scale needs {bound}", f"{field}.{bound}")
        elif isinstance(number, bool) or not isinstance(number, (int, float)):
            raise fail(f"expected a number, found {json_type(number)}", f"{field}.{bound}")
    _strings(labels, f"{field}.labels", fail)
    try:
        scale = Scale.from_dict(value)
    except ValueError as exc:
        raise fail(str(exc), field) from None
    if key is not None:
        _scale_cache[key] = scale
    return scale


_RATING_KEYS = frozenset({"scores", "scale", "annotators"})
_NUMBER_TYPES = (int, float)  # compared with type(): a bool is not a score


def _rating(quality: str, value: Any, fail: Any, shared: SharedValues) -> Rating:
    # A rating written exactly as one already checked (the same scale, the same values of the same
    # types, the same annotators) is that one: most ratings repeat a handful of votes. Types count,
    # since True == 1 and 1 == 1.0. Keyed on the record's own values, before any check.
    key: tuple[Any, ...] | None = None
    if quality and type(value) is dict and _RATING_KEYS.issuperset(value):
        raw_scale, scores, annotators = value.get("scale"), value.get("scores"), value.get("annotators")
        if type(raw_scale) is dict and type(scores) is list and (annotators is None or type(annotators) is list):
            try:
                key = (tuple(raw_scale.items()), tuple(map(type, raw_scale.values())), tuple(scores),
                       tuple(map(type, scores)), None if annotators is None else tuple(annotators))
                known = shared.ratings.get(key)
            except TypeError:  # an unhashable bound, score or name (categorical labels): checked below
                key, known = None, None
            if known is not None:
                return known
    rating = _new_rating(quality, value, fail, shared)
    if key is not None:
        shared.ratings[key] = rating
    return rating


def _new_rating(quality: str, value: Any, fail: Any, shared: SharedValues) -> Rating:
    field = f"ratings.{quality}"
    if not quality:
        raise fail("a quality needs a non-empty name", field)
    if not isinstance(value, dict):
        raise fail(f"expected a {{scores, scale, annotators}} object, found {json_type(value)}", field)
    if not _RATING_KEYS.issuperset(value):
        unknown = sorted(set(value) - _RATING_KEYS)[0]
        raise fail("unknown key (allowed: scores, scale, annotators)", f"{field}.{unknown}")
    if "scale" not in value:
        raise fail("missing required field", f"{field}.scale")
    scale = _scale(value["scale"], f"{field}.scale", fail)
    return _checked_rating(field, scale, value.get("scores"), value.get("annotators"), fail, shared)


def _checked_rating(field: str, scale: Scale, scores: Any, annotators: Any, fail: Any,
                    shared: SharedValues) -> Rating:
    if not isinstance(scores, list):
        raise fail("missing required field" if scores is None else
                   f"expected an array of scores, found {json_type(scores)}", f"{field}.scores")
    if scale.is_numeric:
        low, high = scale.min - 1e-9, scale.max + 1e-9  # type: ignore[operator]
        for i, score in enumerate(scores):
            if score is not None and not (type(score) in _NUMBER_TYPES and low <= score <= high):
                raise _bad_score(score, scale, f"{field}.scores[{i}]", fail)
    else:
        for i, score in enumerate(scores):
            if score is not None and not (type(score) is str and scale.contains(score)):
                if type(score) in _NUMBER_TYPES and scale.contains(score):
                    continue  # a numeric label such as 1 for "1"
                raise _bad_score(score, scale, f"{field}.scores[{i}]", fail)
    if annotators is None:
        annotators = ()
    else:
        _strings(annotators, f"{field}.annotators", fail)
        if annotators and len(annotators) != len(scores):
            raise fail(f"{len(scores)} scores but {len(annotators)} annotators", f"{field}.annotators")
    return Rating(scores=tuple(scores), scale=scale, annotators=shared.strings_tuple(list(annotators)))


def _bad_score(score: Any, scale: Scale, field: str, fail: Any) -> DataError:
    if isinstance(score, bool) or not isinstance(score, (int, float, str)):
        return fail(f"expected a number, a label or null, found {json_type(score)}", field)
    if scale.is_numeric and isinstance(score, str):
        return fail(f"expected a number on the {describe_scale(scale)}, found the string {score!r}", field)
    if scale.is_numeric:
        return fail(f"value {score!r} is outside the {describe_scale(scale)}", field)
    return fail(f"{score!r} is not one of the labels {', '.join(scale.labels)}", field)


register_format(DatasetFormat(
    name="native", priority=0, suffixes=(".jsonl",), layout="dialjudge's native JSON Lines (.jsonl)",
    recognise=lambda file: looks_like_native(file.head),
    read=lambda file: native_dataset_of_blocks(file.line_blocks(), file.path, name=file.name)))
