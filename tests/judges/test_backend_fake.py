"""FakeBackend: deterministic answers in every mode, known scores, injected failures and delays."""

from __future__ import annotations

import asyncio

import pytest

from dialjudge.core.config import JudgeConfig, Sampling
from dialjudge.core.errors import BackendError, ConfigError
from dialjudge.core.judges.backends import make_backend
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.run.scoring import score_result
from dialjudge.core.judges.types import (
    JudgeBackend,
    JudgeRequest,
    Message,
    OutputKind,
    OutputSpec,
    RenderedPrompt,
    ScoringMode,
)

LIKERT = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"), answer_prefix="Score:")
TENTHS = OutputSpec(OutputKind.CONTINUOUS, 0, 1, choices=tuple(f"{i / 10:.1f}" for i in range(11)))
YES_NO = OutputSpec(OutputKind.YESNO, 0, 1, choices=("No", "Yes"), answer_prefix="Answer:")
JSON_KPI = OutputSpec(OutputKind.JSON, 0, 1, choices=("0", "1"), score_key="KPI Score", reasoning_key="Reasoning")


def request(item: str, spec: OutputSpec, mode: ScoringMode, *, top_k: int = 3, seed: int = 0,
            text: str = "Rate the response.") -> JudgeRequest:
    prompt = RenderedPrompt((Message("user", f"{text} ({item})"),), spec, "t")
    return JudgeRequest(item, prompt, mode, Sampling(seed=seed), top_k=top_k)


async def test_it_satisfies_the_backend_protocol_and_is_built_from_config():
    backend = make_backend(JudgeConfig("f", "fake", model="m", concurrency=3, extra={"fail_every": 2}))
    assert isinstance(backend, FakeBackend) and isinstance(backend, JudgeBackend)
    assert backend.max_concurrency == 3 and backend.fail_every == 2 and backend.identity == "fake:f:m"
    with pytest.raises(BackendError, match="garbage_every"):
        make_backend(JudgeConfig("f", "fake", extra={"garbage_every": -1}))


async def test_answers_are_deterministic_and_depend_on_item_and_seed():
    fake = FakeBackend()
    first = await fake.complete(request("a", LIKERT, ScoringMode.LOGPROB))
    again = await FakeBackend().complete(request("a", LIKERT, ScoringMode.LOGPROB))
    assert first.choice_probs == again.choice_probs and first.top_logprobs == again.top_logprobs
    scores = set()
    for item in "abcdefgh":
        for seed in (0, 1):
            r = await fake.complete(request(item, TENTHS, ScoringMode.GENERATE, seed=seed))
            scores.add(r.raw_output)
    assert len(scores) > 8


@pytest.mark.parametrize("top_k", [0, 3])
async def test_known_scores_come_back_exactly_in_logprob_mode(top_k):
    known = {"a": 1.0, "b": 2.5, "c": 4.2, "d": 5.0}
    fake = FakeBackend(score_fn=lambda item, prompt: known[item])
    for item, value in known.items():
        req = request(item, LIKERT, ScoringMode.LOGPROB, top_k=top_k)
        result = await fake.complete(req)
        assert sum(result.choice_probs.values()) == pytest.approx(1.0)
        assert score_result(req, result, "fake").score == pytest.approx(value)


async def test_known_scores_in_generate_and_yesno_modes():
    fake = FakeBackend(score_fn=lambda item, prompt: {"a": 0.8, "b": 0.3}[item])
    for item, value in (("a", 0.8), ("b", 0.3)):
        req = request(item, TENTHS, ScoringMode.GENERATE)
        assert score_result(req, await fake.complete(req), "fake").score == pytest.approx(value)
        req = request(item, JSON_KPI, ScoringMode.GENERATE)  # a 0/1 KPI: the nearest choice
        assert score_result(req, await fake.complete(req), "fake").score == round(value)
        req = request(item, YES_NO, ScoringMode.GENERATE)
        assert score_result(req, await fake.complete(req), "fake").score == round(value)
        req = request(item, YES_NO, ScoringMode.YESNO)
        assert score_result(req, await fake.complete(req), "fake").score == pytest.approx(value)
    likert = request("a", LIKERT, ScoringMode.GENERATE)
    assert score_result(likert, await FakeBackend(score_fn=lambda i, p: 3.6).complete(likert), "f").score == 4


