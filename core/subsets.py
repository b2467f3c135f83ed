"""Named subsets of a dataset: all, open, closed, adversarial, system:NAME, tag:NAME, level:turn."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from .model import TAG_ADVERSARIAL, TAG_CLOSED, TAG_OPEN, Dataset, Example, Level

Predicate = Callable[[Example], bool]


@dataclass(frozen=True)
class Subset:
    """A filter over examples, written as a short spec users can type."""

    spec: str

    @property
    def label(self) -> str:
        return self.spec

    def predicate(self) -> Predicate:
        return parse_subset(self.spec)

    def select(self, examples: Iterable[Example]) -> list[Example]:
        keep = self.predicate()
        return [ex for ex in examples if keep(ex)]


ALL = Subset("all")


def parse_subset(spec: str) -> Predicate:
    """Turn a subset spec into a predicate. Raises ValueError naming the bad spec."""
    spec = spec.strip()
    if spec in ("", "all"):
        return lambda ex: True
    if spec == TAG_OPEN:
        return lambda ex: ex.ended == TAG_OPEN
    if spec == TAG_CLOSED:
        return lambda ex: ex.ended == TAG_CLOSED
    if spec == TAG_ADVERSARIAL:
        return lambda ex: ex.is_adversarial
    if spec == "non-adversarial":
        return lambda ex: not ex.is_adversarial
    kind, sep, value = spec.partition(":")
    if sep and value:
        if kind == "system":
            return lambda ex: ex.system == value
        if kind == "tag":
            return lambda ex: value in ex.tags
        if kind == "level" and value in {lv.value for lv in Level}:
            level = Level(value)
            return lambda ex: ex.level is level
        if kind == "adversarial":  # adversarial:negation
            return lambda ex: ex.adversarial is not None and ex.adversarial.kind == value
    raise ValueError(
        f"unknown subset {spec!r}: use all, open, closed, adversarial, non-adversarial, "
        "system:NAME, tag:NAME, level:turn|dialog or adversarial:KIND"
    )


def default_subsets(dataset: Dataset) -> list[Subset]:
    """The subsets worth offering for a dataset: those that select something."""
    out = [ALL]
    examples = dataset.examples
    for spec in (TAG_OPEN, TAG_CLOSED, TAG_ADVERSARIAL):
        if any(parse_subset(spec)(ex) for ex in examples):
            out.append(Subset(spec))
    out.extend(Subset(f"system:{s}") for s in dataset.systems)
    return out
