"""Which answer strings a probability mode weighs, and how a token's text maps to one.

Shared by every backend so that "yes", " Yes" and "YES" count as the same answer
everywhere, and so that the scoring rules see the same choice names the
backends fill in ``BackendResult.choice_probs``.
"""

from __future__ import annotations

import functools
import math
from typing import Iterable, Mapping

from ...errors import BackendError
from ..types import OutputSpec, ScoringMode

YES_NO = ("yes", "no")

#: Backends return at least this many first tokens in ``top_logprobs``.
MIN_TOP_LOGPROBS = 5


def top_logprobs_count(top_k: int) -> int:
    return max(top_k, MIN_TOP_LOGPROBS)


def answer_choices(spec: OutputSpec, mode: ScoringMode) -> tuple[str, ...]:
    """The answers a probability mode distributes its mass over, in scale order.

    YESNO mode uses the template's own spelling when its choices are yes/no,
    else plain ``("yes", "no")``.
    """
    if mode is ScoringMode.YESNO:
        keys = {normalize_answer(c) for c in spec.choices}
        if len(spec.choices) == 2 and keys == set(YES_NO):
            return spec.choices
        return YES_NO
    if not spec.choices:
        raise BackendError(
            "the template's output lists no choices, so log-probability scoring has no answers "
            "to weigh; add `choices` to its output section or use mode generate"
        )
    return spec.choices


def normalize_answer(text: str) -> str:
    """Leading/trailing space and case do not make a different answer."""
    return text.strip().casefold()


def answer_variants(choice: str, mode: ScoringMode) -> list[str]:
    """The spellings of one answer whose probabilities are summed.

    Models often put a space before the answer ("Score: 4" is "Score:" + " 4"),
    and yes/no comes in several cases; each spelling is a different token path.
    """
    base = choice.strip()
    spellings = [base]
    if mode is ScoringMode.YESNO:
        spellings = [base.lower(), base.capitalize(), base.upper()]
    out: list[str] = []
    for s in spellings:
        for v in (s, " " + s):
            if v not in out:
                out.append(v)
    return out


def match_choice(text: str, choices: Iterable[str]) -> str | None:
    """The choice that ``text`` spells (ignoring case and surrounding space), if any."""
    key = normalize_answer(text)
    if not key:
        return None
    return _choice_keys(tuple(choices))[0].get(key)


def is_partial_answer(text: str, choices: Iterable[str]) -> bool:
    """True when ``text`` is a proper beginning of some choice (e.g. "0" of "0.7")."""
    key = normalize_answer(text)
    if not key:
        return False
    return key in _choice_keys(tuple(choices))[1]


@functools.lru_cache(maxsize=256)
def _choice_keys(choices: tuple[str, ...]) -> tuple[dict[str, str], frozenset[str]]:
    """Each choice by its normalised spelling (the first of equals), and every proper beginning of a
    normalised choice. Reading one answer's log-probabilities asks both for every top token at every
    position (millions of times in a large batch import), and a template has a handful of choices."""
    by_key: dict[str, str] = {}
    beginnings: set[str] = set()
    for choice in choices:
        key = normalize_answer(choice)
        by_key.setdefault(key, choice)
        beginnings.update(key[:end] for end in range(1, len(key)))
    return by_key, frozenset(beginnings)


def normalize_logprobs(logprobs: Mapping[str, float]) -> dict[str, float]:
    """Restricted softmax: probabilities over the choices only, summing to 1.

    Choices with no mass at all (``-inf``) get 0. Returns ``{}`` when no choice
    has any mass, which scoring reports as a failure.
    """
    finite = [lp for lp in logprobs.values() if math.isfinite(lp)]
    if not finite:
        return {}
    top = max(finite)
    total = top + math.log(sum(math.exp(lp - top) for lp in finite))
    return {c: (math.exp(lp - total) if math.isfinite(lp) else 0.0) for c, lp in logprobs.items()}


def logsumexp(values: Iterable[float]) -> float:
    vals = [v for v in values if math.isfinite(v)]
    if not vals:
        return -math.inf
    top = max(vals)
    return top + math.log(sum(math.exp(v - top) for v in vals))