async def test_score_fn_sees_the_prompt_text():
    seen = []
    fake = FakeBackend(score_fn=lambda item, prompt: seen.append((item, prompt)) or 3.0)
    await fake.complete(request("x", LIKERT, ScoringMode.LOGPROB, text="Judge this"))
    assert seen == [("x", "[user]\nJudge this (x)")]


async def test_every_nth_request_fails_or_returns_garbage():
    fake = FakeBackend(fail_every=3, garbage_every=2)
    outcomes = []
    for i in range(6):
        req = request(str(i), LIKERT, ScoringMode.GENERATE)
        try:
            judgment = score_result(req, await fake.complete(req), "fake")
        except BackendError as exc:
            assert "injected failure on request" in str(exc)
            outcomes.append("raised")
        else:
            outcomes.append("failed" if judgment.failed else "ok")
    assert outcomes == ["ok", "failed", "raised", "failed", "ok", "raised"]
    assert len(fake.requests) == 6


async def test_garbage_in_probability_modes_carries_no_probabilities():
    fake = FakeBackend(garbage_every=1)
    req = request("a", YES_NO, ScoringMode.YESNO)
    judgment = score_result(req, await fake.complete(req), "fake")
    assert judgment.failed and "no answer probabilities" in judgment.error


async def test_each_request_can_wait_for_the_test():
    gate = asyncio.Event()
    waited: list[str] = []

    async def delay(req: JudgeRequest) -> None:
        waited.append(req.item_id)
        await gate.wait()

    fake = FakeBackend(delay=delay)
    task = asyncio.ensure_future(fake.complete(request("a", LIKERT, ScoringMode.GENERATE)))
    for _ in range(3):
        await asyncio.sleep(0)
    assert waited == ["a"] and not task.done()
    gate.set()
    result = await task
    assert "Score:" in result.raw_output


async def test_modes_can_be_refused_up_front():
    fake = FakeBackend(unsupported_modes=(ScoringMode.LOGPROB,))
    await fake.check_mode(ScoringMode.GENERATE, 3)
    with pytest.raises(BackendError, match="logprob"):
        await fake.check_mode(ScoringMode.LOGPROB, 3)


async def test_yes_no_follows_the_templates_spelling_and_reports_tokens():
    fake = FakeBackend(score_fn=lambda i, p: 0.9)
    result = await fake.complete(request("a", YES_NO, ScoringMode.YESNO))
    assert result.choice_probs == pytest.approx({"No": 0.1, "Yes": 0.9})
    assert result.top_logprobs[0][0] == "Yes" and len(result.top_logprobs) == 5
    assert result.prompt_tokens > 0 and result.evaluated_tokens == result.prompt_tokens
    await fake.open()
    await fake.close()
    assert (fake.opened, fake.closed) == (1, 1)


async def test_a_configured_delay_makes_a_slow_judge_and_bad_delays_are_refused():
    slow = make_backend(JudgeConfig("f", "fake", model="m", extra={"delay_s": 0.01}))
    assert slow.delay is not None
    assert make_backend(JudgeConfig("f", "fake", model="m")).delay is None
    for bad in (-1, "soon", True, 7200):
        with pytest.raises(BackendError, match="options.delay_s"):
            make_backend(JudgeConfig("f", "fake", model="m", extra={"delay_s": bad}))


# -- the simulated judge: a set agreement with the humans -----------------------------


async def simulated_scores(agreement: float, labels: dict[str, float], template: str = "Rate the response.",
                           mode: ScoringMode = ScoringMode.LOGPROB) -> dict[str, float]:
    fake = FakeBackend(name=f"sim{agreement}", agreement=agreement, labels=labels)
    out = {}
    for item in labels:
        req = request(item, LIKERT, mode, top_k=0, text=template)
        out[item] = score_result(req, await fake.complete(req), fake.name).score
    return out


@pytest.mark.parametrize("agreement", [0.1, 0.5, 0.8])
async def test_a_simulated_judge_agrees_with_the_labels_as_configured(agreement: float) -> None:
    import numpy as np
    from scipy import stats

    rng = np.random.default_rng(1)
    labels = {f"i{n}": float(v) for n, v in enumerate(rng.normal(size=1500))}  # continuous: no ties
    scores = await simulated_scores(agreement, labels)
    rho = stats.spearmanr([scores[i] for i in labels], [labels[i] for i in labels]).statistic
    # The population value is `agreement`; 1,500 items put the sample within about 0.05 of it.
    assert rho == pytest.approx(agreement, abs=0.06)


