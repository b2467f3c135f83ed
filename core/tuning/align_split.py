"""Split a run's items for ``dialjudge align``: the corrected contexts to tune on, the rest held out.

A correction (a label the user gave one item) shows the search what the user thinks of that
item, and, through the few-shot examples it becomes, the dialogue it belongs to. So every
context that holds a corrected item goes to the search side, whole: no held-out item shares a
dialogue with a correction, which is leakage excluded by context and not only by item. The
held-out side is every other context with a human rating (the reference there is the
dataset's ratings, which no correction touched). :func:`leaked_contexts` is the check the
align use case and its test make on every split.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Sequence

from ..errors import ConfigError
from ..model import Example
from .split import ContextSplit, context_ids


def corrected_contexts(examples: Iterable[Example], labelled: Collection[str]) -> set[str]:
    """The contexts that hold at least one labelled item."""
    return {ex.group_id for ex in examples if ex.id in labelled}


def correction_split(examples: Sequence[Example], labelled: Collection[str], *, rated: Collection[str],
                     seed: int = 0) -> ContextSplit:
    """Tuning: the corrected contexts (in a seeded order); held-out: the other contexts with a rated
    item (``rated``: ids of items with a human rating). ConfigError when either side is empty."""
    tuning = corrected_contexts(examples, labelled)
    if not tuning:
        raise ConfigError("none of the corrections is an item of the run, so there is nothing to align on")
    heldout = [c for c in context_ids([ex for ex in examples if ex.id in rated]) if c not in tuning]
    if len(heldout) < 2:
        raise ConfigError(f"the corrections touch {len(tuning)} of the run's contexts and leave "
                          f"{len(heldout)} with human ratings to hold out; align needs at least 2 untouched "
                          "contexts to report on")
    order = sorted(tuning)
    random.Random(seed).shuffle(order)
    total = len(order) + len(heldout)
    split = ContextSplit(tuple(order), tuple(sorted(heldout)), seed, len(heldout) / total)
    leaked = leaked_contexts(split, examples, labelled)
    if leaked:  # cannot happen by construction; the check is the guarantee
        raise AssertionError(f"corrected contexts reached the held-out split: {sorted(leaked)[:3]}")
    return split


def leaked_contexts(split: ContextSplit, examples: Iterable[Example], labelled: Collection[str]) -> set[str]:
    """Held-out contexts that hold a corrected item (empty for a sound split)."""
    return corrected_contexts(examples, labelled) & set(split.heldout)
