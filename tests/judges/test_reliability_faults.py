"""API judges against a fault-injecting OpenAI-compatible server (127.0.0.1 only, bounded waits).

Every mode on both endpoints under 30% mixed faults: every item ends judged or
failed with a one-line reason, nothing is judged (or paid) twice, the counts
the engine reports equal the store, retries stay bounded. Then the circuit
breaker: a dead server, a rejected key and a wrong model stop the judge early.
"""

from __future__ import annotations

import asyncio
import random
import re
import zlib
from pathlib import Path
from typing import Any

import pytest

from dialjudge.core.config import JudgeConfig
from dialjudge.core.errors import DialjudgeError
from dialjudge.core.judges.backends.openai_api import OpenAIBackend
from dialjudge.core.judges.run.config import JudgeSpec, JudgeVariant, RunConfig
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.run.events import JudgmentScored, RunEvent, RunFinished, RunProgress
from dialjudge.core.judges.run.failures import BreakerSettings
from dialjudge.core.judges.run.options import EngineOptions
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import Message, OutputKind, OutputSpec, RenderedPrompt, ScoringMode
from dialjudge.core.model import BINARY_01, Dataset, Example, Rating, Turn
from fault_server import FAULTS, FaultPlan, FaultServer, closed_port_url, mixed, rating_for

KEY = "sk-fault-suite-0123456789-SECRET"
LIKERT = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"), answer_prefix="Score:",
                    modes=(ScoringMode.GENERATE, ScoringMode.LOGPROB, ScoringMode.YESNO))
MAX_RETRIES = 4
ITEMS = 40
#: Python exception names: a reason a person reads never shows one.
PYTHON_ERRORS = re.compile(r"\b(\w+Error|Exception|Traceback)\b(?!: the)")


def dataset(n: int = ITEMS) -> Dataset:
    return Dataset("faulty", [
        Example(id=f"item{i:03d}", group_id=f"g{i // 4}", context=(Turn("user", f"question {i // 4}"),),
                candidate=f"answer {i}", ratings={"good": Rating((1,), BINARY_01)}) for i in range(n)])


def render(variant: JudgeVariant, example: Example) -> RenderedPrompt:
    return RenderedPrompt((Message("system", "Rate the response 1-5."),
                           Message("user", f"{example.context_text()}\nResponse: {example.candidate}")),
                          LIKERT, "fault-suite")


def judge_config(base_url: str, endpoint: str, **kw: Any) -> JudgeConfig:
    values: dict[str, Any] = dict(name="api", backend="openai", model="m", base_url=base_url,
                                  api_key_env="DIALJUDGE_FAULT_KEY", endpoint=endpoint, concurrency=4,
                                  max_retries=MAX_RETRIES, timeout=0.5,
                                  # The stub answers a new chat turn with a rating: read as it comes
                                  # (how a server continues after the prefix: test_probability_api.py).
                                  extra={"continuation": "unprefixed"})
    values.update(kw)
    return JudgeConfig(**values)


def fast_backend(config: JudgeConfig) -> OpenAIBackend:
    """Backoffs of milliseconds: the suite tests that retries happen, not how long they wait."""
    return OpenAIBackend(config, rng=random.Random(0), backoff_base=0.002, backoff_cap=0.01, max_retry_after=0.01)


async def judge_all(store: RunStore, config: JudgeConfig, mode: ScoringMode, *, items: int = ITEMS,
                    breaker: BreakerSettings | None = None) -> tuple[Any, list[RunEvent]]:
    run = RunConfig(dataset="faulty", template="t", template_text='name = "t"\n', judges=(JudgeSpec.of(config),),
                    mode=mode, top_k=0)
    events: list[RunEvent] = []
    engine = RunEngine(run, dataset(items), {"api": fast_backend(config)}, store,
                       EngineOptions(renderer=render, close_backends=True, breaker=breaker))
    engine.subscribe(events.append)
    summary = await asyncio.wait_for(engine.run(), 60)
    return summary, events


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIALJUDGE_FAULT_KEY", KEY)


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    s = RunStore(tmp_path / "runs.sqlite3")
    yield s
    s.close()


