"""Figure 3: an API judge against a local OpenAI-compatible stub answering after 200 ms.

Items/s of a run through the engine (prompts rendered, answers parsed and stored)
at concurrency 1, 8, 32 and 64 on USR Topical-Chat, and a run at concurrency 64
where the stub answers 10% of requests with 429 (Retry-After: 0.2 s): no item
may be lost. The stub runs in its own process on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from .common import REPO_ROOT, Context, Row, equals, speedup

DELAY_S = 0.2
CONCURRENCIES = (1, 8, 32, 64)


@contextmanager
def stub_server(delay: float, rate_429: float = 0.0) -> Iterator[str]:
    """Start the stub; yields its base URL."""
    process = subprocess.Popen([sys.executable, "-m", "bench.api_stub", "--delay", str(delay),
                                "--rate-429", str(rate_429)], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=10)


def run_once(dataset: Any, base_url: str, concurrency: int, items: int, store_dir: Path) -> tuple[float, Any]:
    """(seconds, summary) of one fresh run of ``items`` items."""
    from dialjudge.core.config import JudgeConfig
    from dialjudge.core.judges.backends.openai_api import OpenAIBackend
    from dialjudge.core.judges.prompts.templates import get_template
    from dialjudge.core.judges.run.config import RunConfig
    from dialjudge.core.judges.run.engine import RunEngine
    from dialjudge.core.judges.run.options import EngineOptions
    from dialjudge.core.judges.store.run_store import RunStore
    from dialjudge.core.judges.types import ScoringMode

    judge = JudgeConfig(name="stub", backend="openai", base_url=base_url, model="stub", concurrency=concurrency,
                        timeout=30.0, max_retries=8)
    config = RunConfig.build(dataset, get_template("adv-0to1"), [judge], aspect="coherence", quality="Overall",
                             mode=ScoringMode.GENERATE, limit=items)
    store = RunStore(store_dir / f"runs-{concurrency}-{time.monotonic_ns()}.sqlite3")
    try:
        engine = RunEngine(config, dataset, {"stub": OpenAIBackend(judge)}, store,
                           EngineOptions(resume=False, use_cache=False, close_backends=True))
        started = time.perf_counter()
        summary = asyncio.run(engine.run())
        return time.perf_counter() - started, summary
    finally:
        store.close()


def run(ctx: Context) -> list[Row]:
    from dialjudge.core.loaders.usr import read_usr

    dataset = read_usr(ctx.data_dir / "usr" / "usr_topical_chat.json")
    n_items = 128 if ctx.quick else len(dataset)
    rows: list[Row] = []
    rates: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp, stub_server(DELAY_S) as url:
        for concurrency in CONCURRENCIES:
            # Sequentially every item costs the full delay: a few are enough to measure the rate.
            items = min(n_items, 6 if ctx.quick else 25) if concurrency == 1 else n_items
            seconds, summary = run_once(dataset, url, concurrency, items, Path(tmp))
            rates[concurrency] = summary.done / seconds
            ctx.log(f"  concurrency {concurrency}: {summary.done} items in {seconds:.2f} s = "
                    f"{rates[concurrency]:.1f} items/s (summary says {summary.items_per_s()}), "
                    f"{summary.failures} failed")
    for concurrency in CONCURRENCIES[1:]:
        rows.append(speedup(f"api items/s at concurrency {concurrency} vs 1", rates[1], rates[concurrency],
                            40.0 if concurrency == 64 else None))
    with tempfile.TemporaryDirectory() as tmp, stub_server(DELAY_S, rate_429=0.1) as url:
        seconds, summary = run_once(dataset, url, 64, n_items, Path(tmp))
        ctx.log(f"  with 10% 429s at concurrency 64: {summary.done - summary.failures}/{summary.total} scored "
                f"in {seconds:.2f} s")
        rows.append(equals("api items lost with 10% 429s (concurrency 64)", float(summary.failures), 0.0))
    return rows
