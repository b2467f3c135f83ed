"""A judge run in its own process, for the crash-and-resume tests (test_reliability_runs.py).

``python run_child.py STORE ITEMS DELAY_S [WRITE_INTERVAL_S]`` judges ITEMS fake items with the
deterministic fake judge, each answer taking DELAY_S, signals handled as the
CLI handles them (SIGTERM and Ctrl-C interrupt, exit 130), errors printed as
the CLI prints them (exit 2). The test module imports the same builders, so
the run in here and the reference run in the test are the same configuration.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from dialjudge.core.config import JudgeConfig
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.run.config import JudgeSpec, JudgeVariant, RunConfig
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.run.options import EngineOptions
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import JudgeRequest, Message, OutputKind, OutputSpec, RenderedPrompt, ScoringMode
from dialjudge.core.model import BINARY_01, Dataset, Example, Rating, Turn

LIKERT = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"), answer_prefix="Score:",
                    modes=(ScoringMode.GENERATE, ScoringMode.LOGPROB))


def dataset(n: int) -> Dataset:
    return Dataset("crashy", [
        Example(id=f"item{i:03d}", group_id=f"g{i // 3}", context=(Turn("user", f"question {i // 3}"),),
                candidate=f"answer {i}", ratings={"good": Rating((1,), BINARY_01)}) for i in range(n)])


def render(variant: JudgeVariant, example: Example) -> RenderedPrompt:
    return RenderedPrompt((Message("system", "Rate 1-5."),
                           Message("user", f"{example.context_text()}\nResponse: {example.candidate}")), LIKERT, "t")


def run_config() -> RunConfig:
    judge = JudgeSpec.of(JudgeConfig(name="fake", backend="fake", concurrency=2))
    return RunConfig(dataset="crashy", template="t", template_text='name = "t"\n', judges=(judge,),
                     mode=ScoringMode.LOGPROB, top_k=0, repeats=2)


def engine(store: RunStore, items: int, backend: FakeBackend, **kw: Any) -> RunEngine:
    return RunEngine(run_config(), dataset(items), {"fake": backend}, store, EngineOptions(renderer=render, **kw))


def main(argv: list[str]) -> int:
    from dialjudge.cli.signals import sigterm_as_interrupt
    from dialjudge.core.errors import DialjudgeError

    store_path, items, delay_s = Path(argv[0]), int(argv[1]), float(argv[2])
    # WRITE_INTERVAL_S: commit batches this often (default the engine's), so that a kill can land between them.
    kw = {"write_interval_s": float(argv[3])} if len(argv) > 3 else {}

    async def slowly(request: JudgeRequest) -> None:
        await asyncio.sleep(delay_s)

    try:
        with RunStore(store_path) as store, sigterm_as_interrupt():
            summary = asyncio.run(engine(store, items, FakeBackend("fake", max_concurrency=2, delay=slowly), **kw).run())
    except DialjudgeError as exc:
        print(f"dialjudge: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dialjudge: interrupted", file=sys.stderr)
        return 130
    print(f"run {summary.run_id} {summary.status}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
