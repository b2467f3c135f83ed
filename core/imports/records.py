"""What every import format reads a file into, before it is matched to a dataset.

A format module turns a file into :class:`ImportedRow` objects (one judge's
verdict on one item) and says, per value, which column or field it came from;
nothing here knows about datasets, templates or the run store.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ImportedRow:
    """One judge's score for one item, as the file has it (the score on the file's own scale)."""

    #: Where the row is in the file ("line 7", "sample 3"), for messages that name it.
    where: str
    judge: str
    #: The item's id; None for files that identify items by their text (context + response).
    item_id: str | None
    score: float | None
    context: str | None = None
    response: str | None = None
    repeat: int = 0
    raw_output: str = ""
    reasoning: str | None = None
    distribution: Mapping[str, float] | None = None
    top_logprobs: list[tuple[str, float]] | None = None
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    evaluated_tokens: int = 0
    #: Why the file itself has no score for this row (a failed request, an unreadable value).
    error: str | None = None
    #: dialjudge's own export only: the stored 0-1 score, the scoring mode and the prompt's hash,
    #: which are kept as they are so that a round trip changes nothing.
    normalized: float | None = None
    mode: str | None = None
    prompt_hash: str = ""
    cached: bool = False
    request_failed: bool = False
    sampling: Mapping[str, Any] = field(default_factory=dict)
    #: Probability modes: the mass the valid answers held, how many the top-K list showed, and
    #: whether the mass is only a lower bound (core.judges.types.Judgment).
    valid_mass: float | None = None
    valid_in_top: int | None = None
    mass_is_lower_bound: bool = False


@dataclass(frozen=True)
class ParsedFile:
    """A file read by one format: its rows and where each kind of value came from."""

    format: str
    rows: tuple[ImportedRow, ...]
    #: Value kind ("score", "item id", "raw answer", ...) -> the column or field it was read from.
    fields: Mapping[str, str]
    #: The scale the format itself fixes for its scores (promptfoo's 0-1), as (low, high), if any.
    native_scale: tuple[float, float] | None = None
    #: What the file says about itself (task, model, source run), kept in the run's provenance.
    source: Mapping[str, Any] = field(default_factory=dict)
    #: Pairwise verdicts on pre-paired items (the verdicts format); its ``rows`` are then empty.
    verdicts: tuple["VerdictRow", ...] = ()


def number_or_none(value: Any) -> float | None:
    """A score cell as a number: None for an empty cell; ValueError for text that is no number."""
    if value is None or isinstance(value, bool):
        return None if value is None else float(value)
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    if not text or text.lower() in ("nan", "na", "n/a", "null", "none"):
        return None
    return float(text)


@dataclass(frozen=True)
class VerdictRow:
    """One judge's verdict on one pre-paired item, as the file has it (:mod:`.formats.verdicts`)."""

    where: str
    judge: str
    pair_id: str
    #: "A", "B" or "tie" (the pair's reply A or B, whichever was shown first); None when unreadable.
    verdict: str | None
    #: The reply shown first, "A" or "B"; None when the file does not say.
    first: str | None = None
    #: The verdict as written, for messages that name it.
    written: str = ""
