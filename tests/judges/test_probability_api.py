"""Probability scoring over an API: how a server is made to continue after the answer prefix, and
why an answer that is not a rating is never scored (the valid-answer mass), against the stub server
of tests/fault_server.py (127.0.0.1 only, bounded waits, no sleeps)."""

from __future__ import annotations

import asyncio
import math
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dialjudge.core.config import JudgeConfig, parse_config
from dialjudge.core.errors import BackendError, ConfigError
from dialjudge.core.judges.backends.openai_api import OpenAIBackend
from dialjudge.core.judges.post_run.mass import run_mass_lines
from dialjudge.core.judges.run.config import JudgeSpec, JudgeVariant, RunConfig
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.run.events import RunEvent, RunStarted
from dialjudge.core.judges.run.options import EngineOptions
from dialjudge.core.judges.run.scoring import is_low_mass_failure, score_result
from dialjudge.core.judges.store.run_store import SCHEMA_VERSION, RunStore
from dialjudge.core.judges.store.status import RunState, status_text
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
from dialjudge.core.review_queue import FlagKind, build_queue
from fault_server import FaultPlan, FaultServer, rating_for

LIKERT = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"), answer_prefix="Score:",
                    modes=(ScoringMode.GENERATE, ScoringMode.LOGPROB, ScoringMode.YESNO))
ITEMS = 12
#: A ChatML template, as llama.cpp's server shows one at /props.
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def dataset(n: int = ITEMS) -> Dataset:
    return Dataset("stub", [
        Example(id=f"item{i:03d}", group_id=f"g{i // 3}", context=(Turn("user", f"question {i // 3}"),),
                candidate=f"answer {i}", ratings={"good": Rating((1,), BINARY_01)}) for i in range(n)])


def render(variant: JudgeVariant, example: Example) -> RenderedPrompt:
    return RenderedPrompt((Message("system", "Rate the response 1-5."),
                           Message("user", f"{example.context_text()}\nResponse: {example.candidate}")), LIKERT, "t")


def judge_config(base_url: str, endpoint: str = "chat", **options: Any) -> JudgeConfig:
    return JudgeConfig(name="api", backend="openai", model="m", base_url=base_url, endpoint=endpoint,
                       concurrency=2, max_retries=1, timeout=5.0, extra=options)


def backend(config: JudgeConfig) -> OpenAIBackend:
    return OpenAIBackend(config, rng=random.Random(0), backoff_base=0.002, backoff_cap=0.01, max_retry_after=0.01)


async def judge_all(store: RunStore, config: JudgeConfig, mode: ScoringMode = ScoringMode.LOGPROB,
                    top_k: int = 0) -> tuple[Any, list[RunEvent]]:
    run = RunConfig(dataset="stub", template="t", template_text='name = "t"\n', judges=(JudgeSpec.of(config),),
                    mode=mode, top_k=top_k)
    events: list[RunEvent] = []
    engine = RunEngine(run, dataset(), {"api": backend(config)}, store,
                       EngineOptions(renderer=render, close_backends=True))
    engine.subscribe(events.append)
    return await asyncio.wait_for(engine.run(), 60), events


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "runs.sqlite3")


# -- how the server is asked ---------------------------------------------------------------------


async def test_a_chat_server_that_cannot_continue_refuses_probability_modes_up_front(fault_server, store):
    server = fault_server(FaultPlan())
    with pytest.raises(BackendError) as caught:
        await judge_all(store, judge_config(server.base_url))
    message = str(caught.value)
    assert "cannot be made to continue after the template's answer prefix" in message
    assert "options.chat_template" in message and 'options.continuation = "unprefixed"' in message
    assert store.runs.list_runs() == []  # refused before the run was recorded
    asked = [p for p in server.stats.payloads if "messages" in p]
    assert len(asked) == 2 and asked[1]["continue_final_message"] is True  # the detection's two probes only


async def test_continue_final_message_is_used_where_the_server_honours_it(fault_server, store):
    server = fault_server(FaultPlan(continues_final_message=True))
    summary, events = await judge_all(store, judge_config(server.base_url))
    assert summary.done == ITEMS and summary.failures == 0
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.scoring == {"api": "continue"}
    asked = server.stats.payloads[-1]
    assert asked["messages"][-1] == {"role": "assistant", "content": "Score:"}
    assert asked["continue_final_message"] is True and asked["add_generation_prompt"] is False
    environment = store.runs.get_run(summary.run_id).run_config.environment
    assert "continue_final_message" in environment["judges"]["api"]["scoring"]
    state = RunState()
    for event in events:
        state.apply(event)
    assert "api: chat, continue_final_message" in status_text(state, show_timings=False)


