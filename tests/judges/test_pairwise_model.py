"""A pairwise template on the bundled SmolLM2-135M: p(A), p(B), p(tie) from one forward pass per order."""

from __future__ import annotations

import pytest

from dialjudge.core.config import Sampling
from dialjudge.core.judges.backends.llama import LlamaBackend
from dialjudge.core.judges.prompts.render import render_prompt
from dialjudge.core.judges.prompts.templates import load_templates
from dialjudge.core.judges.run.pairwise import pair_example
from dialjudge.core.judges.run.scoring import score_result
from dialjudge.core.judges.types import JudgeRequest, ScoringMode
from dialjudge.core.model import Example, Turn

pytestmark = pytest.mark.model

CONTEXT = (Turn("A", "I love hiking in the mountains."), Turn("B", "Oh nice, which ones?"))


async def test_both_orders_give_a_distribution_over_the_verdicts(llama_backend: LlamaBackend) -> None:
    good = Example("x", "c", CONTEXT, "A: Mostly the Alps, every summer.")
    bad = Example("y", "c", CONTEXT, "A: Bananas are yellow.")
    template = load_templates()["pairwise-plain"]
    for first, second in ((good, bad), (bad, good)):
        prompt = render_prompt(template, pair_example(first, second))
        # The reading's arithmetic, whatever share of the probability the verdicts hold (the
        # valid-mass threshold has its own tests: test_probability_api.py).
        request = JudgeRequest(f"{first.id}>{second.id}", prompt, ScoringMode.LOGPROB, Sampling(), top_k=0,
                               min_valid_mass=0.0)
        result = await llama_backend.complete(request)
        probs = result.choice_probs
        assert probs is not None and set(probs) == {"A", "B", "tie"}
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-6)
        judgment = score_result(request, result, "smollm2")
        assert judgment.valid_mass is not None and 0 < judgment.valid_mass <= 1
        # The score is the first reply's expected point: p(A) + p(tie) / 2.
        assert judgment.normalized == pytest.approx(probs["A"] + probs["tie"] / 2, abs=1e-9)
