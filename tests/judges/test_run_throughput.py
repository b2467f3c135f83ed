"""The run summary's items/s is throughput (judgments / wall time), not 1 / mean latency."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dialjudge.core.config import JudgeConfig
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.run.config import JudgeSpec, RunConfig
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.run.events import RunStatus, RunSummary
from dialjudge.core.judges.run.options import EngineOptions
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import JudgeRequest, Message, OutputKind, OutputSpec, RenderedPrompt, ScoringMode
from dialjudge.core.model import BINARY_01, Dataset, Example, Rating, Turn

LIKERT = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"),
                    modes=(ScoringMode.GENERATE, ScoringMode.LOGPROB))


def dataset(n: int) -> Dataset:
    return Dataset("toy", [
        Example(id=f"e{i}", group_id=f"g{i // 3}", context=(Turn("user", f"context {i // 3}"),),
                candidate=f"candidate {i}", ratings={"good": Rating((1, 0, 1), BINARY_01)})
        for i in range(n)])


def render(variant: object, example: Example) -> RenderedPrompt:
    return RenderedPrompt((Message("user", f"{example.context_text()}\nResponse: {example.candidate}"),), LIKERT,
                          "test")


def test_items_per_s_is_done_over_wall_time() -> None:
    summary = RunSummary(run_id=1, status=RunStatus.FINISHED, total=30, done=30, failures=0, cached=0, backend_calls=30,
                         resumed=False, elapsed_s=4.0, session_done={"a": 20, "b": 10})
    assert summary.items_per_s("a") == 5.0
    assert summary.items_per_s("b") == 2.5
    assert summary.items_per_s() == 7.5
    assert summary.items_per_s("nobody") is None
    idle = RunSummary(run_id=1, status=RunStatus.FINISHED, total=0, done=0, failures=0, cached=0, backend_calls=0,
                      resumed=False, elapsed_s=0.0)
    assert idle.items_per_s() is None


async def test_concurrent_requests_raise_throughput_above_one_over_latency(tmp_path: Path) -> None:
    """Each request takes 2 (fake) seconds. A judge's first request goes alone (a wrong key costs one
    request), then 8 are in flight: 12 items finish in 6 s, i.e. 2 items/s, while 1 / mean latency
    would say 0.5."""
    now = [0.0]
    left = [12]  # requests not yet answered
    waiting: list[asyncio.Future[None]] = []

    async def two_seconds(request: JudgeRequest) -> None:
        # Requests wait until a full batch is in flight (the first alone, then 8, or what is left);
        # then the clock moves 2 s and the whole batch is answered at once.
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiting.append(future)
        if len(waiting) == (1 if left[0] == 12 else min(8, left[0])):
            now[0] += 2.0
            left[0] -= len(waiting)
            for f in waiting:
                f.set_result(None)
            waiting.clear()
        await future

    backend = FakeBackend("a", max_concurrency=8, delay=two_seconds)
    config = RunConfig(dataset="toy", template="test", template_text='name = "test"\n',
                       judges=(JudgeSpec.of(JudgeConfig(name="a", backend="fake")),),
                       mode=ScoringMode.LOGPROB, top_k=0)
    store = RunStore(tmp_path / "runs.sqlite3")
    try:
        engine = RunEngine(config, dataset(12), {"a": backend}, store,
                           EngineOptions(renderer=render, clock=lambda: now[0]))
        summary = await asyncio.wait_for(engine.run(), timeout=60)  # a batch that never fills fails here
    finally:
        store.close()
    assert summary.done == 12 and summary.elapsed_s == pytest.approx(6.0)
    assert summary.session_done == {"a": 12}
    assert summary.items_per_s("a") == pytest.approx(2.0)