@pytest.mark.parametrize("endpoint", ["chat", "completions"])
@pytest.mark.parametrize("mode", [ScoringMode.GENERATE, ScoringMode.LOGPROB, ScoringMode.YESNO])
async def test_every_item_ends_judged_or_failed_under_mixed_faults(fault_server: Any, store: RunStore,
                                                                    endpoint: str, mode: ScoringMode) -> None:
    seed = zlib.crc32(f"{endpoint}/{mode.value}".encode())  # stable across processes, unlike hash()
    server: FaultServer = fault_server(FaultPlan(mixed(0.30), seed=seed, hang_s=1.0))
    summary, events = await judge_all(store, judge_config(server.base_url, endpoint), mode)

    rows = store.judgments.export_rows(summary.run_id)
    keys = [(r["item_id"], r["judge"], r["repeat"]) for r in rows]
    assert len(keys) == len(set(keys)) == ITEMS  # every item once
    failed = [r for r in rows if r["score"] is None]
    for row in failed:  # failed with a reason a person can read, on one line
        assert row["error"] and "\n" not in row["error"] and not PYTHON_ERRORS.search(row["error"]), row["error"]
    # Retried, 30% faults cost (almost) nothing: an item fails only when 5 attempts all fail.
    assert len(failed) <= 1, [r["error"] for r in failed]
    # Nothing paid twice: each prompt got at most one good answer, and at most 1 + MAX_RETRIES requests.
    assert max(server.stats.good_answers.values()) == 1
    assert max(server.stats.per_prompt.values()) <= MAX_RETRIES + 1
    assert server.stats.requests <= (ITEMS + 1) * (MAX_RETRIES + 1)
    # The faults really happened (in generate mode the log-probability faults spoil nothing).
    assert sum(n for f, n in server.stats.faults.items() if f not in ("none", "slow")) >= ITEMS * 0.15
    # Counts on screen equal the store.
    last_progress = [e for e in events if isinstance(e, RunProgress)][-1]
    assert (summary.done, summary.failures) == (ITEMS, len(failed))
    assert (last_progress.done, last_progress.failures) == (ITEMS, len(failed))
    assert sum(isinstance(e, JudgmentScored) for e in events) == ITEMS
    assert isinstance(events[-1], RunFinished) and events[-1].status == "finished"
    assert store.runs.get_run(summary.run_id).status == "finished"
    # The scores are the server's deterministic ratings (a retried answer is the right one).
    if mode is ScoringMode.GENERATE:
        scored = {r["item_id"]: r["score"] for r in rows if r["score"] is not None}
        assert len(scored) >= ITEMS - 1 and all(1 <= s <= 5 for s in scored.values())


@pytest.mark.parametrize("fault", [f for f in FAULTS if f != "slow"])
async def test_each_fault_alone_is_retried_then_reported_plainly(fault_server: Any, store: RunStore,
                                                                  fault: str) -> None:
    """Every request of every item gets the same fault: each item fails with one plain line and
    at most 1 + MAX_RETRIES requests (an answer without log-probabilities: 2)."""
    server: FaultServer = fault_server(FaultPlan({fault: 1.0}, hang_s=0.8))
    config = judge_config(server.base_url, "chat", max_retries=2, timeout=0.3)
    # The capability probe meets the fault too: the run refuses to start, with a plain reason.
    with pytest.raises(DialjudgeError) as caught:
        await judge_all(store, config, ScoringMode.LOGPROB, items=4)
    message = str(caught.value)
    assert "\n" not in message and not PYTHON_ERRORS.search(message), message
    assert server.base_url in message or "no log-probabilities" in message
    assert server.stats.requests == (2 if fault == "no-logprobs" else 3)
    assert store.runs.list_runs() == []  # nothing recorded, nothing paid beyond the probe

    # In generate mode (no probe) every item fails alone, with the reason, and the run goes on.
    server.stats.per_prompt.clear()
    summary, _ = await judge_all(store, config, ScoringMode.GENERATE, items=4,
                                 breaker=BreakerSettings(first_n=99, window=99))
    rows = store.judgments.export_rows(summary.run_id)
    assert len(rows) == 4
    if fault in {"no-logprobs", "positive-logprob", "nan-logprob", "string-logprob"}:
        assert all(r["score"] is not None for r in rows)  # these spoil only probability answers
        return
    assert all(r["score"] is None and r["error"] for r in rows)
    reasons = {r["error"] for r in rows}
    for reason in reasons:
        assert "\n" not in reason and not PYTHON_ERRORS.search(reason) and "gave up after 3 attempts" in reason
    assert max(server.stats.per_prompt.values()) == 3


