"""The data model shared by every part of dialjudge.

One :class:`Example` is one thing to score: normally one candidate response to a
dialogue context (turn level), or a whole dialogue with no single candidate
(dialog level). Several candidates answering the same context share a
``group_id``. Human ratings keep every annotator's value together with the
scale they were given on, so that aggregation (mean, median, majority vote) and
the human-human ceiling can be computed later without loss.
"""

from __future__ import annotations

import enum
import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, KeysView, Mapping, Sequence, TypeVar, Union

#: One annotator's judgement: a number, a category label, or None when missing
#: (FED's "N/A (no errors)" answers, a skipped item). Missing is never imputed.
RatingValue = Union[float, int, str, None]


class ScaleKind(str, enum.Enum):
    CONTINUOUS = "continuous"
    ORDINAL = "ordinal"
    BINARY = "binary"
    CATEGORICAL = "categorical"


class Level(str, enum.Enum):
    TURN = "turn"
    DIALOG = "dialog"


class Aggregation(str, enum.Enum):
    MEAN = "mean"
    MEDIAN = "median"
    MAJORITY = "majority"


# Tags with a fixed meaning; datasets may add any others.
TAG_OPEN = "open"
TAG_CLOSED = "closed"
TAG_ADVERSARIAL = "adversarial"


@dataclass(frozen=True, slots=True)
class Scale:
    """The scale a quality was rated on.

    ``labels`` name the categories of a categorical scale (in order, for an
    ordinal scale with named points). ``min``/``max`` bound numeric scales.
    """

    kind: ScaleKind
    min: float | None = None
    max: float | None = None
    labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind is not ScaleKind.CATEGORICAL:
            if self.min is None or self.max is None:
                raise ValueError(f"a {self.kind.value} scale needs min and max")
            if not self.max > self.min:
                raise ValueError(f"scale max ({self.max}) must be greater than min ({self.min})")

    @property
    def is_numeric(self) -> bool:
        return self.kind is not ScaleKind.CATEGORICAL

    @property
    def is_label(self) -> bool:
        """Binary and categorical qualities are compared label against label (agreement, κ),
        not by correlation; a binary one has a number too, so it is also numeric."""
        return self.kind in (ScaleKind.BINARY, ScaleKind.CATEGORICAL)

    def normalize(self, value: float) -> float:
        """Map a value on this scale to 0-1 (the common scale of every evaluator)."""
        if not self.is_numeric:
            raise ValueError("a categorical scale has no numeric normalisation")
        assert self.min is not None and self.max is not None
        return (float(value) - self.min) / (self.max - self.min)

    def denormalize(self, unit: float) -> float:
        """Map a 0-1 value back to this scale."""
        assert self.min is not None and self.max is not None
        return self.min + float(unit) * (self.max - self.min)

    def contains(self, value: RatingValue) -> bool:
        if value is None:
            return True
        if self.kind is ScaleKind.CATEGORICAL:
            return not self.labels or str(value) in self.labels
        if isinstance(value, str):
            return False
        assert self.min is not None and self.max is not None
        return self.min - 1e-9 <= float(value) <= self.max + 1e-9

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.value}
        if self.min is not None:
            out["min"] = _plain_number(self.min)
        if self.max is not None:
            out["max"] = _plain_number(self.max)
        if self.labels:
            out["labels"] = list(self.labels)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Scale":
        return cls(
            kind=ScaleKind(data["kind"]),
            min=None if data.get("min") is None else float(data["min"]),
            max=None if data.get("max") is None else float(data["max"]),
            labels=tuple(str(x) for x in data.get("labels", ())),
        )


BINARY_01 = Scale(ScaleKind.BINARY, 0, 1)


def is_label_quality(scale: Scale | None) -> bool:
    """The one test of "is this a label quality" (see :attr:`Scale.is_label`); None: no quality."""
    return scale is not None and scale.is_label