async def test_a_template_from_props_sends_the_formatted_prompt_to_completions(fault_server, store):
    server = fault_server(FaultPlan(chat_template=CHATML))
    summary, events = await judge_all(store, judge_config(server.base_url))
    assert summary.failures == 0 and next(e for e in events if isinstance(e, RunStarted)).scoring == {"api": "template"}
    prompt = server.stats.payloads[-1]["prompt"]
    assert prompt.startswith("<|im_start|>system\nRate the response 1-5.<|im_end|>\n<|im_start|>user\n")
    assert prompt.endswith("<|im_end|>\n<|im_start|>assistant\nScore:")
    for judgment in store.judgments.load_judgments(summary.run_id)["api"].values():
        assert judgment.score == pytest.approx(_expected(rating_for(_prompt_of(server, judgment.item_id))), abs=1e-9)
        assert judgment.valid_mass == 1.0 and not judgment.mass_is_lower_bound


async def test_a_template_file_is_read_from_options(fault_server, store, tmp_path):
    template = tmp_path / "chatml.jinja"
    template.write_text(CHATML, encoding="utf-8")
    server = fault_server(FaultPlan())
    summary, _ = await judge_all(store, judge_config(server.base_url, chat_template=str(template)))
    assert summary.failures == 0
    assert server.stats.payloads[-1]["prompt"].endswith("<|im_start|>assistant\nScore:")
    with pytest.raises(BackendError, match="chat template file not found"):
        await judge_all(RunStore(tmp_path / "other.sqlite3"),
                        judge_config(server.base_url, chat_template=str(tmp_path / "missing.gguf")))


# -- answers with little probability on valid ratings -------------------------------------------


async def test_answers_with_little_valid_mass_fail_with_the_mass_and_are_counted(fault_server, store):
    # What llama.cpp's server gave for "A: yes, i've heard of it": "1" at 0.57%, nothing else valid.
    server = fault_server(FaultPlan(valid_mass=0.0057))
    summary, events = await judge_all(store, judge_config(server.base_url, continuation="unprefixed"))
    assert summary.done == ITEMS and summary.failures == ITEMS
    judgments = store.judgments.load_judgments(summary.run_id)["api"]
    for judgment in judgments.values():
        assert judgment.score is None and is_low_mass_failure(judgment)
        assert judgment.valid_mass == pytest.approx(0.0057, rel=1e-6)
        assert judgment.error.startswith("the answer did not start with a rating: 0.6% of the probability on "
                                         "valid ratings")
        assert judgment.distribution is not None  # the normalised reading is kept, only never reported
    (reason, count), = summary.failure_reasons
    assert count == ITEMS and "0.6% of the probability" in reason
    state = RunState()
    for event in events:
        state.apply(event)
    line = status_text(state, show_timings=False)
    assert f"{ITEMS} not scored for too little valid mass" in line and "api: chat without the answer prefix" in line
    (text,) = run_mass_lines(store.judgments.iter_judgments(summary.run_id), "").values()
    assert text.startswith(f"median 0.6%, least 0.6% over {ITEMS} judgments; {ITEMS} not scored")
    queue = build_queue(dataset(), {"api": judgments}, "good")
    assert {case.item_id for case in queue if any(f.kind is FlagKind.LOW_MASS for f in case.flags)} == set(judgments)


@pytest.mark.parametrize(("mass", "threshold", "scored"), [(0.7, None, True), (0.3, None, False), (0.3, 0.2, True)])
async def test_the_threshold_is_the_judges(fault_server, store, mass, threshold, scored):
    server = fault_server(FaultPlan(valid_mass=mass))
    options: dict[str, Any] = {"continuation": "unprefixed"}
    if threshold is not None:
        options["min_valid_mass"] = threshold
    summary, _ = await judge_all(store, judge_config(server.base_url, **options))
    judgments = list(store.judgments.iter_judgments(summary.run_id))
    assert all((j.score is not None) is scored for j in judgments)
    assert all(j.valid_mass == pytest.approx(mass, rel=1e-6) for j in judgments)
    if scored:  # the reading renormalises over the valid answers, as before: the mass says how far to trust it
        assert all(1 <= j.score <= 5 for j in judgments)


async def test_a_mass_read_from_a_truncated_list_is_a_lower_bound(fault_server, store):
    # The listed tokens hold 60% of the probability: valid answers may hide in the other 40%.
    server = fault_server(FaultPlan(valid_mass=0.2, top_coverage=0.6))
    summary, _ = await judge_all(store, judge_config(server.base_url, continuation="unprefixed"))
    for judgment in store.judgments.iter_judgments(summary.run_id):
        assert judgment.mass_is_lower_bound and judgment.score is None
        assert "at least 20.0% of the probability" in judgment.error and "truncated top list" in judgment.error
    (text,) = run_mass_lines(store.judgments.iter_judgments(summary.run_id), "").values()
    assert text.startswith(">=20.0% median") is False and "median >=20.0%" in text and "lower bounds" in text


# -- scoring, config and the store ----------------------------------------------------------------


def _request(mode: ScoringMode = ScoringMode.LOGPROB, top_k: int = 0, threshold: float = 0.5) -> JudgeRequest:
    from dialjudge.core.config import Sampling

    prompt = RenderedPrompt((Message("user", "Rate."),), LIKERT, "t")
    return JudgeRequest("i", prompt, mode, Sampling(), top_k=top_k, min_valid_mass=threshold)