@pytest.mark.parametrize("fault,expected", [
    ("positive-logprob", "log-probability 0.7 for token '{r}' is positive"),
    ("nan-logprob", "for token '{r}' is not a finite number"),
    ("string-logprob", "log-probability 'high' for token '{r}' is not a number"),
    ("no-logprobs", "the server's answer had no log-probabilities"),
    ("empty-choices", "the server's answer had an empty list of choices"),
    ("choices-not-list", "the server's answer had choices that are not a list"),
    ("html", "the server's answer is not JSON (it begins '<html>"),
    ("truncated", "the server's answer is cut short or broken JSON (it begins '{{\"id\": \"fake\""),
])
async def test_per_item_reasons_name_the_problem(fault_server: Any, store: RunStore, fault: str,
                                                 expected: str) -> None:
    """The probe passes (first request good), then every item's requests get the fault."""
    plan = FaultPlan({fault: 1.0})
    server: FaultServer = fault_server(plan)
    probe_prompt = '[{"content": "Is water wet? Answer yes or no.", "role": "user"}]'
    original = plan.fault
    plan.fault = lambda prompt, attempt: None if prompt == probe_prompt else original(prompt, attempt)  # type: ignore[method-assign]
    config = judge_config(server.base_url, "chat", max_retries=2)
    summary, _ = await judge_all(store, config, ScoringMode.LOGPROB, items=3,
                                 breaker=BreakerSettings(first_n=99, window=99))
    rows = store.judgments.export_rows(summary.run_id)
    assert [r["score"] for r in rows] == [None] * 3
    for row in rows:
        marker = f'Response: answer {int(row["item_id"][4:])}"'
        prompt = next(p for p in server.stats.per_prompt if marker in p)
        assert expected.format(r=rating_for(prompt)) in row["error"], row["error"]
    assert summary.status == "finished"  # the items failed, not the run


async def test_a_dead_server_pauses_the_judge_after_its_first_requests(store: RunStore) -> None:
    config = judge_config(closed_port_url(), "chat", concurrency=2, max_retries=1)
    summary, events = await judge_all(store, config, ScoringMode.GENERATE, items=60)
    assert summary.status == "failed" and "api" in summary.paused
    assert "first 3 requests all failed" in summary.paused["api"]
    assert "cannot connect to http://127.0.0.1:" in summary.paused["api"]
    # Until a judge has answered once its requests go one at a time: three requests, not one per item.
    assert summary.backend_calls == 3
    record = store.runs.get_run(summary.run_id)
    assert record.status == "failed" and "paused" in (record.error or "")
    assert summary.failure_reasons and summary.failure_reasons[0][1] == summary.failures


@pytest.mark.parametrize("status,words", [(401, "rejected the key"), (403, "rejected the key"),
                                          (404, "first 3 requests all failed")])
async def test_a_rejected_key_or_a_wrong_model_pauses_the_judge(fault_server: Any, store: RunStore,
                                                                 status: int, words: str) -> None:
    server: FaultServer = fault_server(FaultPlan(always_status=status))
    config = judge_config(server.base_url, "chat", concurrency=4)
    summary, _ = await judge_all(store, config, ScoringMode.GENERATE, items=30)
    assert summary.status == "failed" and words in summary.paused["api"]
    # 401/403 are never retried, not even item by item: one request. 404: the first three.
    assert server.stats.requests == (1 if status in (401, 403) else 3)
    assert KEY not in summary.paused["api"]


async def test_a_high_failure_rate_pauses_the_judge_and_a_resume_finishes_it(fault_server: Any,
                                                                          store: RunStore) -> None:
    plan = FaultPlan({"500": 0.9}, seed=3)
    server: FaultServer = fault_server(plan)
    config = judge_config(server.base_url, "chat", concurrency=1, max_retries=0)
    summary, _ = await judge_all(store, config, ScoringMode.GENERATE, items=40,
                                 breaker=BreakerSettings(first_n=3, window=10, max_failure_rate=0.5))
    assert summary.status == "failed" and "of its last 10 requests failed" in summary.paused["api"]
    assert summary.done < 40
    # Fixed: the same configuration resumes the run and judges only what is missing or failed.
    plan.rates = {}
    resumed, _ = await judge_all(store, config, ScoringMode.GENERATE, items=40)
    assert resumed.run_id == summary.run_id and resumed.status == "finished" and resumed.failures == 0
    assert len(store.judgments.export_rows(resumed.run_id)) == 40