@dataclass(frozen=True, slots=True)
class Rating:
    """Every annotator's judgement of one quality of one example."""

    scores: tuple[RatingValue, ...]
    scale: Scale
    annotators: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.annotators and len(self.annotators) != len(self.scores):
            raise ValueError(
                f"{len(self.scores)} scores but {len(self.annotators)} annotator names"
            )

    @property
    def present(self) -> list[RatingValue]:
        return [s for s in self.scores if s is not None]

    def aggregate(self, how: Aggregation = Aggregation.MEAN) -> "Aggregate":
        """Pool the annotators' values; missing values are skipped, never imputed."""
        values = self.present
        if not values:
            return Aggregate(None, n=0)
        if how is Aggregation.MAJORITY or not self.scale.is_numeric:
            return majority_vote(values)
        numbers = [float(v) for v in values]  # type: ignore[arg-type]
        if how is Aggregation.MEDIAN:
            return Aggregate(float(statistics.median(numbers)), n=len(numbers))
        return Aggregate(math.fsum(numbers) / len(numbers), n=len(numbers))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "scores": [_plain_number(s) if isinstance(s, (int, float)) else s for s in self.scores],
            "scale": self.scale.to_dict(),
        }
        if self.annotators:
            out["annotators"] = list(self.annotators)
        return out


@dataclass(frozen=True, slots=True)
class Aggregate:
    """A pooled human label. ``tied`` lists the tied modes of a majority vote."""

    value: RatingValue
    n: int
    tied: tuple[RatingValue, ...] = ()

    @property
    def is_tie(self) -> bool:
        return len(self.tied) > 1


def majority_vote(values: Sequence[RatingValue]) -> Aggregate:
    """The mode of the votes (paper 002's Max-Vote). Ties are reported, and
    broken towards the smallest value (or first label) so results are stable."""
    present = [v for v in values if v is not None]
    if not present:
        return Aggregate(None, n=0)
    counts = Counter(present)
    top = max(counts.values())
    modes = [v for v, c in counts.items() if c == top]
    modes.sort(key=_sort_key)
    return Aggregate(modes[0], n=len(present), tied=tuple(modes) if len(modes) > 1 else ())


def _sort_key(v: RatingValue) -> tuple[int, float, str]:
    if isinstance(v, (int, float)):
        return (0, float(v), "")
    return (1, 0.0, str(v))


@dataclass(frozen=True, slots=True)
class Turn:
    speaker: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"speaker": self.speaker, "text": self.text}


