"""Pre-paired items (a prompt, two replies and the humans' votes) as the candidates of a pairwise run.

A pairwise run pairs the candidates of each context (:mod:`.pairwise`). A pre-paired item already is a
pair, so it is opened into its two replies: candidates ``<id>#A`` and ``<id>#B`` in a context of their
own (the item's id). Planning then asks exactly that one pair, in both orders by default
(``<id>#A><id>#B`` shows reply A first, ``<id>#B><id>#A`` shows reply B first) or in one order drawn
with the seed, and the store, the cache, resume, retry and rescore work as for any pairwise run.
"""

from __future__ import annotations

from typing import Sequence

from ...errors import ConfigError
from ...model import Example, Level

#: Joins a pre-paired item's id and the side of one of its replies: "<id>#A", "<id>#B".
SIDE_SEPARATOR = "#"
SIDES = ("A", "B")


def is_prepaired(items: Sequence[Example]) -> bool:
    """True when the items are pre-paired (every one of them; a mixture is refused)."""
    paired = sum(1 for ex in items if ex.is_pairwise)
    if paired and paired != len(items):
        single = next(ex.id for ex in items if not ex.is_pairwise)
        raise ConfigError(f"the selection mixes pre-paired items with single replies (e.g. {single!r}); judge them "
                          "in separate runs")
    return bool(paired)


def reply_id(item_id: str, side: str) -> str:
    return f"{item_id}{SIDE_SEPARATOR}{side}"


def side_of(candidate_id: str) -> tuple[str, str]:
    """(item id, "A" or "B") of a reply candidate's id."""
    item, _, side = candidate_id.rpartition(SIDE_SEPARATOR)
    if side not in SIDES or not item:
        raise ValueError(f"{candidate_id!r} is not a reply of a pre-paired item")
    return item, side


def reply_candidates(items: Sequence[Example]) -> list[Example]:
    """Each pre-paired item's two replies as candidates in a context of their own."""
    out = []
    for ex in items:
        assert ex.pair is not None
        for side, text in zip(SIDES, (ex.pair.response_a, ex.pair.response_b)):
            out.append(Example(id=reply_id(ex.id, side), group_id=ex.id, context=ex.context, candidate=text,
                               references=ex.references, fact=ex.fact, tags=ex.tags, level=Level.TURN,
                               language=ex.language, extra={"pair": ex.id, "side": side}))
    return out


def as_candidates(items: Sequence[Example]) -> Sequence[Example]:
    """``items`` unchanged, or opened into their replies when they are pre-paired."""
    return reply_candidates(items) if is_prepaired(items) else items


__all__ = ["SIDE_SEPARATOR", "SIDES", "as_candidates", "is_prepaired", "reply_candidates", "reply_id", "side_of"]
