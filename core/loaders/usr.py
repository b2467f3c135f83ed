"""USR (Mehri & Eskenazi, ACL 2020): Topical-Chat and PersonaChat turn-level ratings.

The file is a list of ``{context, fact, annotators, responses: [{response, model,
<quality>: [one value per annotator]}]}``. Each response becomes one Example; the
responses to one context share its group. The "Original Ground Truth" response
is the reference of its context and is also a rated candidate (``is_reference``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..errors import DataError
from ..model import TAG_OPEN, Dataset, Example, Rating, Scale, ScaleKind
from ._common import alternating_turns, json_type, read_json_file, split_lines, type_name
from .exclusions import Exclusions, checked_value
from .formats import DatasetFormat, register_format

TOPICAL_CHAT = "topicalchat"
PERSONA_CHAT = "personachat"
VARIANTS = (TOPICAL_CHAT, PERSONA_CHAT)

REFERENCE_MODEL = "Original Ground Truth"

#: The scales of the USR annotation guidelines (checked against both files).
USR_SCALES: dict[str, Scale] = {
    "Understandable": Scale(ScaleKind.BINARY, 0, 1),
    "Natural": Scale(ScaleKind.ORDINAL, 1, 3),
    "Maintains Context": Scale(ScaleKind.ORDINAL, 1, 3),
    "Engaging": Scale(ScaleKind.ORDINAL, 1, 3),
    "Uses Knowledge": Scale(ScaleKind.BINARY, 0, 1),
    "Overall": Scale(ScaleKind.ORDINAL, 1, 5),
}

_ID_PREFIX = {TOPICAL_CHAT: "tc", PERSONA_CHAT: "pc"}
_TITLE = {TOPICAL_CHAT: "Topical-Chat", PERSONA_CHAT: "PersonaChat"}
_FACT_KIND = {TOPICAL_CHAT: "knowledge snippet", PERSONA_CHAT: "persona lines"}


def looks_like_usr(data: Any) -> bool:
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "responses" in data[0]


def read_usr(path: str | Path, *, name: str | None = None, variant: str | None = None) -> Dataset:
    """Load a USR file. ``variant`` (topicalchat|personachat) is detected from the
    file name, else from the facts (PersonaChat facts are "your persona: ..." lines)."""
    path = Path(path)
    return usr_dataset(read_json_file(path), path, name=name, variant=variant)


def detect_variant(path: Path, data: list[Any]) -> str:
    stem = path.name.lower().replace("-", "").replace("_", "")
    if "topical" in stem:
        return TOPICAL_CHAT
    if "persona" in stem:
        return PERSONA_CHAT
    for item in data:
        fact = item.get("fact") if isinstance(item, dict) else None
        if isinstance(fact, str) and fact.lstrip().lower().startswith("your persona:"):
            return PERSONA_CHAT
    return TOPICAL_CHAT


def usr_dataset(data: Any, path: Path, *, name: str | None = None,
                variant: str | None = None) -> Dataset:
    where = str(path)
    if not isinstance(data, list) or not data:
        raise DataError("expected a USR file: a non-empty list of {context, fact, annotators, "
                        f"responses}}, found {json_type(data)}", path=where)
    if variant is None:
        variant = detect_variant(path, data)
    elif variant not in VARIANTS:
        raise DataError(f"unknown USR variant {variant!r} (use {' or '.join(VARIANTS)})", path=where)

    examples: list[Example] = []
    exclusions = Exclusions()
    for index, item in enumerate(data):
        examples.extend(_context_examples(item, index, variant, where, exclusions))
    title = _TITLE[variant]
    meta = {"format": "usr", "variant": variant, "citation": "Mehri & Eskenazi, ACL 2020",
            "url": "http://shikib.com/usr"}
    exclusions.record_into(meta)
    return Dataset(
        name=name or f"usr-{variant}",
        examples=examples,
        source=where,
        description=(f"USR {title} (Mehri & Eskenazi, ACL 2020): {len(data)} contexts, "
                     f"{len(examples)} rated responses, 3 annotators each; the fact is the "
                     f"{_FACT_KIND[variant]}."),
        meta=meta,
    )


def _context_examples(item: Any, index: int, variant: str, where: str, exclusions: Exclusions) -> list[Example]:
    group_id = f"{_ID_PREFIX[variant]}-{index:03d}"

    def fail(message: str, field: str | None = None) -> DataError:
        return DataError(message, path=where, record=index + 1, record_id=group_id, field=field)

    if not isinstance(item, dict):
        raise fail(f"expected an object, found {json_type(item)}")
    for key, kind in (("context", str), ("fact", str), ("annotators", list), ("responses", list)):
        if key not in item:
            raise fail("missing required field", key)
        if not isinstance(item[key], kind):
            raise fail(f"expected {type_name(kind)}, found {json_type(item[key])}", key)
    annotators = item["annotators"]
    if not annotators or not all(isinstance(a, str) for a in annotators):
        raise fail("expected a non-empty list of annotator names", "annotators")
    responses = item["responses"]
    if not responses:
        raise fail("no responses", "responses")

    context = alternating_turns(split_lines(item["context"]))
    fact = item["fact"].strip()
    references = _reference_texts(responses, fail)
    # Paper 000 (Table 1) annotates all 60 Topical-Chat examples as open-ended:
    # the knowledge snippet does not pin down one right reply. PersonaChat is not
    # annotated there, so it stays untagged.
    tags = frozenset({TAG_OPEN}) if variant == TOPICAL_CHAT else frozenset()
    context_extra = {k: v for k, v in item.items() if k not in ("context", "fact", "annotators", "responses")}

    out = []
    for j, response in enumerate(responses):
        field = f"responses[{j}]"
        if not isinstance(response, dict):
            raise fail(f"expected an object, found {json_type(response)}", field)
        text, model = response.get("response"), response.get("model")
        if not isinstance(text, str):
            raise fail(f"expected a string, found {json_type(text)}", f"{field}.response")
        if not isinstance(model, str):
            raise fail(f"expected a string, found {json_type(model)}", f"{field}.model")
        ratings = _ratings(response, annotators, field, fail, f"record {index + 1} (id {group_id!r})", exclusions)
        extra = dict(context_extra)
        extra.update({k: v for k, v in response.items()
                      if k not in ("response", "model") and k not in USR_SCALES})
        out.append(Example(
            id=f"{group_id}-{j}",
            group_id=group_id,
            context=context,
            candidate=text.strip(),
            references=references,
            fact=fact,
            system=model,
            tags=tags,
            ratings=ratings,
            is_reference=model == REFERENCE_MODEL,
            language="en",
            extra=extra,
        ))
    return out


def _reference_texts(responses: list[Any], fail: Any) -> tuple[str, ...]:
    found = [j for j, r in enumerate(responses) if isinstance(r, dict) and r.get("model") == REFERENCE_MODEL]
    if len(found) > 1:
        raise fail(f"{len(found)} responses are the {REFERENCE_MODEL!r}; expected at most one",
                   f"responses[{found[1]}].model")
    if not found:
        return ()
    text = responses[found[0]].get("response")
    if not isinstance(text, str):
        raise fail(f"expected a string, found {json_type(text)}", f"responses[{found[0]}].response")
    return (text.strip(),)


def _ratings(response: Mapping[str, Any], annotators: list[str], field: str, fail: Any, place: str,
             exclusions: Exclusions) -> dict[str, Rating]:
    ratings: dict[str, Rating] = {}
    for quality, scale in USR_SCALES.items():
        name = f"{field}.{quality}"
        if quality not in response:
            raise fail("missing rating", name)
        values = response[quality]
        if not isinstance(values, list):
            raise fail(f"expected a list of {len(annotators)} values, found {json_type(values)}", name)
        if len(values) != len(annotators):
            raise fail(f"{len(values)} values but {len(annotators)} annotators", name)
        # A value off its scale is one annotator's value left out and counted (the data contract).
        scores = tuple(checked_value(v, scale, exclusions, f"{place}, field '{name}[{k}]'")
                       for k, v in enumerate(values))
        ratings[quality] = Rating(scores=scores, scale=scale, annotators=tuple(annotators))
    return ratings


register_format(DatasetFormat(
    name="usr", priority=10, is_json=True, layout="a USR list (items with 'responses')",
    recognise=lambda file: looks_like_usr(file.json),
    read=lambda file: usr_dataset(file.json, file.path, name=file.name)))
