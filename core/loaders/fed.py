"""FED (Mehri & Eskenazi, SIGDIAL 2020): turn- and dialog-level ratings of
human-system conversations (Meena, Mitsuku, Human).

The file is a list of ``{context, response?, system, annotations: {<quality>:
[5 values]}}``. Items with a ``response`` are turn-level; items without one rate
the whole dialogue (``candidate=None``, ``level=dialog``). Context lines are
prefixed ``User:`` / ``System:``.

Annotators sometimes wrote "N/A (...)" instead of a score. Those are missing
values (None), never imputed; the original text is kept in
``extra["not_applicable"] = {quality: [[annotator index, text], ...]}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DataError
from ..model import Dataset, Example, Level, Rating, RatingValue, Scale, ScaleKind, Turn
from ._common import json_type, read_json_file, type_name
from .exclusions import Exclusions, checked_value
from .formats import DatasetFormat, register_format

_OVERALL = Scale(ScaleKind.ORDINAL, 0, 4)
_BINARY = Scale(ScaleKind.BINARY, 0, 1)
_THREE_POINT = Scale(ScaleKind.ORDINAL, 0, 2)

#: Scales of the FED questionnaire, checked against the released file.
FED_TURN_SCALES: dict[str, Scale] = {
    "Interesting": _THREE_POINT,
    "Engaging": _THREE_POINT,
    "Specific": _THREE_POINT,
    "Relevant": _THREE_POINT,
    "Correct": _THREE_POINT,
    "Semantically appropriate": _THREE_POINT,
    "Understandable": _BINARY,
    "Fluent": _THREE_POINT,
    "Overall": _OVERALL,
}
FED_DIALOG_SCALES: dict[str, Scale] = {
    "Coherent": _THREE_POINT,
    "Error recovery": _THREE_POINT,
    "Consistent": _BINARY,
    "Diverse": _THREE_POINT,
    "Depth": _THREE_POINT,
    "Likeable": _THREE_POINT,
    "Understanding": _THREE_POINT,
    "Flexible": _THREE_POINT,
    "Informative": _THREE_POINT,
    "Inquisitive": _THREE_POINT,
    "Overall": _OVERALL,
}

SPEAKERS = ("User", "System")
_KNOWN_KEYS = ("context", "response", "system", "annotations")


def looks_like_fed(data: Any) -> bool:
    return (isinstance(data, list) and bool(data) and isinstance(data[0], dict)
            and "annotations" in data[0] and "system" in data[0])


def is_not_applicable(value: Any) -> bool:
    return isinstance(value, str) and value.strip().upper().startswith("N/A")


def read_fed(path: str | Path, *, name: str | None = None) -> Dataset:
    path = Path(path)
    return fed_dataset(read_json_file(path), path, name=name)


def fed_dataset(data: Any, path: Path, *, name: str | None = None) -> Dataset:
    where = str(path)
    if not isinstance(data, list) or not data:
        raise DataError("expected a FED file: a non-empty list of {context, response?, system, "
                        f"annotations}}, found {json_type(data)}", path=where)
    # Candidates answering the same context share a group. A dialog-level item's
    # context is the whole dialogue, which is also the context of that dialogue's
    # last turn-level item; it rates the dialogue, not a reply to it, so the two
    # levels get separate groups (turn "fed-cNNN", dialog "fed-dNNN").
    groups: dict[Level, dict[str, str]] = {Level.TURN: {}, Level.DIALOG: {}}
    exclusions = Exclusions()
    examples = [_example(item, index, where, groups, exclusions) for index, item in enumerate(data)]
    n_turn = sum(ex.level is Level.TURN for ex in examples)
    meta = {"format": "fed", "citation": "Mehri & Eskenazi, SIGDIAL 2020", "url": "http://shikib.com/fed_data.json"}
    exclusions.record_into(meta)
    return Dataset(
        name=name or "fed",
        examples=examples,
        source=where,
        description=(f"FED (Mehri & Eskenazi, SIGDIAL 2020): {n_turn} turn-level and "
                     f"{len(examples) - n_turn} dialog-level items from Meena, Mitsuku and human "
                     "conversations, 5 annotators each; 'N/A' answers are missing values."),
        meta=meta,
    )


def _example(item: Any, index: int, where: str, groups: dict[Level, dict[str, str]],
             exclusions: Exclusions) -> Example:
    example_id = f"fed-{index:03d}"

    def fail(message: str, field: str | None = None) -> DataError:
        return DataError(message, path=where, record=index + 1, record_id=example_id, field=field)

    if not isinstance(item, dict):
        raise fail(f"expected an object, found {json_type(item)}")
    for key, kind in (("context", str), ("system", str), ("annotations", dict)):
        if key not in item:
            raise fail("missing required field", key)
        if not isinstance(item[key], kind):
            raise fail(f"expected {type_name(kind)}, found {json_type(item[key])}", key)
    level = Level.TURN if "response" in item else Level.DIALOG
    candidate = None
    if level is Level.TURN:
        response = item["response"]
        if not isinstance(response, str):
            raise fail(f"expected a string, found {json_type(response)}", "response")
        candidate = _strip_speaker(response)

    context = _context_turns(item["context"], fail)
    level_groups = groups[level]
    if item["context"] not in level_groups:
        prefix = "fed-c" if level is Level.TURN else "fed-d"
        level_groups[item["context"]] = f"{prefix}{len(level_groups):03d}"

    scales = FED_TURN_SCALES if level is Level.TURN else FED_DIALOG_SCALES
    ratings: dict[str, Rating] = {}
    not_applicable: dict[str, list[list[Any]]] = {}
    for quality, values in item["annotations"].items():
        field = f"annotations.{quality}"
        scale = scales.get(quality)
        if scale is None:
            raise fail(f"unknown {level.value}-level FED quality {quality!r} "
                       f"(known: {', '.join(scales)})", field)
        if not isinstance(values, list) or not values:
            raise fail(f"expected a list of annotator values, found {json_type(values)}", field)
        scores: list[RatingValue] = []
        for k, value in enumerate(values):
            if is_not_applicable(value):
                not_applicable.setdefault(quality, []).append([k, value])
                scores.append(None)
            else:
                scores.append(checked_value(value, scale, exclusions,
                                            f"record {index + 1} (id {example_id!r}), field '{field}[{k}]'"))
        ratings[quality] = Rating(scores=tuple(scores), scale=scale)

    extra: dict[str, Any] = {k: v for k, v in item.items() if k not in _KNOWN_KEYS}
    if not_applicable:
        extra["not_applicable"] = not_applicable
    return Example(
        id=example_id,
        group_id=level_groups[item["context"]],
        context=context,
        candidate=candidate,
        system=item["system"],
        ratings=ratings,
        level=level,
        language="en",
        extra=extra,
    )


def _strip_speaker(text: str) -> str:
    for speaker in SPEAKERS:
        prefix = speaker + ":"
        if text.startswith(prefix):
            return text[len(prefix):].strip()
    return text.strip()


def _context_turns(text: str, fail: Any) -> tuple[Turn, ...]:
    turns: list[list[str]] = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        speaker = next((s for s in SPEAKERS if line.startswith(s + ":")), None)
        if speaker is not None:
            turns.append([speaker, line[len(speaker) + 1:].strip()])
        elif turns:  # a turn that spans lines
            turns[-1][1] += "\n" + line.strip()
        else:
            raise fail(f"context line {n} does not start with 'User:' or 'System:'", "context")
    return tuple(Turn(s, t) for s, t in turns)


register_format(DatasetFormat(
    name="fed", priority=20, is_json=True, layout="a FED list (items with 'annotations' and 'system')",
    recognise=lambda file: looks_like_fed(file.json),
    read=lambda file: fed_dataset(file.json, file.path, name=file.name)))
