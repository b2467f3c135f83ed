"""Read KdConv (Zhou et al., ACL 2020) into examples, one per knowledge-grounded reply.

A KdConv file is a JSON list of dialogues ``{name, messages: [{message,
attrs?: [{name, attrname, attrvalue}]}]}``. Every message after the first that
lists triples becomes an :class:`Example`: its context is the turns before it
(speakers alternate "A", "B", starting with "A"), its candidate and only
reference are the message itself (so ``is_reference`` is set: reference-based
metrics would only score it against itself), its fact is the triples rendered
one per line as ``name | attrname | attrvalue``, and the triples stay in
``extra["attrs"]`` for the knowledge swap. Each example is tagged closed when
the reply contains one of its attribute values, else open (see
:mod:`dialjudge.core.adversarial.closedness`). KdConv has no quality ratings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from ..adversarial.knowledge import Triple, realised_triples
from ..errors import DataError
from ..model import TAG_CLOSED, TAG_OPEN, Dataset, Example, Turn
from .formats import DatasetFormat, register_format

SPEAKERS = ("A", "B")
CITATION = ("Zhou, Zheng, Huang, Huang, Zhu. KdConv: A Chinese Multi-domain Dialogue Dataset "
            "Towards Multi-turn Knowledge-driven Conversation. ACL 2020.")


def looks_like_kdconv(data: Any) -> bool:
    """A KdConv split: a list of dialogues, each a dict with a 'messages' list."""
    return (isinstance(data, list) and bool(data) and isinstance(data[0], dict)
            and isinstance(data[0].get("messages"), list) and "annotations" not in data[0])


def read_kdconv_json(path: str | Path) -> list[dict[str, Any]]:
    """The raw dialogues of a KdConv file, checked for the fields the reader uses."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError("file not found", path=str(path)) from None
    except json.JSONDecodeError as err:
        raise DataError(f"not valid JSON: {err.msg}", path=str(path), line=err.lineno) from None
    return check_kdconv(data, path)


def check_kdconv(data: Any, path: str | Path) -> list[dict[str, Any]]:
    """Parsed KdConv JSON, checked for the fields the reader uses; DataError names the record."""
    if not isinstance(data, list):
        raise DataError("expected a JSON list of dialogues", path=str(path))
    for d, dialogue in enumerate(data):
        if not isinstance(dialogue, dict) or not isinstance(dialogue.get("messages"), list):
            raise DataError("a dialogue needs a 'messages' list", path=str(path), record=d + 1,
                            field="messages")
        for t, message in enumerate(dialogue["messages"]):
            record = f"{d + 1}, message {t + 1}"
            if not isinstance(message, dict) or not isinstance(message.get("message"), str):
                raise DataError("a message needs a 'message' string", path=str(path), record=record,
                                field="message")
            attrs = message.get("attrs", [])
            if not isinstance(attrs, list) or not all(
                isinstance(a, dict) and {"name", "attrname", "attrvalue"} <= set(a) for a in attrs
            ):
                raise DataError("'attrs' must be a list of {name, attrname, attrvalue}",
                                path=str(path), record=record, field="attrs")
    return data


def load_kdconv(path: str | Path, *, domain: str | None = None, name: str | None = None) -> Dataset:
    """A KdConv split (e.g. ``kdconv/film/test.json``) as a Dataset.

    ``domain`` defaults to the folder name (film, music, travel)."""
    return kdconv_dataset(read_kdconv_json(path), path, domain=domain, name=name)


def kdconv_dataset(data: Any, path: str | Path, *, domain: str | None = None,
                   name: str | None = None) -> Dataset:
    """Parsed KdConv JSON (see :func:`load_kdconv`) as a Dataset."""
    path = Path(path)
    dialogues = check_kdconv(data, path)
    domain = domain or path.parent.name or path.stem
    examples = kdconv_examples(dialogues, domain=domain)
    return Dataset(
        name=name or f"kdconv-{domain}-{path.stem}",
        examples=examples,
        source=str(path),
        description=f"KdConv {domain} ({path.stem}): knowledge-grounded Chinese replies with "
                    "the triples each one uses; no quality ratings.",
        meta={"citation": CITATION, "licence": "Apache-2.0", "domain": domain, "language": "zh"},
    )


def kdconv_examples(dialogues: Sequence[dict[str, Any]], *, domain: str) -> list[Example]:
    examples: list[Example] = []
    for d, dialogue in enumerate(dialogues):
        messages = dialogue["messages"]
        for t, message in enumerate(messages):
            attrs = message.get("attrs") or []
            if t == 0 or not attrs:
                continue
            reply = message["message"]
            triples = [Triple.from_mapping(a) for a in attrs]
            context = tuple(Turn(SPEAKERS[i % 2], m["message"]) for i, m in enumerate(messages[:t]))
            realised = realised_triples(reply, triples)
            example_id = f"{domain}-{d}-{t}"
            examples.append(Example(
                id=example_id,
                group_id=example_id,
                context=context,
                candidate=reply,
                references=(reply,),
                fact="\n".join(tr.render() for tr in triples),
                tags=frozenset({TAG_CLOSED if realised else TAG_OPEN}),
                is_reference=True,
                language="zh",
                extra={
                    "attrs": [tr.to_dict() for tr in triples],
                    "dialogue": d,
                    "turn": t,
                    "topic": dialogue.get("name", ""),
                    "domain": domain,
                    "speaker": SPEAKERS[t % 2],
                    "closedness": (f"the reply states {realised[0].attrname} = {realised[0].attrvalue}"
                                   if realised else "the reply states none of its triples"),
                },
            ))
    return examples


register_format(DatasetFormat(
    name="kdconv", priority=40, is_json=True, layout="a KdConv list (dialogues with 'messages'; no ratings)",
    recognise=lambda file: looks_like_kdconv(file.json),
    read=lambda file: kdconv_dataset(file.json, file.path, name=file.name)))
