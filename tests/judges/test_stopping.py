"""Seeded context order and the stop rule, alone and inside the engine (fake backend, no sleeps)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dialjudge.core.config import JudgeConfig
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.run.config import JudgeSpec, JudgeVariant, RunConfig
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.run.events import RunFinished, StopRuleChecked
from dialjudge.core.judges.run.options import EngineOptions
from dialjudge.core.judges.run.stopping import StopRule, seeded_context_order
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import (
    Message,
    OutputKind,
    OutputSpec,
    RenderedPrompt,
    ScoringMode,
)
from dialjudge.core.model import Dataset, Example, Rating, Scale, ScaleKind, Turn
from dialjudge.core.stats.correlation import correlate

LIKERT = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"),
                    modes=(ScoringMode.GENERATE, ScoringMode.LOGPROB))
SCALE = Scale(ScaleKind.ORDINAL, 1, 5)


def dataset(n_contexts: int = 60, per: int = 3, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    return Dataset("toy", [
        Example(id=f"g{g:02d}c{c}", group_id=f"g{g:02d}", context=(Turn("user", f"context {g}"),),
                candidate=f"candidate {c} of {g}",
                ratings={"q": Rating(tuple(float(v) for v in rng.integers(1, 6, 3)), SCALE)})
        for g in range(n_contexts) for c in range(per)])


def human_of(ds: Dataset) -> dict[str, float]:
    return {ex.id: float(np.mean(ex.ratings["q"].scores)) for ex in ds}


def render(variant: JudgeVariant, example: Example) -> RenderedPrompt:
    return RenderedPrompt((Message("user", f"{example.context_text()}\nResponse: {example.candidate}"),), LIKERT, "t")


def config() -> RunConfig:
    return RunConfig(dataset="toy", template="test", template_text='name = "test"\n',
                     judges=(JudgeSpec.of(JudgeConfig(name="fake", backend="fake")),), mode=ScoringMode.LOGPROB,
                     top_k=0)


def test_order_is_seeded_keeps_contexts_together_and_ignores_which_items_are_chosen() -> None:
    ds = dataset(20, 3)
    order = [ex.id for ex in seeded_context_order(ds)]
    assert sorted(order) == sorted(ex.id for ex in ds)
    contexts = [i[:3] for i in order]
    assert [contexts[k] for k in range(0, 60, 3)] == list(dict.fromkeys(contexts))  # candidates together
    assert list(dict.fromkeys(contexts)) != sorted(set(contexts))  # not the file order
    assert order == [ex.id for ex in seeded_context_order(ds)]  # reproducible
    assert order != [ex.id for ex in seeded_context_order(ds, seed=1)]
    assert [ex.id for ex in seeded_context_order(ds, seed=None)] == [ex.id for ex in ds]
    # A subset keeps the relative order of the full run (so an extended run continues it).
    subset = [ex for ex in ds if ex.group_id not in ("g03", "g07")]
    assert [ex.id for ex in seeded_context_order(subset)] == [i for i in order if i[:3] not in ("g03", "g07")]


def test_width_rule_looks_every_k_contexts_and_reports_the_bootstrap_ci() -> None:
    ds = dataset(40, 3)
    human = human_of(ds)
    groups = {ex.id: ex.group_id for ex in ds}
    rule = StopRule(human, groups, ci_width=0.22, check_every=5, min_contexts=10, n_boot=300)
    rng = np.random.default_rng(1)
    states = []
    for ex in seeded_context_order(ds):
        state = rule.observe("fake", ex.id, human[ex.id] + rng.normal(0, 1.0))
        if state is not None:
            states.append(state)
            if state.decided:
                break
    assert [s.n_contexts for s in states] == [10, 15, 20, 25]
    last = states[-1]
    assert last.decided and last.ci_width < 0.22 and last.message.startswith("enough evidence")
    seen = list(rule._scores)
    expected = correlate([rule._scores[i] for i in seen], [human[i] for i in seen], [groups[i] for i in seen],
                         n_boot=300, seed=0)
    assert (last.estimate, last.ci_low, last.ci_high) == pytest.approx(
        (expected.spearman.value, expected.spearman.ci_low, expected.spearman.ci_high))
    assert all(not s.decided and s.message.startswith("not yet decided") for s in states[:-1])


def test_baseline_rule_uses_a_bonferroni_level_over_looks() -> None:
    ds = dataset(60, 3)
    human, groups = human_of(ds), {ex.id: ex.group_id for ex in ds}
    rng = np.random.default_rng(4)
    baseline = {i: h + rng.normal(0, 3.0) for i, h in human.items()}  # a poor baseline
    rule = StopRule(human, groups, baseline=baseline, baseline_name="run 1", check_every=5, min_contexts=10,
                    n_boot=500)
    assert rule.planned_looks == 11 and rule.look_confidence == pytest.approx(1 - 0.05 / 11)
    state = None
    for ex in seeded_context_order(ds):
        state = rule.observe("fake", ex.id, human[ex.id] + rng.normal(0, 0.3)) or state
        if state is not None and state.decided:
            break
    assert state is not None and state.decided and state.ci_low > 0
    assert "this run better than run 1" in state.message and state.confidence == pytest.approx(1 - 0.05 / 11)
    with pytest.raises(ValueError, match="CI width, a baseline"):
        StopRule(human, groups)


async def test_engine_stops_on_the_rule_and_a_resumed_run_continues_the_order(tmp_path: Path) -> None:
    ds = dataset(60, 3)
    human, groups = human_of(ds), {ex.id: ex.group_id for ex in ds}
    noise = dict(zip(human, np.random.default_rng(9).normal(0, 0.5, len(human)), strict=True))

    def score(item_id: str, prompt: str) -> float:
        return float(np.clip(human[item_id] + noise[item_id], 1, 5))

    store = RunStore(tmp_path / "runs.sqlite3")
    events: list[Any] = []
    rule = StopRule(human, groups, ci_width=0.5, check_every=5, n_boot=300)
    engine = RunEngine(config(), ds, {"fake": FakeBackend("fake", score_fn=score, max_concurrency=1)}, store,
                       EngineOptions(renderer=render, stop_rule=rule))
    engine.subscribe(events.append)
    summary = await engine.run()
    checks = [e.state for e in events if isinstance(e, StopRuleChecked)]
    assert engine.stopped_by_rule is not None and checks[-1] is engine.stopped_by_rule
    assert summary.status == "cancelled" and 0 < summary.done < 180
    assert summary.done == checks[-1].n_items and summary.done % 3 == 0
    assert isinstance(events[-1], RunFinished)
    first_part = [j.item_id for j in store.judgments.iter_judgments(summary.run_id)]
    order = [ex.id for ex in seeded_context_order(ds)]
    assert sorted(first_part) == sorted(order[:len(first_part)])  # the first contexts of the seeded order

    backend = FakeBackend("fake", score_fn=score, max_concurrency=1)
    rest = await RunEngine(config(), ds, {"fake": backend}, store, EngineOptions(renderer=render)).run()
    assert rest.status == "finished" and rest.resumed and rest.done == 180
    assert [r.item_id for r in backend.requests] == order[len(first_part):]
    store.close()
