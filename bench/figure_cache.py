"""Figure 4: the response cache. Model calls of three reruns through the engine and one store:

- the same run again: zero calls (every answer comes from the cache);
- only the persona changed: every item is judged again (the prompt changed);
- only the subset grew: only the new items are judged.

A fake judge stands in for the model (what is counted is the requests that reach it).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from .common import Context, Row, equals


def judge_run(dataset: Any, store: Any, *, limit: int, persona: Any = None) -> int:
    """Backend calls of one run (a new engine, as a rerun from the CLI or the app would make)."""
    from dialjudge.core.config import JudgeConfig
    from dialjudge.core.judges.backends.fake import FakeBackend
    from dialjudge.core.judges.prompts.templates import get_template
    from dialjudge.core.judges.run.config import RunConfig
    from dialjudge.core.judges.run.engine import RunEngine
    from dialjudge.core.judges.run.events import RunStatus
    from dialjudge.core.judges.types import ScoringMode

    judge = JudgeConfig(name="fake", backend="fake", model="bench")
    config = RunConfig.build(dataset, get_template("adv-0to1"), [judge], aspect="coherence", quality="Overall",
                             mode=ScoringMode.LOGPROB, top_k=0, limit=limit, personas=[persona])
    backend = FakeBackend.from_config(judge)
    summary = asyncio.run(RunEngine(config, dataset, {"fake": backend}, store).run())
    assert summary.status is RunStatus.FINISHED, summary
    return len(backend.requests)


def run(ctx: Context) -> list[Row]:
    from dialjudge.core.judges.run.config import PersonaSpec
    from dialjudge.core.judges.store.run_store import RunStore
    from dialjudge.core.loaders.usr import read_usr

    dataset = read_usr(ctx.data_dir / "usr" / "usr_topical_chat.json")
    first = 60 if ctx.quick else 180
    grown = 2 * first
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "runs.sqlite3")
        try:
            initial = judge_run(dataset, store, limit=first)
            unchanged = judge_run(dataset, store, limit=first)
            persona = judge_run(dataset, store, limit=first,
                                persona=PersonaSpec("strict", "You are a strict fact-checker."))
            judge_run(dataset, store, limit=first)  # warm again without persona, then grow the subset
            grew = judge_run(dataset, store, limit=grown)
        finally:
            store.close()
    ctx.log(f"  first run {initial} calls; unchanged {unchanged}; persona changed {persona}; "
            f"subset {first} -> {grown}: {grew}")
    return [
        equals(f"cache calls: unchanged rerun of {first} items", float(unchanged), 0.0, baseline=float(initial)),
        equals(f"cache calls: persona changed, {first} items", float(persona), float(first), baseline=float(initial)),
        equals(f"cache calls: subset grew {first} -> {grown}", float(grew), float(grown - first),
               baseline=float(grown)),
    ]
