"""score_result: parsing generated text, expected values, paper 003's top-K weighting and p(yes)."""

from __future__ import annotations

import math

import pytest

from dialjudge.core.config import Sampling
from dialjudge.core.judges.run.scoring import score_result
from dialjudge.core.judges.types import (
    BackendResult,
    JudgeRequest,
    Message,
    OutputKind,
    OutputSpec,
    RenderedPrompt,
    ScoringMode,
)

LIKERT = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"), answer_prefix="Score:",
                    modes=(ScoringMode.GENERATE, ScoringMode.LOGPROB))
TENTHS = OutputSpec(OutputKind.CONTINUOUS, 0, 1, choices=tuple(f"{i / 10:.1f}" for i in range(11)))
ONE_TO_TEN = OutputSpec(OutputKind.LIKERT, 1, 10, choices=tuple(str(i) for i in range(1, 11)))
YES_NO = OutputSpec(OutputKind.YESNO, 0, 1, choices=("No", "Yes"), answer_prefix="Answer:")


def request(spec: OutputSpec, mode: ScoringMode, top_k: int = 3, repeat: int = 0) -> JudgeRequest:
    prompt = RenderedPrompt((Message("user", "Dialogue: A: hi\nResponse: B: hello\nRate it."),), spec, "t")
    return JudgeRequest("ex-1", prompt, mode, Sampling(temperature=0.7, seed=11), top_k=top_k, repeat=repeat)


def lp(p: float) -> float:
    return math.log(p)


def test_expected_value_over_the_restricted_softmax():
    result = BackendResult(raw_output=" 4", choice_probs={"1": 0.1, "2": 0.1, "3": 0.2, "4": 0.4, "5": 0.2})
    j = score_result(request(LIKERT, ScoringMode.LOGPROB, top_k=0), result, "judge-a")
    assert j.score == pytest.approx(1 * 0.1 + 2 * 0.1 + 3 * 0.2 + 4 * 0.4 + 5 * 0.2)
    assert j.normalized == pytest.approx((j.score - 1) / 4)
    assert j.error is None and j.distribution == result.choice_probs


def test_top_k_weighting_follows_paper_003():
    # w_i = p_i / sum p_j over the valid ratings among the K most likely first tokens.
    top = [(" 4", lp(0.5)), (" 5", lp(0.3)), ("The", lp(0.1)), (" 3", lp(0.05)), ("**", lp(0.01))]
    result = BackendResult(raw_output=" 4", top_logprobs=top, choice_probs={"4": 0.6, "5": 0.35, "3": 0.05})
    k3 = score_result(request(LIKERT, ScoringMode.LOGPROB, top_k=3), result, "j")
    assert k3.score == pytest.approx((4 * 0.5 + 5 * 0.3) / 0.8)
    k4 = score_result(request(LIKERT, ScoringMode.LOGPROB, top_k=4), result, "j")
    assert k4.score == pytest.approx((4 * 0.5 + 5 * 0.3 + 3 * 0.05) / 0.85)
    k1 = score_result(request(LIKERT, ScoringMode.LOGPROB, top_k=1), result, "j")
    assert k1.score == 4


def test_top_k_without_a_valid_rating_fails_with_the_reason_and_keeps_the_output():
    top = [("The", lp(0.5)), (" I", lp(0.2)), ("\n", lp(0.1)), (" 3", lp(0.05))]
    result = BackendResult(raw_output="The", top_logprobs=top, choice_probs={"3": 1.0})
    j = score_result(request(LIKERT, ScoringMode.LOGPROB, top_k=3), result, "j")
    assert j.failed and j.normalized is None
    assert "top-3" in j.error and "'The'" in j.error
    assert j.raw_output == "The"


def test_multi_token_ratings_weigh_the_k_most_likely_whole_answers():
    # "0" only begins "0.7": a first token names no rating, so whole answers are weighed.
    probs = {c: 0.0 for c in TENTHS.choices}
    probs.update({"0.7": 0.5, "0.8": 0.3, "0.2": 0.15, "1.0": 0.05})
    result = BackendResult(raw_output="0", top_logprobs=[("0", lp(0.9)), ("1", lp(0.05)), ("The", lp(0.01))],
                           choice_probs=probs)
    j = score_result(request(TENTHS, ScoringMode.LOGPROB, top_k=2), result, "j")
    assert j.score == pytest.approx((0.7 * 0.5 + 0.8 * 0.3) / 0.8)
    ev = score_result(request(TENTHS, ScoringMode.LOGPROB, top_k=0), result, "j")
    assert ev.score == pytest.approx(0.7 * 0.5 + 0.8 * 0.3 + 0.2 * 0.15 + 1.0 * 0.05)


