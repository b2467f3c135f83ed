"""Split a dataset by context into a tuning part and a held-out part.

All candidates of one context go to the same side (a context on both sides would let the
search see the held-out dialogue). The split is a seeded shuffle of the context ids, so a
search stores its seed and fraction and gets the same split back. The tuning contexts also
come in a seeded order, which successive halving samples from the front of (so each
round's sample contains the previous one and earlier judgments are reused).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import ConfigError
from ..model import Dataset, Example


@dataclass(frozen=True)
class ContextSplit:
    #: Tuning contexts in their seeded sampling order.
    tuning: tuple[str, ...]
    heldout: tuple[str, ...]
    seed: int
    heldout_fraction: float

    def tuning_items(self, dataset: Dataset) -> list[Example]:
        """The tuning part, in dataset order (the few-shot pool comes from here only)."""
        keep = set(self.tuning)
        return [ex for ex in dataset.examples if ex.group_id in keep]

    def heldout_items(self, dataset: Dataset) -> list[Example]:
        keep = set(self.heldout)
        return [ex for ex in dataset.examples if ex.group_id in keep]

    def sample_items(self, dataset: Dataset, n_contexts: int) -> list[Example]:
        """The items of the first ``n_contexts`` tuning contexts (a round's sample)."""
        keep = set(self.tuning[:n_contexts])
        return [ex for ex in dataset.examples if ex.group_id in keep]

    def to_dict(self) -> dict[str, Any]:
        return {"tuning": list(self.tuning), "heldout": list(self.heldout), "seed": self.seed,
                "heldout_fraction": self.heldout_fraction}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ContextSplit":
        return cls(tuple(str(c) for c in data["tuning"]), tuple(str(c) for c in data["heldout"]),
                   int(data["seed"]), float(data["heldout_fraction"]))


def context_ids(examples: Sequence[Example]) -> list[str]:
    """Distinct context ids in first-seen order."""
    return list(dict.fromkeys(ex.group_id for ex in examples))


def split_by_context(examples: Sequence[Example], *, heldout_fraction: float, seed: int) -> ContextSplit:
    """Hold out ``round(fraction × contexts)`` contexts (at least one on each side)."""
    if not 0.0 < heldout_fraction < 1.0:
        raise ConfigError(f"heldout_fraction must be between 0 and 1, not {heldout_fraction}")
    contexts = context_ids(examples)
    if len(contexts) < 2:
        raise ConfigError(f"a tuning search needs at least 2 contexts to split, the data has {len(contexts)}")
    order = sorted(contexts)  # independent of file order: the seed alone decides
    random.Random(seed).shuffle(order)
    n_heldout = min(max(1, math.floor(heldout_fraction * len(order) + 0.5)), len(order) - 1)
    return ContextSplit(tuple(order[n_heldout:]), tuple(order[:n_heldout]), seed, heldout_fraction)
