"""What bad servers cost an API judge: failed items and requests, per scenario, in one run.

Runs the engine with an OpenAI-compatible judge against the fault-injecting
server of tests/fault_server.py (127.0.0.1 only) and prints one table:

* 60 items under 30% mixed faults (every fault kind of the server), 4 retries,
  in each mode and endpoint: items failed, requests sent;
* a dead server (connection refused) and a rejected key (401): requests sent
  for 60 items, the run's status and exit reason;
* two engines started on the same run at once: requests sent for 48 items.

Backoffs are shrunk to milliseconds (the cost is counted in requests, not
waited for). The same script runs against an older checkout, so a change can
be measured before and after:

    PYTHONPATH=src python bench/bench_api_faults.py
    PYTHONPATH=/path/to/old/src python bench/bench_api_faults.py
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from dialjudge.core.config import JudgeConfig
from dialjudge.core.judges.backends.openai_api import OpenAIBackend
from dialjudge.core.judges.run.config import JudgeSpec, JudgeVariant, RunConfig
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.run.options import EngineOptions
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import (
    Message,
    OutputKind,
    OutputSpec,
    RenderedPrompt,
    ScoringMode,
)
from dialjudge.core.model import BINARY_01, Dataset, Example, Rating, Turn
from fault_server import FaultPlan, FaultServer, closed_port_url, mixed

KEY_ENV = "DIALJUDGE_BENCH_KEY"
SPEC = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"), answer_prefix="Score:",
                  modes=(ScoringMode.GENERATE, ScoringMode.LOGPROB, ScoringMode.YESNO))


def dataset(n: int) -> Dataset:
    return Dataset("bench", [Example(id=f"i{k:03d}", group_id=f"g{k // 4}", context=(Turn("user", f"q {k // 4}"),),
                                     candidate=f"answer {k}", ratings={"good": Rating((1,), BINARY_01)})
                             for k in range(n)])


def render(variant: JudgeVariant, example: Example) -> RenderedPrompt:
    return RenderedPrompt((Message("system", "Rate 1-5."),
                           Message("user", f"{example.context_text()}\nResponse: {example.candidate}")), SPEC, "b")


async def run(store: RunStore, base_url: str, mode: ScoringMode, endpoint: str, items: int) -> Any:
    judge = JudgeConfig(name="api", backend="openai", model="m", base_url=base_url, api_key_env=KEY_ENV,
                        endpoint=endpoint, concurrency=4, max_retries=4, timeout=0.5)
    config = RunConfig(dataset="bench", template="b", template_text='name = "b"\n', judges=(JudgeSpec.of(judge),),
                       mode=mode, top_k=0)
    backend = OpenAIBackend(judge, rng=random.Random(0), backoff_base=0.002, backoff_cap=0.01, max_retry_after=0.01)
    engine = RunEngine(config, dataset(items), {"api": backend}, store,
                       EngineOptions(renderer=render, close_backends=True))
    return await engine.run()


def describe(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:90]


async def scenario(name: str, plan: FaultPlan | None, mode: ScoringMode, endpoint: str, items: int,
                   folder: Path) -> tuple[str, ...]:
    store = RunStore(folder / f"{name}-{mode.value}-{endpoint}.sqlite3")
    server = FaultServer(plan).start() if plan is not None else None
    url = server.base_url if server is not None else closed_port_url()
    try:
        summary = await run(store, url, mode, endpoint, items)
        outcome = f"{summary.status}; {summary.failures} of {items} failed"
        calls = str(server.stats.requests) if server else str(summary.backend_calls)
    except Exception as exc:  # what a user would see: the run refused or crashed
        outcome, calls = describe(exc), str(server.stats.requests) if server else "?"
    finally:
        if server is not None:
            server.stop()
        store.close()
    return name, f"{mode.value}/{endpoint}", str(items), calls, outcome


async def two_at_once(folder: Path) -> tuple[str, ...]:
    server = FaultServer(FaultPlan({"slow": 1.0}, slow_s=0.01)).start()
    path = folder / "twice.sqlite3"
    first, second = RunStore(path), RunStore(path)
    try:
        results = await asyncio.gather(run(first, server.base_url, ScoringMode.GENERATE, "chat", 48),
                                       run(second, server.base_url, ScoringMode.GENERATE, "chat", 48),
                                       return_exceptions=True)
        outcome = "; ".join(describe(r) if isinstance(r, BaseException) else f"{r.status}" for r in results)
        return "two engines, one run", "generate/chat", "48", str(server.stats.requests), outcome
    finally:
        server.stop()
        first.close()
        second.close()


async def main() -> None:
    os.environ[KEY_ENV] = "sk-bench"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for mode in (ScoringMode.GENERATE, ScoringMode.LOGPROB, ScoringMode.YESNO):
            for endpoint in ("chat", "completions"):
                rows.append(await scenario("30% mixed faults", FaultPlan(mixed(0.30), seed=7, hang_s=1.0), mode,
                                           endpoint, 60, folder))
        rows.append(await scenario("dead server", None, ScoringMode.GENERATE, "chat", 60, folder))
        rows.append(await scenario("wrong key (401)", FaultPlan(always_status=401), ScoringMode.GENERATE, "chat",
                                   60, folder))
        rows.append(await two_at_once(folder))
    header = ("scenario", "mode/endpoint", "items", "requests", "outcome")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


if __name__ == "__main__":
    asyncio.run(main())
