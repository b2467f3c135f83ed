"""Pre-paired preference data: what every pair loader shares.

A *preference pair* is one prompt, two replies (A and B) and the humans' votes on
which is better. It becomes one :class:`~dialjudge.core.model.Example` whose
``pair`` holds the replies, whose context is the prompt, and whose rating
``preference`` keeps every vote (``"A"``, ``"B"`` or ``"tie"``) with the
annotator who cast it. The spelling a file used for each vote (``model_a``,
``tie (bothbad)``, ...) is kept in ``extra["votes_as_written"]``.

Winner spellings are read by :func:`winner_label`; a spelling it does not know is
an error that names the file, the line and the field, never a guess. Records
that name the same prompt and the same two replies (in either order) are one
pair with several votes: a vote cast with the replies the other way round is
turned round, so that "A" always means the first-seen reply A.

A pair whose two replies are the same text cannot be judged: it is left out, and
``meta["warnings"]`` names its lines; ``meta["excluded"]`` counts it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..errors import DataError
from ..model import Example, Level, PairedResponses, Rating, Scale, ScaleKind, Turn

#: The rating every pair loader writes.
PREFERENCE = "preference"
#: A vote: reply A is better, reply B is better, or neither.
VOTE_A, VOTE_B, VOTE_TIE = "A", "B", "tie"
PREFERENCE_SCALE = Scale(ScaleKind.CATEGORICAL, labels=(VOTE_A, VOTE_B, VOTE_TIE))

_SPELLINGS = {
    VOTE_A: ("a", "model_a", "model a", "response_a", "response a", "output_a", "reply_a", "answer_a", "first",
             "left", "1"),
    VOTE_B: ("b", "model_b", "model b", "response_b", "response b", "output_b", "reply_b", "answer_b", "second",
             "right", "2"),
    VOTE_TIE: ("tie", "tie (bothbad)", "tie(bothbad)", "tie_bothbad", "both_bad", "both bad", "bothbad", "draw",
               "equal", "same", "neither", "both good", "both_good"),
}
WINNER_SPELLINGS: dict[str, str] = {s: label for label, spellings in _SPELLINGS.items() for s in spellings}
#: How the allowed spellings are listed in messages.
ALLOWED_TEXT = ("A (a, model_a, response_a, output_a, first, left, 1), B (the same with b, second, right, 2) or "
                "tie (tie, tie (bothbad), both_bad, draw, equal, neither)")
#: How many line numbers a warning names before it says "and N more".
WARN_LINES = 5


def winner_label(value: Any, *, model_a: str | None = None, model_b: str | None = None) -> str | None:
    """``"A"``, ``"B"`` or ``"tie"`` for a written winner; None for a spelling that names none of them.
    A winner that is one of the two model names (as some exports write it) names that reply."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        value = str(value)
    if not isinstance(value, str):
        return None
    text = " ".join(value.strip().split())
    if model_a and text == model_a and text != model_b:
        return VOTE_A
    if model_b and text == model_b and text != model_a:
        return VOTE_B
    return WINNER_SPELLINGS.get(text.lower())


def turned_round(vote: str) -> str:
    """The vote with the replies the other way round."""
    return {VOTE_A: VOTE_B, VOTE_B: VOTE_A}.get(vote, vote)


@dataclass
class PairRecord:
    """One vote as a file gives it, before records of the same pair are merged."""

    line: int
    pair_id: str | None
    prompt: tuple[Turn, ...]
    response_a: str
    response_b: str
    vote: str
    as_written: str
    annotator: str | None = None
    #: The prompt's id where the file has one (several pairs of one prompt share it).
    prompt_id: str | None = None
    category: str | None = None
    model_a: str | None = None
    model_b: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Pair:
    first: PairRecord
    votes: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    annotators: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)



