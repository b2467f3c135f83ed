"""Constrained generation on the bundled SmolLM2-135M: what the model writes follows the grammar and parses."""

from __future__ import annotations

import asyncio

import pytest

from dialjudge.core.config import Sampling
from dialjudge.core.judges.backends.llama import LlamaBackend
from dialjudge.core.judges.prompts.constraint import AnswerConstraint
from dialjudge.core.judges.prompts.grammar import GrammarError
from dialjudge.core.judges.run.parsing import parse_output
from dialjudge.core.judges.types import (
    JudgeRequest,
    Message,
    OutputKind,
    OutputSpec,
    RenderedPrompt,
    ScoringMode,
)

pytestmark = pytest.mark.model

LIKERT = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"), answer_prefix="Score:")
YES_NO = OutputSpec(OutputKind.YESNO, 0, 1, choices=("No", "Yes"), answer_prefix="Answer:")
SMALL_JSON = OutputSpec(OutputKind.JSON, 0, 1, choices=("0", "1"), score_key="score", reasoning_key="why")
DIALOGUE = "Dialogue:\nA: I love hiking in the mountains.\nB: Oh nice, which ones?\nResponse: The Alps, mostly.\n"


def ask(spec: OutputSpec, question: str, constrain: AnswerConstraint, max_tokens: int) -> JudgeRequest:
    messages = (Message("system", "You are a careful judge of dialogue responses."),
                Message("user", f"{DIALOGUE}{question}"))
    return JudgeRequest("item", RenderedPrompt(messages, spec, "t"), ScoringMode.GENERATE,
                        Sampling(max_tokens=max_tokens), constrain=constrain)


@pytest.mark.parametrize("spec, question, constrain, max_tokens", [
    (LIKERT, "Rate the response from 1 to 5. Explain your rating at length.", AnswerConstraint.ANSWER, 12),
    (YES_NO, "Is the response on topic? Think it through, then answer.", AnswerConstraint.REASONING, 40),
    (SMALL_JSON, "Is the response good? Answer as JSON with keys why and score (0 or 1).",
     AnswerConstraint.ANSWER, 48),
], ids=["likert-answer", "yesno-reasoning", "json-answer"])
def test_constrained_generation_ends_in_an_answer_that_parses(llama_backend: LlamaBackend, spec: OutputSpec,
                                                              question: str, constrain: AnswerConstraint,
                                                              max_tokens: int):
    request = ask(spec, question, constrain, max_tokens)
    asyncio.run(llama_backend.check_constraint(request))
    result = asyncio.run(llama_backend.complete(request))
    # The model stopped on its own: the grammar left room for the whole answer within max_tokens.
    assert result.completion_tokens < max_tokens, result.raw_output
    parsed = parse_output(result.raw_output, spec)
    assert parsed.ok, (result.raw_output, parsed.error)
    if constrain is AnswerConstraint.REASONING:
        reasoning, answer = result.raw_output.split("\n")
        assert reasoning and answer in ("Answer: No", "Answer: Yes")
    elif spec is LIKERT:
        assert result.raw_output in {f"Score: {v}" for v in range(1, 6)}
    # Unconstrained, the same request does not end in a bare answer line.
    free = asyncio.run(llama_backend.complete(ask(spec, question, AnswerConstraint.OFF, max_tokens)))
    assert free.raw_output != result.raw_output


def test_too_few_tokens_for_the_answer_are_refused_before_generating(llama_backend: LlamaBackend):
    with pytest.raises(GrammarError, match="max_tokens is 10"):
        asyncio.run(llama_backend.check_constraint(ask(YES_NO, "Answer.", AnswerConstraint.REASONING, 10)))