async def test_a_simulated_judge_draws_new_noise_for_another_prompt_and_says_it_is_simulated() -> None:
    labels = {f"i{n}": float(n % 5) for n in range(50)}
    first, second = await simulated_scores(0.5, labels), await simulated_scores(0.5, labels, template="Other.")
    assert first != second
    assert first == await simulated_scores(0.5, labels)  # reproducible
    fake = FakeBackend(name="good", agreement=0.8, labels=labels)
    assert fake.identity.startswith("simulated(agreement=0.8)") and "simulated" in fake.description


async def test_simulated_judge_options_are_validated_by_name() -> None:
    from dialjudge.core.errors import ConfigError

    backend = make_backend(JudgeConfig("good", "fake", extra={"agreement": 0.8, "dataset": "sample",
                                                              "quality": "overall"}))
    assert isinstance(backend, FakeBackend) and backend.agreement == 0.8
    assert backend.identity.startswith("simulated(agreement=0.8:sample:overall)")
    with pytest.raises(ConfigError, match="options.agreement"):
        make_backend(JudgeConfig("g", "fake", extra={"agreement": 1.5, "dataset": "d", "quality": "q"}))
    with pytest.raises(ConfigError, match="options.dataset"):
        make_backend(JudgeConfig("g", "fake", extra={"agreement": 0.5, "quality": "q"}))
    with pytest.raises(ConfigError, match="options.quality is only for a simulated judge"):
        make_backend(JudgeConfig("g", "fake", extra={"quality": "q"}))


# -- the simulated judge's correction_gain (dialjudge align) ---------------------------------


async def _gain_scores(labels: dict[str, float], shown: str) -> dict[str, float]:
    """Scores of a simulated judge (agreement 0.3, gain 0.4) whose prompts show three other items as
    examples, rated at their label's nearest point (``matching``), a wrong point (``wrong``), or none."""
    responses = {item: f"the response written for item {item}, long enough" for item in labels}
    fake = FakeBackend(name="aligned", agreement=0.3, correction_gain=0.4, labels=labels, responses=responses,
                       label_scale=(1.0, 5.0))
    items = list(labels)
    out = {}
    for n, item in enumerate(items):
        blocks = []
        for other in (items[n - 1], items[n - 2], items[n - 3]) if shown != "none" else ():
            point = min(5, max(1, round(labels[other])))
            rating = point if shown == "matching" else point % 5 + 1
            blocks.append(f"Response: {responses[other]}\nScore: {rating}")
        text = "\n\n".join(blocks) + f"\n\nResponse: {responses[item]}"
        req = request(item, LIKERT, ScoringMode.LOGPROB, top_k=0, text=text)
        out[item] = score_result(req, await fake.complete(req), fake.name).score
    return out


async def test_a_simulated_judge_with_a_correction_gain_agrees_better_only_with_matching_corrections() -> None:
    import numpy as np
    from scipy import stats

    rng = np.random.default_rng(2)
    labels = {f"i{n}": float(v) for n, v in enumerate(np.clip(3 + rng.normal(size=800), 1, 5))}
    rho = {}
    for shown in ("matching", "wrong", "none"):
        scores = await _gain_scores(labels, shown)
        rho[shown] = stats.spearmanr([scores[i] for i in labels], [labels[i] for i in labels]).statistic
    # Population values: 0.3 + 0.4 with every example matching, 0.3 otherwise; 800 items: sd about 0.03.
    assert rho["matching"] == pytest.approx(0.7, abs=0.08)
    assert rho["wrong"] == pytest.approx(0.3, abs=0.1) and rho["none"] == pytest.approx(0.3, abs=0.1)


def test_correction_gain_is_an_option_of_simulated_judges_only() -> None:
    backend = make_backend(JudgeConfig("a", "fake", extra={"agreement": 0.4, "correction_gain": 0.3,
                                                            "dataset": "sample", "quality": "overall"}))
    assert isinstance(backend, FakeBackend) and backend.correction_gain == 0.3
    assert "correction_gain=0.3" in backend.identity
    with pytest.raises(ConfigError, match="correction_gain is only for a simulated judge"):
        make_backend(JudgeConfig("a", "fake", extra={"correction_gain": 0.3}))
    with pytest.raises(ConfigError, match="agreement \\+ correction_gain below 1"):
        make_backend(JudgeConfig("a", "fake", extra={"agreement": 0.8, "correction_gain": 0.3,
                                                     "dataset": "sample", "quality": "overall"}))
