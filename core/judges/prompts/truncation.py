"""Fitting a dialogue into the judge model's context window, by an explicit and reported policy.

The policy: when the rendered prompt does not fit, the *oldest context turns*
are left out, one at a time, and a marker turn says how many ("[3 earlier
turns left out to fit the judge's context window]"), so neither the model nor
a reader is misled. The response being judged, the instructions, the fact and
the few-shot examples are never cut, and the last context turn always stays.
A prompt that does not fit even then is an error for that item, never cut
silently. Every truncation is counted, so runs report them.

The window is the judge's ``n_ctx`` for a local model, or ``options.context_window``
for an API judge (an API's window is not known otherwise; without it nothing
is truncated and the server decides). Tokens are counted by the backend's own
tokenizer where it offers ``count_tokens``, else estimated from UTF-8 bytes
(:func:`estimate_tokens`, which over-counts ordinary text, so it errs on the
side of fitting).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from ...errors import BackendError
from ...model import Example, Turn
from ..types import RenderedPrompt

#: Tokens kept free beyond the answer, for the chat template's own tokens.
TEMPLATE_MARGIN_TOKENS = 32
#: Bytes per token assumed when no tokenizer is at hand: BPE vocabularies average
#: about 4 characters per token on English; 3 leaves room for other text.
BYTES_PER_TOKEN = 3.0

TokenCounter = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


def marker_text(dropped: int) -> str:
    turns = "turn" if dropped == 1 else "turns"
    return f"[{dropped} earlier {turns} left out to fit the judge's context window]"


class PromptTooLong(BackendError):
    """Even with only the last context turn, the prompt does not fit the window."""


@dataclass(frozen=True)
class WindowBudget:
    """How many prompt tokens a judge accepts, and how they are counted."""

    window: int
    answer_tokens: int
    count: TokenCounter = estimate_tokens

    @property
    def prompt_tokens(self) -> int:
        return self.window - self.answer_tokens - TEMPLATE_MARGIN_TOKENS


@dataclass(frozen=True)
class Fitted:
    prompt: RenderedPrompt
    #: Context turns left out (0: the whole dialogue fitted).
    dropped_turns: int


def fit_to_window(render: Callable[[Example], RenderedPrompt], example: Example,
                  budget: WindowBudget) -> Fitted:
    """Render ``example``, leaving out its oldest context turns until the prompt fits ``budget``."""
    prompt = render(example)
    if budget.count(prompt.text) <= budget.prompt_tokens:
        return Fitted(prompt, 0)
    context = example.context
    # Fewest turns dropped that fit: search over how many to keep (more kept, more tokens).
    low, high = 1, len(context) - 1  # keep at least the last turn; dropping 0 did not fit
    best: Fitted | None = None
    while low <= high:
        keep = (low + high) // 2
        dropped = len(context) - keep
        trimmed = dataclasses.replace(example, context=(Turn("", marker_text(dropped)), *context[-keep:]))
        candidate = render(trimmed)
        if budget.count(candidate.text) <= budget.prompt_tokens:
            best = Fitted(candidate, dropped)
            low = keep + 1
        else:
            high = keep - 1
    if best is None:
        needed = budget.count(render(dataclasses.replace(
            example, context=(Turn("", marker_text(len(context) - 1)), *context[-1:]))).text)
        raise PromptTooLong(
            f"item {example.id!r}: the prompt needs about {needed} tokens even with only the last turn of "
            f"the dialogue, but the judge's window leaves {budget.prompt_tokens} for it (window "
            f"{budget.window}, {budget.answer_tokens} for the answer); the response and the instructions are "
            "never cut: shorten the template or use a judge with a larger window")
    return best
