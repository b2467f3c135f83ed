"""OpenAIBackend: retries and secrets against a mock transport, modes against a real llama.cpp server."""

from __future__ import annotations

import asyncio
import json
import math
import random
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import httpx
import pytest

from dialjudge.core.config import JudgeConfig, Sampling
from dialjudge.core.errors import BackendError
from dialjudge.core.judges.backends import make_backend
from dialjudge.core.judges.backends.openai_api import OpenAIBackend
from dialjudge.core.judges.run.scoring import score_result
from dialjudge.core.judges.types import (
    JudgeRequest,
    Message,
    OutputKind,
    OutputSpec,
    RenderedPrompt,
    ScoringMode,
)

SECRET = "sk-test-0123456789abcdefSECRET"
LIKERT = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"), answer_prefix="Score:")
TENTHS = OutputSpec(OutputKind.CONTINUOUS, 0, 1, choices=tuple(f"{i / 10:.1f}" for i in range(11)))
YES_NO = OutputSpec(OutputKind.YESNO, 0, 1, choices=("No", "Yes"), answer_prefix="Answer:")


def config(**changes) -> JudgeConfig:
    values = dict(name="api", backend="openai", model="judge-model", base_url="http://judge.test/v1",
                  api_key_env="DIALJUDGE_TEST_KEY", concurrency=2, max_retries=3, timeout=5.0,
                  # The reading of chat answers is tested here; how a server is made to continue
                  # after the answer prefix has its own tests (test_probability_api.py).
                  extra={"continuation": "unprefixed"})
    values.update(changes)
    return JudgeConfig(**values)


#: Frozen, so one instance can be every request's default.
DEFAULT_SAMPLING = Sampling(max_tokens=40, seed=5)


def request(spec: OutputSpec, mode: ScoringMode, *, top_k: int = 3,
            sampling: Sampling = DEFAULT_SAMPLING, text: str = "Rate it.") -> JudgeRequest:
    prompt = RenderedPrompt((Message("system", "You judge."), Message("user", text)), spec, "t")
    return JudgeRequest("item-1", prompt, mode, sampling, top_k=top_k)