def test_a_rating_that_begins_another_is_not_read_from_the_first_token():
    # On a 1-10 scale " 1" may be the start of "10"; the whole-answer probabilities decide.
    probs = {c: 0.0 for c in ONE_TO_TEN.choices}
    probs.update({"1": 0.2, "10": 0.7, "9": 0.1})
    result = BackendResult(raw_output=" 1", top_logprobs=[(" 1", lp(0.9)), (" 9", lp(0.1))], choice_probs=probs)
    j = score_result(request(ONE_TO_TEN, ScoringMode.LOGPROB, top_k=3), result, "j")
    assert j.score == pytest.approx((1 * 0.2 + 10 * 0.7 + 9 * 0.1) / 1.0)


def test_yes_no_is_p_yes_over_p_yes_plus_p_no():
    result = BackendResult(raw_output="Yes", choice_probs={"No": 0.2, "Yes": 0.6})
    j = score_result(request(YES_NO, ScoringMode.YESNO), result, "j")
    assert j.score == pytest.approx(0.75) and j.normalized == pytest.approx(0.75)


def test_yes_no_counts_spellings_of_the_same_answer():
    result = BackendResult(raw_output="yes", choice_probs={" yes": 0.3, "Yes": 0.3, "no": 0.4})
    j = score_result(request(YES_NO, ScoringMode.YESNO), result, "j")
    assert j.score == pytest.approx(0.6)


@pytest.mark.parametrize("probs", [None, {}, {"No": 0.0, "Yes": 0.0}, {"maybe": 1.0}])
def test_probability_modes_without_mass_on_the_answers_fail(probs):
    result = BackendResult(raw_output="hmm", choice_probs=probs)
    for mode, spec in ((ScoringMode.YESNO, YES_NO), (ScoringMode.LOGPROB, LIKERT)):
        j = score_result(request(spec, mode, top_k=0), result, "j")
        assert j.failed and j.error and j.raw_output == "hmm"


def test_generate_parses_the_final_answer():
    result = BackendResult(raw_output="It answers the question but is short.\nScore: 4", prompt_tokens=30,
                           evaluated_tokens=12, completion_tokens=9, latency_s=0.5)
    j = score_result(request(LIKERT, ScoringMode.GENERATE, repeat=2), result, "judge-a")
    assert j.score == 4 and j.normalized == pytest.approx(0.75) and j.error is None
    assert (j.item_id, j.judge, j.mode, j.repeat) == ("ex-1", "judge-a", ScoringMode.GENERATE, 2)
    assert j.prompt_hash == request(LIKERT, ScoringMode.GENERATE).prompt.hash
    assert (j.prompt_tokens, j.evaluated_tokens, j.completion_tokens, j.latency_s) == (30, 12, 9, 0.5)
    assert j.sampling == Sampling(temperature=0.7, seed=11).to_dict()
    assert j.distribution is None


def test_generate_without_an_answer_fails_and_keeps_the_text():
    result = BackendResult(raw_output="I would rather not say.")
    j = score_result(request(LIKERT, ScoringMode.GENERATE), result, "j")
    assert j.failed and j.error and j.raw_output == "I would rather not say."


def test_a_generated_score_outside_the_scale_is_a_failure():
    j = score_result(request(LIKERT, ScoringMode.GENERATE), BackendResult(raw_output="Score: 9"), "j")
    assert j.failed and "9" in j.error


def test_generate_reads_yes_no_and_json():
    yes = score_result(request(YES_NO, ScoringMode.GENERATE), BackendResult(raw_output="Yes."), "j")
    assert yes.score == 1 and yes.normalized == 1
    spec = OutputSpec(OutputKind.JSON, 0, 1, choices=("0", "1"), score_key="KPI Score", reasoning_key="Reasoning")
    j = score_result(request(spec, ScoringMode.GENERATE),
                     BackendResult(raw_output='{"Reasoning": "It does.", "KPI Score": 1}'), "j")
    assert j.score == 1 and j.reasoning == "It does."
