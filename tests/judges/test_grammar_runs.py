"""Constrained runs: the run config and cache keys, scoring at the token limit, the API backend's
request fields (against the fake OpenAI-compatible server), and the engine's up-front check."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dialjudge.core.config import JudgeConfig, Sampling
from dialjudge.core.errors import BackendError, ConfigError
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.backends.openai_api import OpenAIBackend
from dialjudge.core.judges.prompts.constraint import AnswerConstraint
from dialjudge.core.judges.prompts.grammar import build_grammar, json_schema
from dialjudge.core.judges.run.config import JudgeSpec, JudgeVariant, RunConfig
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.run.options import EngineOptions
from dialjudge.core.judges.run.scoring import score_result
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import (
    BackendResult,
    JudgeRequest,
    Message,
    OutputKind,
    OutputSpec,
    RenderedPrompt,
    ScoringMode,
)
from dialjudge.core.model import BINARY_01, Dataset, Example, Rating, Turn
from fault_server import FaultServer, rating_for

LIKERT = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"), answer_prefix="Score:",
                    modes=(ScoringMode.GENERATE, ScoringMode.LOGPROB))
INCA = OutputSpec(OutputKind.JSON, 0, 1, choices=("0", "1"), score_key="KPI follow-up Score",
                  reasoning_key="Reasoning KPI follow-up", relevancy_key="Relevancy KPI follow-up",
                  answer_prefix='{"KPI follow-up Score":')
KEY = "sk-constrain-test-0123456789"


def prompt(spec: OutputSpec = LIKERT, text: str = "Rate the response 1-5.") -> RenderedPrompt:
    return RenderedPrompt((Message("system", "You judge."), Message("user", text)), spec, "t")


def ask(spec: OutputSpec = LIKERT, constrain: AnswerConstraint = AnswerConstraint.ANSWER,
        max_tokens: int = 64) -> JudgeRequest:
    return JudgeRequest("item", prompt(spec), ScoringMode.GENERATE, Sampling(max_tokens=max_tokens),
                        constrain=constrain)


def run_config(**kw: Any) -> RunConfig:
    kw.setdefault("mode", ScoringMode.GENERATE)
    return RunConfig(dataset="toy", template="t", template_text='name = "t"\n',
                     judges=(JudgeSpec.of(JudgeConfig(name="fake", backend="fake")),), **kw)


# -- run config and cache keys ---------------------------------------------------------------


def test_the_constraint_is_in_the_fingerprint_and_the_snapshot():
    off, answer, reasoning = (run_config(constrain=c) for c in AnswerConstraint)
    assert len({off.fingerprint, answer.fingerprint, reasoning.fingerprint}) == 3
    # An unconstrained run's snapshot (and so its fingerprint) is what it was before the option existed.
    assert "constrain" not in off.to_dict()
    assert answer.to_dict()["constrain"] == "answer"
    assert RunConfig.from_dict(json.loads(reasoning.to_json())) == reasoning
    assert RunConfig.from_dict(json.loads(off.to_json())).constrain is AnswerConstraint.OFF
    assert run_config(constrain="reasoning").constrain is AnswerConstraint.REASONING


def test_a_constraint_needs_generate_mode():
    with pytest.raises(ConfigError, match="constrained answers are for mode generate"):
        run_config(mode=ScoringMode.LOGPROB, constrain=AnswerConstraint.ANSWER)


def test_the_cache_key_changes_with_the_constraint_only_when_on():
    off = ask(constrain=AnswerConstraint.OFF)
    payload = json.dumps({"model": "m", "prompt": off.prompt.hash, "mode": "generate", "top_k": 3,
                          "sampling": off.sampling.to_dict(), "seed": 0}, sort_keys=True)
    assert off.cache_key("m") == hashlib.sha256(payload.encode("utf-8")).hexdigest()
    keys = {ask(constrain=c).cache_key("m") for c in AnswerConstraint}
    assert len(keys) == 3


# -- scoring at the token limit ------------------------------------------------------------


def scored(raw: str, completion_tokens: int, constrain: AnswerConstraint, max_tokens: int = 64):
    return score_result(ask(constrain=constrain, max_tokens=max_tokens),
                        BackendResult(raw_output=raw, completion_tokens=completion_tokens), "j")


def test_a_constrained_answer_cut_by_max_tokens_fails_saying_so():
    # "Score: 4" is also what a cut "Score: 4.5"-style answer could look like: never taken as valid.
    judgment = scored("Long reasoning\nScore: 4", 64, AnswerConstraint.REASONING)
    assert judgment.failed and judgment.error == "hit max_tokens (64) before the constrained answer completed"
    assert scored("Long reasoning\nScore: 4", 20, AnswerConstraint.REASONING).score == 4.0


def test_an_unconstrained_failure_at_the_limit_names_it_and_a_success_stays():
    judgment = scored("The response is good because it", 64, AnswerConstraint.OFF)
    assert judgment.failed and judgment.error.endswith("(generation hit max_tokens = 64)")
    assert "max_tokens" not in (scored("The response is", 10, AnswerConstraint.OFF).error or "")
    assert scored("Score: 3 and then the model rambles on", 64, AnswerConstraint.OFF).score == 3.0


def test_a_constrained_answer_is_read_without_echo_removal():
    """The grammar fixes the answer line; a final line the prompt also holds is still the answer."""
    example = "An earlier example response was rated like this\nScore: 2"
    request = JudgeRequest("item", prompt(LIKERT, f"Examples:\n{example}\nNow rate."), ScoringMode.GENERATE,
                           Sampling(max_tokens=64), constrain=AnswerConstraint.REASONING)
    judgment = score_result(request, BackendResult(raw_output=example, completion_tokens=12), "j")
    assert judgment.score == 2.0
    unconstrained = replace(request, constrain=AnswerConstraint.OFF)
    assert score_result(unconstrained, BackendResult(raw_output=example, completion_tokens=12), "j").failed


# -- the API backend against the fake OpenAI-compatible server --------------------------------


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIALJUDGE_CONSTRAIN_KEY", KEY)


def api_judge(base_url: str, **options: Any) -> JudgeConfig:
    return JudgeConfig(name="api", backend="openai", model="m", base_url=base_url,
                       api_key_env="DIALJUDGE_CONSTRAIN_KEY", concurrency=2, max_retries=0, timeout=5.0,
                       extra=options)


async def test_a_json_answer_is_sent_with_its_json_schema(fault_server: Any):
    server: FaultServer = fault_server()
    backend = OpenAIBackend(api_judge(server.base_url), rng=random.Random(0))
    await backend.open()
    request = ask(INCA, AnswerConstraint.ANSWER, max_tokens=256)
    await backend.check_constraint(request)
    await backend.complete(request)
    await backend.complete(ask(INCA, AnswerConstraint.OFF, max_tokens=256))
    await backend.close()
    constrained, free = server.stats.payloads
    assert constrained["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "judge_answer", "strict": True, "schema": json_schema(INCA)}}
    schema = constrained["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["Reasoning KPI follow-up", "KPI follow-up Score", "Relevancy KPI follow-up"]
    assert schema["properties"]["KPI follow-up Score"]["enum"] == [0, 1]
    assert "response_format" not in free and "grammar" not in free


async def test_a_llama_cpp_server_gets_the_grammar(fault_server: Any):
    server: FaultServer = fault_server()
    backend = OpenAIBackend(api_judge(server.base_url, constrain_with="grammar"), rng=random.Random(0))
    await backend.open()
    request = ask(LIKERT, AnswerConstraint.REASONING, max_tokens=100)
    await backend.check_constraint(request)
    result = await backend.complete(request)
    await backend.close()
    (sent,) = server.stats.payloads
    assert sent["grammar"] == build_grammar(LIKERT, AnswerConstraint.REASONING, max_tokens=100).gbnf
    assert "response_format" not in sent
    assert result.raw_output.startswith("Score: ")


async def test_a_server_that_cannot_constrain_the_answer_is_refused_before_the_run(fault_server: Any):
    server: FaultServer = fault_server()
    backend = OpenAIBackend(api_judge(server.base_url), rng=random.Random(0))
    with pytest.raises(BackendError, match=r"only JSON answers.*likert.*constrain_with = \"grammar\""):
        await backend.check_constraint(ask(LIKERT))
    no_reasoning_key = replace(INCA, reasoning_key=None)
    with pytest.raises(BackendError, match="cannot put free reasoning before the JSON answer"):
        await backend.check_constraint(ask(no_reasoning_key, AnswerConstraint.REASONING, max_tokens=256))
    odd = OpenAIBackend(api_judge(server.base_url, constrain_with="regex"), rng=random.Random(0))
    with pytest.raises(BackendError, match="options.constrain_with must be 'json_schema' or 'grammar', not 'regex'"):
        await odd.check_constraint(ask(INCA))
    assert server.stats.requests == 0


# -- the engine ----------------------------------------------------------------------------------


def toy_dataset(n: int = 6) -> Dataset:
    return Dataset("toy", [Example(id=f"i{i}", group_id=f"g{i // 2}", context=(Turn("user", f"question {i}"),),
                                   candidate=f"answer {i}", ratings={"good": Rating((1,), BINARY_01)})
                           for i in range(n)])


def render(variant: JudgeVariant, example: Example) -> RenderedPrompt:
    return prompt(LIKERT, f"{example.context_text()}\nResponse: {example.candidate}")


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    s = RunStore(tmp_path / "runs.sqlite3")
    yield s
    s.close()


async def test_a_constrained_run_sends_the_grammar_with_every_request(fault_server: Any, store: RunStore):
    server: FaultServer = fault_server()
    judge = api_judge(server.base_url, constrain_with="grammar")
    config = RunConfig(dataset="toy", template="t", template_text='name = "t"\n', judges=(JudgeSpec.of(judge),),
                       mode=ScoringMode.GENERATE, constrain=AnswerConstraint.ANSWER)
    engine = RunEngine(config, toy_dataset(), {"api": OpenAIBackend(judge, rng=random.Random(0))}, store,
                       EngineOptions(renderer=render, close_backends=True))
    summary = await asyncio.wait_for(engine.run(), 60)
    assert (summary.done, summary.failures) == (6, 0)
    gbnf = build_grammar(LIKERT, AnswerConstraint.ANSWER, max_tokens=Sampling().max_tokens).gbnf
    assert len(server.stats.payloads) == 6 and all(p["grammar"] == gbnf for p in server.stats.payloads)
    scores = {r["item_id"]: r["score"] for r in store.judgments.export_rows(summary.run_id)}
    prompts = {json.dumps(p["messages"], sort_keys=True) for p in server.stats.payloads}
    assert sorted(scores.values()) == sorted(float(rating_for(p)) for p in prompts)


async def test_a_backend_that_cannot_constrain_is_refused_before_the_run(store: RunStore):
    config = run_config(constrain=AnswerConstraint.ANSWER)
    backend = FakeBackend("fake")
    engine = RunEngine(config, toy_dataset(), {"fake": backend}, store, EngineOptions(renderer=render))
    with pytest.raises(ConfigError, match="judge 'fake': its backend cannot constrain answers"):
        await engine.run()
    assert store.runs.list_runs() == []