def merge_pairs(records: Iterable[PairRecord], where: str, *, id_field: str = "id") -> tuple[list[Example],
                                                                                         dict[str, Any]]:
    """Merge the votes of each pair into one Example; returns the examples (file order) and the meta
    entries (warnings, excluded counts) to add to the dataset's meta."""
    pairs: dict[Any, _Pair] = {}
    id_owner: dict[str, Any] = {}
    identical: list[int] = []
    for record in records:
        if record.response_a == record.response_b:
            identical.append(record.line)
            continue
        if record.pair_id is not None:
            key: Any = ("id", record.pair_id)
            if key in pairs:
                known = pairs[key].first
                if (known.response_a, known.response_b) == (record.response_b, record.response_a):
                    record.vote = turned_round(record.vote)
                elif (known.prompt, known.response_a, known.response_b) != (record.prompt, record.response_a,
                                                                             record.response_b):
                    raise DataError(f"pair {record.pair_id!r} has other text here than on line {known.line}",
                                    path=where, line=record.line, field=id_field)
        else:
            # Turns are frozen dataclasses: the prompt tuple hashes and compares as a whole.
            forward = (record.prompt_id, record.prompt, record.response_a, record.response_b)
            backward = (record.prompt_id, record.prompt, record.response_b, record.response_a)
            if backward in pairs and forward not in pairs:
                key = backward
                record.vote = turned_round(record.vote)
            else:
                key = forward
        pair = pairs.get(key)
        if pair is None:
            pair = pairs[key] = _Pair(record)
        pair.votes.append(record.vote)
        pair.written.append(record.as_written)
        pair.annotators.append(record.annotator or f"vote{len(pair.votes)}")
        pair.lines.append(record.line)

    examples = []
    group_of_prompt: dict[Any, str] = {}
    for key, pair in pairs.items():
        first = pair.first
        pair_id = first.pair_id if first.pair_id is not None else f"pair-{first.line}"
        if pair_id in id_owner:
            raise DataError(f"pair id {pair_id!r} is used twice", path=where, line=first.line, field=id_field)
        id_owner[pair_id] = key
        prompt_of: Any = first.prompt_id if first.prompt_id is not None else first.prompt
        group = group_of_prompt.setdefault(prompt_of, first.prompt_id or pair_id)
        extra: dict[str, Any] = {"votes_as_written": list(pair.written), "lines": list(pair.lines)}
        if first.category:
            extra["category"] = first.category
        if first.model_a or first.model_b:
            extra["model_a"], extra["model_b"] = first.model_a, first.model_b
        extra.update(first.extra)
        examples.append(Example(
            id=pair_id, group_id=group, context=first.prompt, candidate=None, level=Level.TURN,
            pair=PairedResponses(first.response_a, first.response_b),
            ratings={PREFERENCE: Rating(tuple(pair.votes), PREFERENCE_SCALE, tuple(pair.annotators))},
            extra=extra))
    meta: dict[str, Any] = {}
    if identical:
        shown = ", ".join(map(str, identical[:WARN_LINES]))
        more = f" and {len(identical) - WARN_LINES} more" if len(identical) > WARN_LINES else ""
        meta["warnings"] = [f"{len(identical)} record(s) have two identical replies and were left out "
                            f"(line {shown}{more}): there is nothing to prefer"]
        meta["excluded"] = {"identical replies": len(identical)}
    return examples, meta


def vote_of(value: Any, where: str, line: int, field_name: str, *, model_a: str | None = None,
            model_b: str | None = None) -> str:
    """The vote a winner cell names; a DataError naming the line and field otherwise."""
    label = winner_label(value, model_a=model_a, model_b=model_b)
    if label is None:
        shown = "an empty cell" if value in (None, "") else repr(value)
        raise DataError(f"winner {shown} is not an allowed spelling: expected {ALLOWED_TEXT}"
                        + (f", or a model name ({model_a!r} or {model_b!r})" if model_a and model_b else ""),
                        path=where, line=line, field=field_name)
    return label




def first_line(path: Path) -> str:
    """The first non-blank line, read without reading the rest (a quoted CSV cell may continue below it)."""
    try:
        with path.open(encoding="utf-8-sig") as handle:
            return next((line for line in handle if line.strip()), "")
    except (OSError, UnicodeDecodeError):
        return ""


__all__ = ["PREFERENCE", "PREFERENCE_SCALE", "VOTE_A", "VOTE_B", "VOTE_TIE", "WINNER_SPELLINGS", "PairRecord", "first_line",
           "merge_pairs", "turned_round", "vote_of", "winner_label"]