class Sleeps:
    """Records the backoff instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def chat_body(content: str, positions: list[tuple[str, list[tuple[str, float]]]] | None = None) -> dict:
    choice: dict = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    if positions is not None:
        choice["logprobs"] = {"content": [
            {"token": tok, "logprob": dict(top).get(tok, -9.0),
             "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top]}
            for tok, top in positions]}
    return {"choices": [choice], "usage": {"prompt_tokens": 20, "completion_tokens": 3,
                                           "prompt_tokens_details": {"cached_tokens": 8}}}


async def opened(handler, **kwargs) -> tuple[OpenAIBackend, Sleeps]:
    sleeps = Sleeps()
    backend = OpenAIBackend(kwargs.pop("cfg", None) or config(), transport=httpx.MockTransport(handler),
                            sleep=sleeps, rng=random.Random(0), **kwargs)
    await backend.open()
    return backend, sleeps


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("DIALJUDGE_TEST_KEY", SECRET)


# -- requests ------------------------------------------------------------------------------


async def test_generate_sends_the_sampling_and_the_key():
    seen = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        return httpx.Response(200, json=chat_body("Fine.\nScore: 4"))

    backend, _ = await opened(handler)
    sampling = Sampling(temperature=0.7, top_p=0.9, max_tokens=1024, presence_penalty=0.0,
                        frequency_penalty=0.2, seed=42)
    req = JudgeRequest("item-1", request(LIKERT, ScoringMode.GENERATE).prompt, ScoringMode.GENERATE, sampling,
                       repeat=2)
    result = await backend.complete(req)
    # The key is read from the environment per request: no copy on the backend or its client.
    assert "Authorization" not in backend._client.headers
    assert not any(SECRET in repr(v) for v in vars(backend).values())
    await backend.close()
    sent = json.loads(seen[0].content)
    assert seen[0].url.path == "/v1/chat/completions"
    assert seen[0].headers["Authorization"] == f"Bearer {SECRET}"
    assert sent["messages"] == [{"role": "system", "content": "You judge."}, {"role": "user", "content": "Rate it."}]
    assert (sent["temperature"], sent["top_p"], sent["max_tokens"], sent["frequency_penalty"],
            sent["presence_penalty"], sent["seed"]) == (0.7, 0.9, 1024, 0.2, 0.0, 44)
    assert "logprobs" not in sent
    assert result.raw_output == "Fine.\nScore: 4"
    assert (result.prompt_tokens, result.evaluated_tokens, result.completion_tokens) == (20, 12, 3)



async def test_completions_endpoint_sends_plain_text_with_the_answer_prefix():
    seen = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(json.loads(req.content))
        body = {"choices": [{"text": " 4", "logprobs": {"tokens": [" 4"], "token_logprobs": [-0.4],
                                                        "top_logprobs": [{" 4": -0.4, " 5": -1.4, " 3": -2.5}]}}]}
        return httpx.Response(200, json=body)

    backend, _ = await opened(handler, cfg=config(endpoint="completions"))
    result = await backend.complete(request(LIKERT, ScoringMode.LOGPROB, top_k=2))
    assert seen[0]["prompt"] == "You judge.\n\nRate it.\n\nScore:"
    assert seen[0]["logprobs"] >= 5 and seen[0]["temperature"] == 0.0
    total = math.exp(-0.4) + math.exp(-1.4) + math.exp(-2.5)
    assert result.choice_probs["4"] == pytest.approx(math.exp(-0.4) / total)
    assert result.top_logprobs[:2] == [(" 4", -0.4), (" 5", -1.4)]


async def test_logprob_answers_skip_an_echoed_prefix_and_join_a_bare_space():
    positions = [
        ("Score", [("Score", -0.1), ("4", -3.0)]),
        (":", [(":", -0.01)]),
        (" ", [(" ", -0.2), (" **", -2.0)]),
        ("4", [("4", -0.5), ("5", -1.2), ("3", -2.3), ("The", -4.0)]),
    ]
    backend, _ = await opened(lambda req: httpx.Response(200, json=chat_body("Score: 4", positions)))
    req = request(LIKERT, ScoringMode.LOGPROB)
    result = await backend.complete(req)
    total = sum(math.exp(lp) for lp in (-0.5, -1.2, -2.3))
    assert result.choice_probs["4"] == pytest.approx(math.exp(-0.5) / total)
    assert result.choice_probs["1"] == 0.0
    assert result.top_logprobs[0] == (" 4", pytest.approx(-0.7))
    # top_k=3: " 4", " 5" and " **" are the three most likely; " **" is no rating.
    assert score_result(req, result, "api").score == pytest.approx(
        (4 * math.exp(-0.5) + 5 * math.exp(-1.2)) / (math.exp(-0.5) + math.exp(-1.2)))


async def test_multi_token_choices_follow_the_generated_path():
    positions = [
        ("0", [("0", -0.3), ("1", -1.5)]),
        (".", [(".", -0.01)]),
        ("7", [("7", -0.7), ("8", -1.0), ("x", -5.0)]),
    ]
    backend, _ = await opened(lambda req: httpx.Response(200, json=chat_body("0.7", positions)))
    result = await backend.complete(request(TENTHS, ScoringMode.LOGPROB))
    # "1" was not generated, so "1.0" cannot be seen; "0.7" and "0.8" share the generated "0.".
    assert result.choice_probs["1.0"] == 0.0
    ratio = result.choice_probs["0.7"] / result.choice_probs["0.8"]
    assert ratio == pytest.approx(math.exp(-0.7) / math.exp(-1.0))
    assert sum(result.choice_probs.values()) == pytest.approx(1.0)


async def test_yes_no_sums_spellings():
    positions = [("No", [("No", -0.5), ("Yes", -1.5), (" yes", -2.0), ("no", -3.0), ("Maybe", -3.5)])]
    backend, _ = await opened(lambda req: httpx.Response(200, json=chat_body("No", positions)))
    req = request(YES_NO, ScoringMode.YESNO)
    result = await backend.complete(req)
    p_yes, p_no = math.exp(-1.5) + math.exp(-2.0), math.exp(-0.5) + math.exp(-3.0)
    assert score_result(req, result, "api").score == pytest.approx(p_yes / (p_yes + p_no))


async def test_check_mode_refuses_a_server_without_logprobs():
    backend, _ = await opened(lambda req: httpx.Response(200, json=chat_body("Yes")))
    await backend.check_mode(ScoringMode.GENERATE, 3)
    with pytest.raises(BackendError, match="returned no log-probabilities.*mode yesno"):
        await backend.check_mode(ScoringMode.YESNO, 3)
    with pytest.raises(BackendError, match="at most 20"):
        await backend.check_mode(ScoringMode.LOGPROB, 25)


async def test_extra_body_options_reach_the_request():
    seen = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(json.loads(req.content))
        return httpx.Response(200, json=chat_body("Score: 3"))

    backend, _ = await opened(handler, cfg=config(extra={"extra_body": {"max_completion_tokens": 50}}))
    await backend.complete(request(LIKERT, ScoringMode.GENERATE))
    assert seen[0]["max_completion_tokens"] == 50


# -- retries -------------------------------------------------------------------------------


async def test_5xx_is_retried_with_growing_jittered_backoff():
    calls = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req)
        if len(calls) < 4:
            return httpx.Response(503, json={"error": {"message": "overloaded"}})
        return httpx.Response(200, json=chat_body("Score: 3"))

    backend, sleeps = await opened(handler, backoff_base=1.0)
    result = await backend.complete(request(LIKERT, ScoringMode.GENERATE))
    assert result.raw_output == "Score: 3" and len(calls) == 4
    assert len(sleeps.waits) == 3
    for attempt, wait in enumerate(sleeps.waits):
        assert 0.5 * 2**attempt <= wait <= 2**attempt


async def test_retry_after_is_honoured_in_seconds_and_as_a_date():
    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    answers = iter([
        httpx.Response(429, headers={"Retry-After": "7"}, json={"error": {"message": "slow down"}}),
        httpx.Response(429, headers={"Retry-After": later}),
        httpx.Response(200, json=chat_body("Score: 2")),
    ])
    backend, sleeps = await opened(lambda req: next(answers))
    await backend.complete(request(LIKERT, ScoringMode.GENERATE))
    assert sleeps.waits[0] == 7.0
    assert 25 <= sleeps.waits[1] <= 30


async def test_timeouts_are_retried_then_reported():
    calls = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req)
        raise httpx.ReadTimeout("timed out", request=req)

    backend, sleeps = await opened(handler)
    with pytest.raises(BackendError, match=r"no answer within 5 s \(gave up after 4 attempts\)"):
        await backend.complete(request(LIKERT, ScoringMode.GENERATE))
    assert len(calls) == 4 and len(sleeps.waits) == 3


async def test_client_errors_are_not_retried():
    calls = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req)
        return httpx.Response(400, json={"error": {"message": "model 'judge-model' does not exist"}})

    backend, sleeps = await opened(handler)
    with pytest.raises(BackendError, match="HTTP 400: model 'judge-model' does not exist"):
        await backend.complete(request(LIKERT, ScoringMode.GENERATE))
    assert len(calls) == 1 and sleeps.waits == []


async def test_concurrency_is_capped_per_judge():
    in_flight = 0
    peak = 0
    release = asyncio.Event()

    async def handler(req: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await release.wait()
        in_flight -= 1
        return httpx.Response(200, json=chat_body("Score: 3"))

    backend, _ = await opened(handler)
    tasks = [asyncio.ensure_future(backend.complete(request(LIKERT, ScoringMode.GENERATE))) for _ in range(5)]
    for _ in range(10):
        await asyncio.sleep(0)
    assert peak == 2 == backend.max_concurrency
    release.set()
    await asyncio.gather(*tasks)
    assert peak == 2


# -- the key never leaks ---------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 401, 403, 500])
async def test_the_key_is_not_in_error_messages(status):
    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json={"error": {"message": f"Incorrect API key provided: {SECRET}"}})

    backend, _ = await opened(handler)
    with pytest.raises(BackendError) as caught:
        await backend.complete(request(LIKERT, ScoringMode.GENERATE))
    text = str(caught.value) + repr(caught.value)
    assert SECRET not in text and SECRET[:12] not in text
    assert f"HTTP {status}" in text
    if status in (401, 403):
        assert "$DIALJUDGE_TEST_KEY" in text


async def test_the_key_is_not_in_transport_errors():
    def handler(req: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"refused for {req.headers['Authorization']}", request=req)

    backend, _ = await opened(handler)
    with pytest.raises(BackendError) as caught:
        await backend.complete(request(LIKERT, ScoringMode.GENERATE))
    assert "cannot connect" in str(caught.value) and SECRET not in str(caught.value)
    assert caught.value.__cause__ is None or SECRET not in str(caught.value.__cause__)


async def test_a_missing_key_variable_is_named(monkeypatch):
    monkeypatch.delenv("DIALJUDGE_TEST_KEY")
    backend = make_backend(config())
    with pytest.raises(BackendError, match="DIALJUDGE_TEST_KEY"):
        await backend.open()


def test_identity_and_config_checks():
    backend = make_backend(config(base_url="http://judge.test/v1/", extra={}))
    assert isinstance(backend, OpenAIBackend)
    assert backend.identity == "openai:http://judge.test/v1#judge-model" and backend.max_concurrency == 2
    # How probability answers are asked is part of what makes them: cached ones are kept apart.
    assert make_backend(config()).identity == "openai:http://judge.test/v1#judge-model;continuation=unprefixed"
    assert SECRET not in backend.identity
    with pytest.raises(BackendError, match="base_url"):
        OpenAIBackend(config(base_url=None))


# -- a real OpenAI-compatible server ---------------------------------------------------------


def server_config(base_url: str, endpoint: str, **options: object) -> JudgeConfig:
    return JudgeConfig(name="local", backend="openai", model="smollm2", base_url=base_url, endpoint=endpoint,
                       concurrency=1, timeout=60.0, max_retries=0, extra=dict(options))


DIALOGUE = "Dialogue:\nA: I love hiking in the mountains.\nB: Oh nice, which ones?\nResponse: A: The Alps."


@pytest.mark.server
@pytest.mark.parametrize("endpoint", ["chat", "completions"])
async def test_a_llama_cpp_server_serves_every_mode(llama_server, bundled_model, endpoint):
    # With the model's chat template given, both endpoints continue after the answer prefix through it.
    backend = OpenAIBackend(server_config(llama_server, endpoint, chat_template=str(bundled_model)))
    await backend.open()
    try:
        for mode in ScoringMode:
            await backend.check_mode(mode, 3)
        assert backend.scoring_way == "template"
        gen = await backend.complete(request(LIKERT, ScoringMode.GENERATE, sampling=Sampling(max_tokens=6),
                                             text=f"{DIALOGUE}\nRate the response from 1 to 5."))
        assert gen.raw_output and 0 < gen.completion_tokens <= 6 and gen.prompt_tokens > 20
        req = request(YES_NO, ScoringMode.YESNO, text=f"{DIALOGUE}\nIs it a good response? Answer Yes or No.")
        yn = await backend.complete(req)
        assert sum(yn.choice_probs.values()) == pytest.approx(1.0)
        assert 0 < score_result(req, yn, "local").score < 1
        assert len(yn.top_logprobs) == 5
    finally:
        await backend.close()


@pytest.mark.server
async def test_a_llama_cpp_server_left_unsettled_refuses_probability_modes_on_chat(llama_server):
    # llama-cpp-python's server shows no chat template and ignores continue_final_message: its chat
    # endpoint cannot continue after the answer prefix, so every probability mode is refused before
    # judging; generate still works.
    chat = OpenAIBackend(server_config(llama_server, "chat"))
    await chat.open()
    try:
        await chat.check_mode(ScoringMode.GENERATE, 3)
        for mode in ScoringMode:
            if mode is not ScoringMode.GENERATE:
                chat.scoring_way = None
                with pytest.raises(BackendError, match=f"cannot be made to continue.*mode {mode.value}"):
                    await chat.check_mode(mode, 3)
    finally:
        await chat.close()


@pytest.mark.server
async def test_the_server_and_the_local_backend_agree(llama_server, llama_backend):
    # Same model and chat template: p(yes) read over HTTP matches the in-process one.
    req = request(OutputSpec(OutputKind.YESNO, 0, 1, choices=("No", "Yes")), ScoringMode.YESNO,
                  text=f"{DIALOGUE}\nIs it a good response? Answer Yes or No.")
    backend = OpenAIBackend(server_config(llama_server, "chat"))
    await backend.open()
    try:
        remote = score_result(req, await backend.complete(req), "remote").score
    finally:
        await backend.close()
    local = score_result(req, await llama_backend.complete(req), "local").score
    assert remote == pytest.approx(local, abs=0.02)


def test_credentials_in_the_base_url_stay_out_of_identity_and_messages() -> None:
    import httpx

    from dialjudge.core.config import JudgeConfig
    from dialjudge.core.errors import BackendError
    from dialjudge.core.judges.backends.openai_api import OpenAIBackend

    config = JudgeConfig(name="j", backend="openai", model="m", base_url="http://alice:s3cret@127.0.0.1:9/v1",
                         max_retries=0)
    backend = OpenAIBackend(config, transport=httpx.MockTransport(lambda request: httpx.Response(500, text="boom")))
    assert "s3cret" not in backend.identity and "alice" not in backend.identity
    assert backend.identity == "openai:http://127.0.0.1:9/v1#m"
    request = JudgeRequest("i", RenderedPrompt((Message("user", "hi"),), LIKERT), ScoringMode.GENERATE, Sampling())
    with pytest.raises(BackendError) as caught:
        asyncio.run(_complete_once(backend, request))
    assert "s3cret" not in str(caught.value) and "127.0.0.1:9/v1/chat/completions" in str(caught.value)


async def _complete_once(backend, request):
    await backend.open()
    try:
        return await backend.complete(request)
    finally:
        await backend.close()
