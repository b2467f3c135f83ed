"""Knowledge swaps in the style of paper 000's KdConv-ADV.

A knowledge-grounded reply lists the triples it uses (KdConv's ``attrs``:
``{name, attrname, attrvalue}``). Where the reply contains an attribute value,
that value is replaced, at every occurrence, by ANOTHER value of the SAME
attribute name taken from the same data ("2001年12月28日" -> another film's
release date, "日本东京" -> another person's birthplace), so the reply stays
fluent but contradicts the knowledge graph.

A replacement is never a value the same entity also has for that attribute
(a film that is both "家庭" and "亲情" cannot be contradicted by swapping one
for the other), never contained in or containing the original ("香港" vs
"中国香港"), and never already in the reply. Values written the same way as
the original (same digit/character pattern, "0年0月0日") are preferred, so a
date becomes a date. Long free-text attributes ("Information") are skipped:
they are whole paragraphs, not facts a reply realises verbatim.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

from .edits import Edit, Proposals

KIND = "knowledge"

#: Attribute names that hold free text rather than a single fact.
FREE_TEXT_ATTRIBUTES = frozenset({"Information", "information", "简介", "描述", "介绍"})
#: Values longer than this are treated as free text, whatever their attribute.
MAX_VALUE_CHARS = 30
#: Single characters ("男") match inside unrelated words; shorter values are ignored.
MIN_VALUE_CHARS = 2


@dataclass(frozen=True)
class Triple:
    name: str
    attrname: str
    attrvalue: str

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "Triple":
        return cls(str(data.get("name", "")), str(data.get("attrname", "")),
                   str(data.get("attrvalue", "")))

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "attrname": self.attrname, "attrvalue": self.attrvalue}

    def render(self) -> str:
        return f"{self.name} | {self.attrname} | {self.attrvalue}"


def is_swappable(triple: Triple) -> bool:
    """A short fact a reply can state verbatim (not a paragraph, not one character)."""
    value = triple.attrvalue.strip()
    return (triple.attrname not in FREE_TEXT_ATTRIBUTES
            and MIN_VALUE_CHARS <= len(value) <= MAX_VALUE_CHARS)


def realised_triples(text: str, triples: Iterable[Triple]) -> list[Triple]:
    """The swappable triples whose value the text contains, longest value first
    and without values that only occur inside a longer realised value."""
    found = sorted({t for t in triples if is_swappable(t) and t.attrvalue in text},
                   key=lambda t: (-len(t.attrvalue), t.attrname, t.attrvalue, t.name))
    kept: list[Triple] = []
    covered: list[tuple[int, int]] = []
    for triple in found:
        spans = _occurrences(text, triple.attrvalue)
        free = [s for s in spans if not any(a <= s[0] and s[1] <= b for a, b in covered)]
        if not free:
            continue
        if any(t.attrvalue == triple.attrvalue for t in kept):
            continue
        kept.append(triple)
        covered.extend(spans)
    return kept


def _occurrences(text: str, value: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(re.escape(value), text)]


def _replace_spans(text: str, spans: list[tuple[int, int]], value: str) -> str:
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + value + text[end:]
    return text


_DIGIT_RUN = re.compile(r"\d+")


@lru_cache(maxsize=None)
def _shape(value: str) -> str:
    """How a value is written: "2001年12月28日" -> "0年0月0日"."""
    return _DIGIT_RUN.sub("0", value)


@dataclass
class KnowledgePools:
    """Every value seen per attribute name, and the values each entity has."""

    values: dict[str, list[str]] = field(default_factory=dict)
    entity_values: dict[tuple[str, str], set[str]] = field(default_factory=dict)

    @classmethod
    def from_triples(cls, triples: Iterable[Triple]) -> "KnowledgePools":
        values: dict[str, set[str]] = defaultdict(set)
        entity: dict[tuple[str, str], set[str]] = defaultdict(set)
        for t in triples:
            entity[(t.name, t.attrname)].add(t.attrvalue)
            if is_swappable(t):
                values[t.attrname].add(t.attrvalue)
        return cls({k: sorted(v) for k, v in values.items()}, dict(entity))

    @classmethod
    def from_dialogues(cls, dialogues: Sequence[Mapping[str, Any]]) -> "KnowledgePools":
        """From KdConv's raw JSON: ``[{messages: [{message, attrs?}]}]``."""
        return cls.from_triples(
            Triple.from_mapping(a)
            for dialogue in dialogues
            for message in dialogue.get("messages", ())
            for a in message.get("attrs", ()) or ()
        )

    @classmethod
    def from_examples(cls, examples: Iterable[Any]) -> "KnowledgePools":
        """From examples carrying their triples in ``extra["attrs"]`` (the KdConv reader)."""
        return cls.from_triples(t for ex in examples for t in triples_of(ex))

    def alternatives(self, triple: Triple, text: str, also_true: Iterable[Triple] = ()) -> list[str]:
        """Values that contradict ``triple`` and read naturally in ``text``; same-shape first.

        ``also_true`` are other triples stating the same value (a director who also
        wrote the film): what their entities have is excluded too."""
        own = {triple.attrvalue}
        for fact in (triple, *also_true):
            own |= self.entity_values.get((fact.name, fact.attrname), set())
        original = triple.attrvalue
        def usable(values: Iterable[str]) -> list[str]:
            return [v for v in values
                    if v not in own and original not in v and v not in original and v not in text]

        pool = self.values.get(triple.attrname, [])
        shape = _shape(original)
        return usable(v for v in pool if _shape(v) == shape) or usable(pool)


def triples_of(example: Any) -> list[Triple]:
    attrs = getattr(example, "extra", {}).get("attrs") or ()
    return [Triple.from_mapping(a) for a in attrs if isinstance(a, Mapping)]


def swap_knowledge(text: str, triples: Sequence[Triple], pools: KnowledgePools, *,
                   rng: random.Random, alternatives: int = 2) -> Proposals:
    """Every knowledge swap of ``text``: for each realised value, up to
    ``alternatives`` other values of the same attribute name."""
    if not text.strip():
        return Proposals.skipped(KIND, "empty reply")
    if not triples:
        return Proposals.skipped(KIND, "no knowledge triples")
    swappable = [t for t in triples if is_swappable(t)]
    if not swappable:
        return Proposals.skipped(KIND, "only free-text knowledge (e.g. 'Information')")
    realised = realised_triples(text, swappable)
    if not realised:
        return Proposals.skipped(KIND, "no attribute value appears in the reply")
    edits: list[Edit] = []
    # Each place in the reply order, so site numbers read left to right.
    realised.sort(key=lambda t: text.index(t.attrvalue))
    # A value inside a longer realised one ("家庭" in "家庭剧场") is only replaced where it stands alone.
    for site, triple in enumerate(realised):
        same_value = [t for t in triples if t.attrvalue == triple.attrvalue and t != triple]
        options = pools.alternatives(triple, text, same_value)
        chosen = rng.sample(options, min(alternatives, len(options)))
        longer = [span for other in realised if len(other.attrvalue) > len(triple.attrvalue)
                  for span in _occurrences(text, other.attrvalue)]
        spans = [s for s in _occurrences(text, triple.attrvalue)
                 if not any(a <= s[0] and s[1] <= b for a, b in longer)]
        for alternative, value in enumerate(chosen):
            edits.append(Edit(KIND, spans[0][0], spans[0][1], triple.attrvalue, value,
                              _replace_spans(text, spans, value), site, alternative))
    return Proposals.of(KIND, edits, "no other value of the same attribute to swap in")