@dataclass(frozen=True, slots=True)
class Perturbation:
    """How an adversarial candidate was made from an original reply."""

    kind: str  # negation, number, date, knowledge, or a user's own kind
    source_id: str  # id of the example whose reply was perturbed
    original_span: str = ""
    replacement: str = ""

    def to_dict(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "source_id": self.source_id,
            "original_span": self.original_span,
            "replacement": self.replacement,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Perturbation":
        return cls(
            kind=str(data["kind"]),
            source_id=str(data["source_id"]),
            original_span=str(data.get("original_span", "")),
            replacement=str(data.get("replacement", "")),
        )


@dataclass(frozen=True, slots=True)
class PairedResponses:
    """Two responses to one prompt (the example's context), for pairwise judging; which one
    the humans preferred is the example's rating (e.g. a categorical "A"/"B" label)."""

    response_a: str
    response_b: str

    def to_dict(self) -> dict[str, str]:
        return {"response_a": self.response_a, "response_b": self.response_b}


@dataclass(frozen=True, slots=True)
class Example:
    """One item to score, with its human ratings.

    Examples are values, and a 100,000-item dataset holds them compactly: no per-instance dict
    (``slots``), and the loaders let examples share equal parts (one context tuple for every
    candidate of a context, one ``ratings`` mapping or ``extra`` mapping for equal ones, one
    Rating for equal votes). Never mutate ``ratings`` or ``extra`` in place: build a new Example
    with :func:`dataclasses.replace`.
    """

    id: str
    group_id: str
    context: tuple[Turn, ...]
    candidate: str | None  # None for dialog-level items
    references: tuple[str, ...] = ()
    fact: str | None = None
    system: str | None = None
    tags: frozenset[str] = frozenset()
    ratings: Mapping[str, Rating] = field(default_factory=dict)
    #: The candidate is the reference itself (USR's "Original Ground Truth"):
    #: reference-based metrics skip it, LLM judges may score it.
    is_reference: bool = False
    level: Level = Level.TURN
    language: str | None = None
    adversarial: Perturbation | None = None
    #: Fields the source had that the model has no place for; kept, never dropped.
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: A pairwise item: two responses to the context instead of one candidate.
    pair: PairedResponses | None = None

    @property
    def is_pairwise(self) -> bool:
        return self.pair is not None

    @property
    def is_adversarial(self) -> bool:
        return self.adversarial is not None or TAG_ADVERSARIAL in self.tags

    @property
    def ended(self) -> str | None:
        """'open', 'closed', or None when the example is not tagged either way."""
        if TAG_CLOSED in self.tags:
            return TAG_CLOSED
        if TAG_OPEN in self.tags:
            return TAG_OPEN
        return None

    def human(self, quality: str, how: Aggregation = Aggregation.MEAN) -> RatingValue:
        rating = self.ratings.get(quality)
        return None if rating is None else rating.aggregate(how).value

    def context_text(self, sep: str = "\n") -> str:
        return sep.join(f"{t.speaker}: {t.text}" if t.speaker else t.text for t in self.context)


DerivedValue = TypeVar("DerivedValue")


def _qualities_of(examples: list[Example]) -> dict[str, Scale]:
    out: dict[str, Scale] = {}
    for ex in examples:
        for q, r in ex.ratings.items():
            out.setdefault(q, r.scale)
    return out


@dataclass
class Dataset:
    """A loaded dataset. Construction validates ids and scales once."""

    name: str
    examples: list[Example]
    source: str = ""
    description: str = ""
    #: Free-form metadata from the source (citation, licence, illustrative note, ...).
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        by_id: dict[str, Example] = {}
        for ex in self.examples:
            if by_id.setdefault(ex.id, ex) is not ex:
                raise ValueError(f"duplicate example id {ex.id!r} in dataset {self.name!r}")
        self._by_id = by_id

    def __len__(self) -> int:
        return len(self.examples)

    def __iter__(self) -> Iterator[Example]:
        return iter(self.examples)

    def get(self, example_id: str) -> Example:
        return self._by_id[example_id]

    def ids(self) -> KeysView[str]:
        """Every example's id, in the examples' order: a view of the index, no copy (100,000 ids
        handed to a table at C speed)."""
        return self._by_id.keys()

    def derived(self, name: str, compute: Callable[[list[Example]], DerivedValue]) -> DerivedValue:
        """``compute(examples)``, kept under ``name`` until the examples list is replaced or grows (the compute
        worker extends it as pieces come). For what walks every example and is asked for again and again: the
        qualities (20 ms of the interpreter at 100,000 items, asked at a run's start and end on threads beside
        the UI's), the examples' pickled pieces (:mod:`dialjudge.core.api.pickled_examples`). A pickled copy of
        the dataset leaves them behind (``__getstate__``) and computes its own."""
        examples = self.examples
        kept = self.__dict__.setdefault("_derived", {})
        entry = kept.get(name)
        # The list itself is kept, not its id: a new list at a freed one's address is never taken for it.
        if entry is None or entry[0] is not examples or entry[1] != len(examples):
            entry = kept[name] = (examples, len(examples), compute(examples))
        return entry[2]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_derived", None)
        return state

    @property
    def qualities(self) -> dict[str, Scale]:
        """Every rated quality with its scale, in first-seen order (a new dict the caller may change)."""
        return dict(self.derived("qualities", _qualities_of))

    def qualities_at(self, level: Level) -> dict[str, Scale]:
        out: dict[str, Scale] = {}
        for ex in self.examples:
            if ex.level is level:
                for q, r in ex.ratings.items():
                    out.setdefault(q, r.scale)
        return out

    @property
    def systems(self) -> list[str]:
        return sorted({ex.system for ex in self.examples if ex.system})

    @property
    def tags(self) -> list[str]:
        return sorted({t for ex in self.examples for t in ex.tags})

    def groups(self) -> dict[str, list[Example]]:
        out: dict[str, list[Example]] = {}
        for ex in self.examples:
            out.setdefault(ex.group_id, []).append(ex)
        return out

    def subset(self, keep: Iterable[Example] | None = None, *, name: str | None = None) -> "Dataset":
        kept = list(self.examples if keep is None else keep)
        return Dataset(name or self.name, kept, self.source, self.description, dict(self.meta))


def _plain_number(x: Any) -> Any:
    """Write 3.0 as 3 so exported files stay as the source wrote them."""
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x