def test_top_k_counts_the_valid_answers_it_saw_and_an_unmeasured_mass_is_not_checked():
    top = [(" 4", math.log(0.5)), (" The", math.log(0.3)), (" 3", math.log(0.1)), ("A", math.log(0.05))]
    result = BackendResult(raw_output=" 4", choice_probs={"3": 0.2, "4": 0.8}, top_logprobs=top, valid_mass=0.6)
    judgment = score_result(_request(top_k=2), result, "j")
    assert judgment.valid_in_top == 1 and judgment.score == 4.0 and judgment.valid_mass == 0.6
    assert score_result(_request(top_k=0), result, "j").valid_in_top == 2
    unmeasured = BackendResult(raw_output=" 4", choice_probs={"4": 1.0}, top_logprobs=top)
    assert score_result(_request(threshold=0.99), unmeasured, "j").score == 4.0
    assert score_result(_request(threshold=0.99), result, "j").score is None
    yes_no = BackendResult(raw_output="A", choice_probs={"yes": 0.5, "no": 0.5}, top_logprobs=top, valid_mass=0.01)
    assert score_result(_request(ScoringMode.YESNO), yes_no, "j").error.startswith(
        "the answer did not start with a yes/no answer: 1.0%")


@pytest.mark.parametrize(("options", "message"), [
    ("min_valid_mass = 1.5", "judges.api.options.min_valid_mass must be a number from 0 to 1"),
    ("min_valid_mass = true", "judges.api.options.min_valid_mass must be a number from 0 to 1"),
    ('continuation = "maybe"', "judges.api.options.continuation must be one of auto, template, continue"),
    ("chat_template = 3", "judges.api.options.chat_template must be the path of a GGUF file"),
])
def test_the_options_are_validated_with_their_key(options, message):
    import tomllib

    raw = tomllib.loads(f'[judges.api]\nbackend = "openai"\nbase_url = "http://x/v1"\nmodel = "m"\n'
                        f"[judges.api.options]\n{options}\n")
    with pytest.raises(ConfigError, match=message):
        parse_config(raw)


def test_a_version_3_store_reads_with_unknown_masses(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    db = sqlite3.connect(path)
    db.executescript((Path(__file__).parent / "store_schema_v1.sql").read_text(encoding="utf-8"))
    db.execute("CREATE TABLE run_locks (fingerprint TEXT PRIMARY KEY, run_id INTEGER, pid INTEGER NOT NULL, "
               "host TEXT NOT NULL, owner TEXT NOT NULL, started TEXT NOT NULL)")
    db.execute("ALTER TABLE judgments ADD COLUMN top_logprobs TEXT")
    db.execute("ALTER TABLE runs ADD COLUMN source_run INTEGER")
    db.execute("ALTER TABLE runs ADD COLUMN wall_s REAL NOT NULL DEFAULT 0")
    db.execute("PRAGMA user_version = 3")
    db.execute("INSERT INTO runs (created, updated, name, status, config, fingerprint, total) "
               "VALUES ('2026-01-01', '2026-01-01', 'old', 'finished', '{}', 'fp-old', 1)")
    db.execute("INSERT INTO judgments (run_id, item_id, judge, repeat, mode, prompt_hash, raw_output, score, "
               "created) VALUES (1, 'a', 'j', 0, 'logprob', 'h', '4', 4.0, '2026-01-01')")
    db.execute("INSERT INTO response_cache (cache_key, model_identity, raw_output, choice_probs, created) "
               "VALUES ('k', 'm', '4', '{\"4\": 1.0}', '2026-01-01')")
    db.commit()
    db.close()
    with RunStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 5
        (judgment,) = store.judgments.iter_judgments(1)
        assert judgment.score == 4.0 and judgment.valid_mass is None and judgment.valid_in_top is None
        assert not judgment.mass_is_lower_bound
        (row,) = store.judgments.export_rows(1)
        assert row["valid_mass"] is None and row["mass_lower_bound"] is False
        cached = store.cache.cached_response("k")
        assert cached is not None and cached.valid_mass is None
        assert run_mass_lines(store.judgments.iter_judgments(1)) == {"valid mass (j)": "not measured (1 judgments from "
                                                                              "before masses were recorded)"}


def _prompt_of(server: FaultServer, item_id: str) -> str:
    number = int(item_id[4:])
    return next(p["prompt"] for p in server.stats.payloads if f"answer {number}<|im_end|>" in p.get("prompt", ""))


def _expected(rating: int) -> float:
    """The expected rating over the stub's digits (see fault_server.top_tokens)."""
    weights = {d: math.exp(-0.2 if d == rating else -2.0 if abs(d - rating) == 1 else -4.0) for d in range(1, 6)}
    return sum(d * w for d, w in weights.items()) / sum(weights.values())
