"""The run config and the async run engine, driven by the fake backend (no model, no sleeps)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from dialjudge.core.config import JudgeConfig, Sampling
from dialjudge.core.errors import BackendError, ConfigError, RequestInterrupted
from dialjudge.core.judges.backends.fake import GARBAGE_OUTPUT, FakeBackend
from dialjudge.core.judges.prompts.fewshot import FewShotSetting
from dialjudge.core.judges.run.config import JudgeSpec, JudgeVariant, PersonaSpec, RunConfig
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.run.events import (
    JudgmentScored,
    RunFailed,
    RunFinished,
    RunPhase,
    RunProgress,
    RunStarted,
)
from dialjudge.core.judges.run.options import EngineOptions
from dialjudge.core.judges.run.stopping import seeded_context_order
from dialjudge.core.judges.run.work_plan import order_for_prefix_reuse
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

LIKERT = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"),
                    modes=(ScoringMode.GENERATE, ScoringMode.LOGPROB))
TEMPLATE_TEXT = 'name = "test"\n'


def make_dataset(groups: int = 3, per_group: int = 2, *, interleave: bool = False) -> Dataset:
    """``groups`` contexts with ``per_group`` candidates each; interleaved lists g0c0, g1c0, ..."""
    pairs = [(g, c) for c in range(per_group) for g in range(groups)] if interleave else \
        [(g, c) for g in range(groups) for c in range(per_group)]
    return Dataset("toy", [
        Example(id=f"g{g}c{c}", group_id=f"g{g}", context=(Turn("user", f"context {g}"),),
                candidate=f"candidate {c} of {g}", ratings={"good": Rating((1, 0, 1), BINARY_01)})
        for g, c in pairs])


def render(variant: JudgeVariant, example: Example) -> RenderedPrompt:
    """A stand-in for render_prompt: persona first, then context, then the candidate."""
    persona = variant.persona.text if variant.persona else "Neutral."
    return RenderedPrompt((Message("system", persona),
                           Message("user", f"{example.context_text()}\nResponse: {example.candidate}")), LIKERT, "test")


def judge(name: str = "fake", **kw: Any) -> JudgeSpec:
    return JudgeSpec.of(JudgeConfig(name=name, backend="fake", **kw))


def config(*judges: JudgeSpec, **kw: Any) -> RunConfig:
    kw.setdefault("mode", ScoringMode.LOGPROB)
    kw.setdefault("top_k", 0)
    return RunConfig(dataset="toy", template="test", template_text=TEMPLATE_TEXT,
                     judges=judges or (judge(),), **kw)


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    s = RunStore(tmp_path / "runs.sqlite3")
    yield s
    s.close()


def engine(cfg: RunConfig, dataset: Dataset, backends: dict[str, Any], store: RunStore, **kw: Any) -> RunEngine:
    kw.setdefault("renderer", render)
    return RunEngine(cfg, dataset, backends, store, EngineOptions(**kw))


def row_keys(store: RunStore, run_id: int) -> list[tuple[str, str, int]]:
    return [(j.item_id, j.judge, j.repeat) for j in store.judgments.iter_judgments(run_id)]


# -- the run config --------------------------------------------------------------------------


def test_config_snapshot_round_trips_through_json() -> None:
    cfg = config(judge("a", sampling=Sampling(temperature=0.7, seed=5)), judge("b"),
                 personas=(None, PersonaSpec("critic", "Be harsh.", "a harsh judge")), repeats=3,
                 fewshot=FewShotSetting("bm25-context", 4, 1), aspect="engaging", quality="good",
                 subset="system:x", limit=10, name="my run")
    data = json.loads(cfg.to_json())
    assert data["template"]["text"] == TEMPLATE_TEXT
    assert data["personas"][1]["text"] == "Be harsh."
    again = RunConfig.from_dict(data)
    assert again == cfg
    assert again.fingerprint == cfg.fingerprint


def test_fingerprint_follows_what_decides_the_answers_only() -> None:
    base = config(judge("a"))
    assert base.fingerprint == config(judge("a")).fingerprint
    # Name and speed settings do not make another run ...
    assert config(judge("a"), name="renamed").fingerprint == base.fingerprint
    assert config(judge("a", concurrency=16, timeout=5.0)).fingerprint == base.fingerprint
    # ... the prompt, the sampling, the mode and the items do.
    changed = [
        RunConfig(dataset="toy", template="test", template_text=TEMPLATE_TEXT + "# edited\n",
                  judges=(judge("a"),), mode=ScoringMode.LOGPROB, top_k=0),
        config(judge("a", sampling=Sampling(seed=1))),
        config(judge("a"), personas=(PersonaSpec("p", "Be harsh."),)),
        config(judge("a"), personas=(PersonaSpec("p", "Be kind."),)),
        config(judge("a"), mode=ScoringMode.GENERATE),
        config(judge("a"), top_k=3),
        config(judge("a"), subset="open"),
        config(judge("a"), repeats=2),
        config(judge("a"), kpi="follow-up"),
    ]
    prints = {c.fingerprint for c in changed}
    assert base.fingerprint not in prints and len(prints) == len(changed)


def test_persona_sweep_expands_into_judge_variants() -> None:
    cfg = config(judge("a"), judge("b"), personas=(None, PersonaSpec("critic", "Be harsh.")))
    assert [v.label for v in cfg.variants()] == ["a", "a@critic", "b", "b@critic"]
    assert [v.label for v in config(judge("a")).variants()] == ["a"]


def test_config_errors_are_clear() -> None:
    with pytest.raises(ConfigError, match="same judge twice"):
        config(judge("a"), judge("a"))
    with pytest.raises(ConfigError, match="repeats"):
        config(repeats=0)
    with pytest.raises(ConfigError, match="unknown subset"):
        config(subset="nonsense")
    with pytest.raises(ConfigError, match="no item 'zz'"):
        config(item_ids=("zz",)).select_items(make_dataset())


def test_items_are_selected_by_subset_ids_and_limit() -> None:
    ds = make_dataset(3, 2)
    assert [e.id for e in config(item_ids=("g2c1", "g0c0")).select_items(ds)] == ["g0c0", "g2c1"]
    assert [e.id for e in config(limit=3).select_items(ds)] == ["g0c0", "g0c1", "g1c0"]


def test_candidates_of_one_context_are_ordered_together() -> None:
    ds = make_dataset(3, 2, interleave=True)
    assert [e.id for e in ds] == ["g0c0", "g1c0", "g2c0", "g0c1", "g1c1", "g2c1"]
    assert [e.id for e in order_for_prefix_reuse(ds)] == ["g0c0", "g0c1", "g1c0", "g1c1", "g2c0", "g2c1"]


# -- full runs ---------------------------------------------------------------------------------


async def test_a_full_run_stores_every_judgment_once(store: RunStore) -> None:
    ds = make_dataset(3, 2)
    cfg = config(judge("a"), judge("b"), personas=(None, PersonaSpec("critic", "Be harsh.")), repeats=2)
    backends = {"a": FakeBackend("a"), "b": FakeBackend("b")}
    summary = await engine(cfg, ds, backends, store).run()
    total = 2 * 2 * 6 * 2
    assert (summary.status, summary.total, summary.done, summary.failures) == ("finished", total, total, 0)
    assert summary.backend_calls == total and summary.cached == 0 and not summary.resumed
    keys = row_keys(store, summary.run_id)
    assert len(keys) == len(set(keys)) == total
    assert summary.per_judge == {"a": (12, 0), "a@critic": (12, 0), "b": (12, 0), "b@critic": (12, 0)}
    assert len(backends["a"].requests) == len(backends["b"].requests) == total // 2
    record = store.runs.get_run(summary.run_id)
    assert record.status == "finished" and record.total == total
    assert RunConfig.from_dict(record.config) == cfg

    table = store.judgments.load_judgments(summary.run_id)
    j = table["a@critic"]["g1c0"]
    assert j.score is not None and 1 <= j.score <= 5 and j.normalized == pytest.approx((j.score - 1) / 4)
    assert j.distribution and j.prompt_tokens > 0
    # The persona reached the prompt; repeats use seed + r and are stored as such.
    critic_prompts = [r for r in backends["a"].requests if r.prompt.messages[0].content == "Be harsh."]
    assert len(critic_prompts) == 12
    seeds = sorted({(r.repeat, r.seed) for r in backends["a"].requests})
    assert seeds == [(0, 0), (1, 1)]
    assert store.judgments.load_repeats(summary.run_id)["a"]["g0c0"][1].sampling["seed"] == 1


async def test_requests_are_ordered_for_prefix_reuse(store: RunStore) -> None:
    ds = make_dataset(3, 2, interleave=True)
    backend = FakeBackend("a", max_concurrency=1)
    await engine(config(judge("a"), repeats=2, personas=(PersonaSpec("p", "P."), PersonaSpec("q", "Q."))),
                 ds, {"a": backend}, store).run()
    order = [(r.prompt.messages[0].content, r.item_id, r.repeat) for r in backend.requests]
    # Contexts in the seeded random order, the candidates of each together (core/judges/run/stopping.py).
    items = [ex.id for ex in seeded_context_order(ds)]
    assert sorted(items) == ["g0c0", "g0c1", "g1c0", "g1c1", "g2c0", "g2c1"]
    assert all(items[k][:2] == items[k + 1][:2] for k in (0, 2, 4))
    assert order == [(p, i, r) for p in ("P.", "Q.") for i in items for r in (0, 1)]


async def test_concurrency_limit_is_respected_per_judge(store: RunStore) -> None:
    in_flight = {"a": 0, "b": 0}
    peak = {"a": 0, "b": 0, "both": 0}

    def tracker(name: str):
        async def delay(request: JudgeRequest) -> None:
            in_flight[name] += 1
            peak[name] = max(peak[name], in_flight[name])
            peak["both"] = max(peak["both"], in_flight["a"] + in_flight["b"])
            for _ in range(3):  # yield to the loop so other requests can start
                await asyncio.sleep(0)
            in_flight[name] -= 1
        return delay

    backends = {"a": FakeBackend("a", max_concurrency=3, delay=tracker("a")),
                "b": FakeBackend("b", max_concurrency=2, delay=tracker("b"))}
    summary = await engine(config(judge("a"), judge("b")), make_dataset(5, 2), backends, store).run()
    assert summary.done == 20
    assert peak["a"] == 3 and peak["b"] == 2 and peak["both"] == 5


async def test_failures_are_stored_counted_and_the_run_carries_on(store: RunStore) -> None:
    backend = FakeBackend("a", fail_every=4, garbage_every=5, max_concurrency=1)
    events: list[Any] = []
    eng = engine(config(judge("a")), make_dataset(5, 2), {"a": backend}, store)
    eng.subscribe(events.append)
    summary = await eng.run()
    assert summary.status == "finished" and summary.done == 10
    assert summary.failures == 4  # requests 4 and 8 raised, 5 and 10 answered garbage
    table = store.judgments.load_judgments(summary.run_id)["a"]
    failed = {i: j for i, j in table.items() if j.failed}
    assert len(failed) == 4
    raised = [j for j in failed.values() if "injected failure" in (j.error or "")]
    garbage = [j for j in failed.values() if j.raw_output == GARBAGE_OUTPUT]
    assert len(raised) == 2 and all(j.raw_output == "" for j in raised)
    assert len(garbage) == 2 and all(j.error for j in garbage)
    assert [e for e in events if isinstance(e, RunProgress)][-1].failures == 4
    # Resuming the finished run retries only the failed requests (not the unparseable answers).
    retry = FakeBackend("a")
    again = await engine(config(judge("a")), make_dataset(5, 2), {"a": retry}, store,
                         run_id=summary.run_id, use_cache=False).run()
    assert len(retry.requests) == 2 and again.resumed
    assert again.failures == 2 and store.judgments.count_judgments(summary.run_id) == 10


async def test_a_scoring_error_keeps_the_raw_output(store: RunStore) -> None:
    def broken_scorer(request: JudgeRequest, result: BackendResult, judge: str):
        raise ZeroDivisionError("division by zero")

    summary = await engine(config(judge("a")), make_dataset(1, 1), {"a": FakeBackend("a")}, store,
                           scorer=broken_scorer).run()
    j = store.judgments.load_judgments(summary.run_id)["a"]["g0c0"]
    assert j.failed and j.error == "scoring failed: ZeroDivisionError: division by zero" and j.raw_output


async def test_a_hung_request_times_out_as_a_failed_judgment(store: RunStore) -> None:
    never = asyncio.Event()

    async def hang(request: JudgeRequest) -> None:
        if request.item_id == "g0c1":
            await never.wait()

    summary = await engine(config(judge("a")), make_dataset(1, 2), {"a": FakeBackend("a", delay=hang)}, store,
                           request_timeout_s=0.05).run()
    table = store.judgments.load_judgments(summary.run_id)["a"]
    assert table["g0c1"].error == "no answer within 0.05 s" and not table["g0c0"].failed


async def test_check_mode_fails_fast_before_anything_is_sent(store: RunStore) -> None:
    ok, refusing = FakeBackend("a"), FakeBackend("b", unsupported_modes=(ScoringMode.LOGPROB,))
    events: list[Any] = []
    eng = engine(config(judge("a"), judge("b")), make_dataset(), {"a": ok, "b": refusing}, store)
    eng.subscribe(events.append)
    with pytest.raises(BackendError, match="cannot serve mode logprob"):
        await eng.run()
    assert not ok.requests and not refusing.requests
    assert store.runs.list_runs() == []
    # The phases say what it waited on (preparing, then loading each judge) before the refusal.
    assert [e.text for e in events[:-1]] == ["preparing 12 prompts", "loading judge a", "loading judge b"]
    assert isinstance(events[-1], RunFailed) and "logprob" in events[-1].error


async def test_a_missing_backend_is_a_config_error(store: RunStore) -> None:
    with pytest.raises(ConfigError, match="no backend given for judge 'b'"):
        await engine(config(judge("a"), judge("b")), make_dataset(), {"a": FakeBackend("a")}, store).run()


# -- resume and cache ---------------------------------------------------------------------------


async def test_cancel_midway_then_resume_does_only_the_rest(store: RunStore) -> None:
    ds = make_dataset(4, 3)
    cfg = config(judge("a"), repeats=2)
    first = FakeBackend("a", max_concurrency=1)
    eng = engine(cfg, ds, {"a": first}, store)
    events: list[Any] = []

    def stop_after_five(event: Any) -> None:
        events.append(event)
        if isinstance(event, JudgmentScored) and event.done == 5:
            eng.cancel()

    eng.subscribe(stop_after_five)
    summary = await eng.run()
    assert summary.status == "cancelled" and summary.done == 5
    assert store.runs.get_run(summary.run_id).status == "cancelled"
    assert store.judgments.count_judgments(summary.run_id) == 5
    assert isinstance(events[-1], RunFinished) and events[-1].status == "cancelled"

    second = FakeBackend("a")
    resumed = await engine(cfg, ds, {"a": second}, store).run()
    assert resumed.run_id == summary.run_id and resumed.resumed and resumed.status == "finished"
    assert len(second.requests) == 24 - 5
    keys = row_keys(store, summary.run_id)
    assert len(keys) == len(set(keys)) == 24
    assert {(r.item_id, r.repeat) for r in second.requests}.isdisjoint(
        {(r.item_id, r.repeat) for r in first.requests[:5]})


async def test_cancel_from_another_thread(store: RunStore) -> None:
    async def cancel_on_the_third(request: JudgeRequest) -> None:
        if len(backend.requests) == 3:
            await asyncio.to_thread(eng.cancel)  # as a UI thread would

    backend = FakeBackend("a", max_concurrency=1, delay=cancel_on_the_third)
    eng = engine(config(judge("a")), make_dataset(4, 3), {"a": backend}, store)
    summary = await eng.run()
    assert summary.status == "cancelled" and eng.cancelled
    assert summary.done == store.judgments.count_judgments(summary.run_id) < 12


async def test_cancelling_the_task_marks_the_run_cancelled(store: RunStore) -> None:
    ds = make_dataset(4, 3)
    cfg = config(judge("a"))
    eng = engine(cfg, ds, {"a": FakeBackend("a", max_concurrency=2)}, store)
    task = asyncio.ensure_future(eng.run())
    eng.subscribe(lambda e: task.cancel() if isinstance(e, JudgmentScored) and e.done == 3 else None)
    with pytest.raises(asyncio.CancelledError):
        await task
    (record,) = store.runs.list_runs()
    assert record.status == "cancelled" and 3 <= record.judgments < 12
    done_before = record.judgments
    again = FakeBackend("a")
    await engine(cfg, ds, {"a": again}, store).run()
    assert len(again.requests) == 12 - done_before and store.judgments.count_judgments(record.id) == 12


class Crash(BaseException):
    """Stands for the process dying: not an Exception, so nothing records it as a failed judgment."""


async def test_a_crash_inside_the_backend_leaves_a_resumable_run(store: RunStore) -> None:
    ds = make_dataset(3, 3)
    cfg = config(judge("a"))

    async def crash_on_the_fourth(request: JudgeRequest) -> None:
        if len(crashing.requests) == 4:
            raise Crash()

    crashing = FakeBackend("a", max_concurrency=1, delay=crash_on_the_fourth)
    events: list[Any] = []
    eng = engine(cfg, ds, {"a": crashing}, store)
    eng.subscribe(events.append)
    with pytest.raises(Crash):
        await eng.run()
    (record,) = store.runs.list_runs()
    assert record.status == "failed" and record.judgments == 3
    assert isinstance(events[-1], RunFailed) and events[-1].run_id == record.id
    fresh = FakeBackend("a")
    summary = await engine(cfg, ds, {"a": fresh}, store).run()
    assert summary.run_id == record.id and len(fresh.requests) == 6
    assert len(set(row_keys(store, record.id))) == store.judgments.count_judgments(record.id) == 9


KILL_SCRIPT = textwrap.dedent("""
    import asyncio, os, sys
    sys.path.insert(0, {test_dir!r})
    from test_engine import config, engine, judge, make_dataset
    from dialjudge.core.judges.backends.fake import FakeBackend
    from dialjudge.core.judges.run.events import JudgmentScored
    from dialjudge.core.judges.store.run_store import RunStore

    def die(event):
        if isinstance(event, JudgmentScored) and event.done == 7:
            os._exit(9)  # no cleanup at all, as when the process is killed

    async def main():
        store = RunStore({db!r})
        eng = engine(config(judge("a"), repeats=2), make_dataset(4, 3), {{"a": FakeBackend("a", max_concurrency=1)}}, store,
                     write_interval_s={interval!r})
        eng.subscribe(die)
        await eng.run()

    asyncio.run(main())
""")


@pytest.mark.parametrize("interval", [0.0, 60.0])
async def test_a_killed_process_resumes_without_redoing_or_duplicating(tmp_path: Path, interval: float) -> None:
    """Killed at the 7th judgment: with every judgment committed at once (interval 0), all 7 are stored;
    with commits batched (a fast judge), those not yet committed are lost and only those are asked again."""
    db = tmp_path / "runs.sqlite3"
    script = KILL_SCRIPT.format(test_dir=str(Path(__file__).parent), db=str(db), interval=interval)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)})
    assert proc.returncode == 9, proc.stderr
    with RunStore(db) as store:
        (record,) = store.runs.list_runs()
        # The first judgment is committed at once (no commit yet to wait for); within a minute the next six wait.
        stored = 7 if interval == 0 else 1
        assert record.status == "running" and record.judgments == stored
        backend = FakeBackend("a")
        summary = await engine(config(judge("a"), repeats=2), make_dataset(4, 3), {"a": backend}, store).run()
        assert summary.run_id == record.id and summary.resumed
        assert len(backend.requests) == 24 - stored
        keys = row_keys(store, record.id)
        assert len(keys) == len(set(keys)) == 24


async def test_an_identical_second_run_is_answered_from_the_cache(store: RunStore) -> None:
    ds = make_dataset(3, 2)
    cfg = config(judge("a"), repeats=2)
    first = await engine(cfg, ds, {"a": FakeBackend("a")}, store).run()
    again = FakeBackend("a")
    second = await engine(cfg, ds, {"a": again}, store).run()
    assert second.run_id != first.run_id and not second.resumed
    assert again.requests == [] and again.opened == 0
    assert second.cached == second.done == 12 and second.backend_calls == 0
    one, two = store.judgments.load_repeats(first.run_id)["a"], store.judgments.load_repeats(second.run_id)["a"]
    assert all(j.cached for by_repeat in two.values() for j in by_repeat.values())
    assert {(i, r, j.score) for i, b in one.items() for r, j in b.items()} == \
        {(i, r, j.score) for i, b in two.items() for r, j in b.items()}

    # Another model identity, or switching the cache off, asks the backend again.
    other = FakeBackend("a", identity="fake:another-model")
    await engine(cfg, ds, {"a": other}, store).run()
    assert len(other.requests) == 12
    forced = FakeBackend("a")
    await engine(cfg, ds, {"a": forced}, store, use_cache=False).run()
    assert len(forced.requests) == 12


# -- events -------------------------------------------------------------------------------------


class ManualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_event_sequence_and_progress_throttling(store: RunStore) -> None:
    clock = ManualClock()

    async def tick(request: JudgeRequest) -> None:
        clock.now += 0.125

    eng = engine(config(judge("a")), make_dataset(4, 2), {"a": FakeBackend("a", max_concurrency=1, delay=tick)},
                 store, clock=clock, progress_interval_s=0.2, progress_every=1000)
    events: list[Any] = []
    eng.subscribe(events.append)
    summary = await eng.run()

    phases = [e for e in events if isinstance(e, RunPhase)]
    assert [(p.text, p.judge) for p in phases] == [
        ("preparing 8 prompts", ""), ("loading judge a", "a"), ("waiting for the first answer of judge a", "a")]
    # The loading phases come before the run starts; the wait for the first answer right after it.
    assert events.index(phases[1]) < events.index(next(e for e in events if isinstance(e, RunStarted)))
    events = [e for e in events if not isinstance(e, RunPhase)]
    assert isinstance(events[0], RunStarted) and events[0] == RunStarted(summary.run_id, 8, 0, False)
    assert isinstance(events[-1], RunFinished) and events[-1].status == "finished"
    assert events[-1].summary == summary
    scored = [e for e in events if isinstance(e, JudgmentScored)]
    assert [e.done for e in scored] == list(range(1, 9)) and all(e.total == 8 for e in scored)
    progress = [e for e in events if isinstance(e, RunProgress)]
    # 0.125 s per judgment and at most one report per 0.2 s: after judgments 2, 4, 6, 8, then the final one.
    assert [p.done for p in progress] == [2, 4, 6, 8, 8]
    assert progress[0].items_per_s == pytest.approx(8.0) and progress[0].eta_s == pytest.approx(0.75)
    assert progress[0].tokens_per_s > 0
    assert progress[-1].eta_s == 0.0
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("RunProgress") > kinds.index("JudgmentScored")


async def test_progress_every_n_judgments_with_a_frozen_clock(store: RunStore) -> None:
    eng = engine(config(judge("a")), make_dataset(4, 2), {"a": FakeBackend("a")}, store,
                 clock=ManualClock(), progress_every=3)
    progress: list[RunProgress] = []
    unsubscribe_other = eng.subscribe(lambda e: None)
    eng.subscribe(lambda e: progress.append(e) if isinstance(e, RunProgress) else None)
    unsubscribe_other()
    await eng.run()
    assert [p.done for p in progress] == [3, 6, 8]
    assert progress[0].items_per_s == 0.0 and progress[0].eta_s is None  # no time has passed


async def test_a_resumed_run_starts_from_what_was_done(store: RunStore) -> None:
    ds = make_dataset(2, 2)
    eng = engine(config(judge("a")), ds, {"a": FakeBackend("a", max_concurrency=1)}, store)
    eng.subscribe(lambda e: eng.cancel() if isinstance(e, JudgmentScored) and e.done == 1 else None)
    await eng.run()
    events: list[Any] = []
    eng2 = engine(config(judge("a")), ds, {"a": FakeBackend("a")}, store)
    eng2.subscribe(lambda e: None if isinstance(e, RunPhase) else events.append(e))
    await eng2.run()
    assert isinstance(events[0], RunStarted) and (events[0].done, events[0].total, events[0].resumed) == (1, 4, True)
    assert [e.done for e in events if isinstance(e, JudgmentScored)] == [2, 3, 4]


async def test_resuming_a_run_of_another_config_is_refused(store: RunStore) -> None:
    summary = await engine(config(judge("a")), make_dataset(1, 1), {"a": FakeBackend("a")}, store).run()
    with pytest.raises(ConfigError, match="different configuration"):
        await engine(config(judge("a"), repeats=2), make_dataset(1, 1), {"a": FakeBackend("a")}, store,
                     run_id=summary.run_id).run()


async def test_backends_are_closed_only_when_asked(store: RunStore) -> None:
    kept, closed = FakeBackend("a"), FakeBackend("a")
    await engine(config(judge("a")), make_dataset(1, 1), {"a": kept}, store).run()
    await engine(config(judge("a")), make_dataset(1, 1), {"a": closed}, store, close_backends=True,
                 use_cache=False).run()
    assert (kept.opened, kept.closed) == (1, 0)
    assert (closed.opened, closed.closed) == (1, 1)


# -- with the real templates, personas, parsing and scoring -------------------------------------


def _incar_dataset() -> Dataset:
    from importlib import resources

    from dialjudge.core.loaders.native import read_native

    return read_native(resources.files("dialjudge.datasets") / "sample_incar_kpi.jsonl")


async def test_end_to_end_inca_persona_sweep_and_max_vote(store: RunStore) -> None:
    """Paper 002's setting on the bundled illustrative data: three judges x two personas, binary
    JSON answers parsed from generated text, then each judge and the Max-Vote pool against humans."""
    from dialjudge.core.judges.post_run.pool import pool_report
    from dialjudge.core.judges.prompts.personas import load_personas
    from dialjudge.core.judges.prompts.templates import get_template
    from dialjudge.core.model import Aggregation

    ds = _incar_dataset()
    kpi = "harmful-input"
    human = {ex.id: ex.human(kpi, Aggregation.MAJORITY) for ex in ds if kpi in ex.ratings}
    ambassador = load_personas()["brand-ambassador"]
    cfg = RunConfig.build(ds, get_template("inca-kpi"), [JudgeConfig(n, "fake") for n in ("oracle", "yes", "no")],
                          personas=[None, ambassador], kpi=kpi, quality=kpi, subset=f"tag:kpi:{kpi}",
                          mode=ScoringMode.GENERATE)
    backends = {
        "oracle": FakeBackend("oracle", score_fn=lambda item, prompt: float(human[item])),
        "yes": FakeBackend("yes", score_fn=lambda item, prompt: 1.0),
        "no": FakeBackend("no", score_fn=lambda item, prompt: 0.0),
    }
    summary = await RunEngine(cfg, ds, backends, store).run()
    assert summary.done == summary.total == 15 * 3 * 2 and summary.failures == 0

    prompt = backends["oracle"].requests[-1].prompt
    assert prompt.messages[0].content.startswith(ambassador.text)
    assert f"KPI {kpi} Score" in prompt.text
    assert RunConfig.from_dict(store.runs.get_run(summary.run_id).config).template_text == cfg.template_text

    report = pool_report(store.judgments.load_judgments(summary.run_id), ds, kpi,
                         judges=["oracle", "yes", "no"])
    assert report.judges["oracle"].percent == 100.0 and report.judges["oracle"].kappa == pytest.approx(1.0)
    positives = sum(1 for v in human.values() if v == 1)
    assert report.judges["yes"].percent == pytest.approx(100 * positives / 15)
    assert report.judges["yes"].kappa == pytest.approx(0.0)
    # With one judge always yes and one always no, the oracle casts the deciding vote.
    assert report.pool.percent == 100.0 and report.judge_ties == []


def test_fewshot_setting_round_trips_through_the_run_snapshot() -> None:
    for text in ("none", "random:3@7", "bm25-both:4", "manual:a,b"):
        setting = FewShotSetting.parse(text)
        assert FewShotSetting.from_dict(json.loads(json.dumps(setting.to_dict()))) == setting
        assert setting.spec == text
    assert not FewShotSetting.parse("none").enabled and FewShotSetting.parse("bm25-both:4").enabled


async def test_end_to_end_fewshot_logprob_repeats_and_stability(store: RunStore) -> None:
    """The likert-1to5 template with BM25 few-shot examples, logprob scoring and 3 stability repeats."""
    from importlib import resources

    from dialjudge.core.judges.post_run.pool import stability
    from dialjudge.core.judges.prompts.templates import get_template
    from dialjudge.core.loaders.native import read_native

    ds = read_native(resources.files("dialjudge.datasets") / "sample_dialogues.jsonl")
    cfg = RunConfig.build(ds, get_template("likert-1to5"), [JudgeConfig("fake", "fake", sampling=Sampling(seed=10))],
                          fewshot=FewShotSetting.parse("bm25-context:2"), quality="coherence", aspect="coherence",
                          mode=ScoringMode.LOGPROB, top_k=0, repeats=3, limit=8)
    backend = FakeBackend("fake", max_concurrency=1)
    summary = await RunEngine(cfg, ds, {"fake": backend}, store).run()
    assert summary.done == 8 * 3 and summary.failures == 0
    first = backend.requests[0]
    assert "Examples of rated responses" in first.prompt.text and first.prompt.output.answer_prefix == "Score:"
    assert [r.seed for r in backend.requests[:3]] == [10, 11, 12]
    # Each item's three repeats share one prompt (back to back, so a local model reuses its cache).
    assert len({r.prompt.hash for r in backend.requests[:3]}) == 1

    result = stability(store.judgments.load_repeats(summary.run_id), binary=False, dataset=ds, quality="coherence")
    fake = result["fake"]
    assert fake.repeats == 3 and fake.items == 8
    assert fake.spearman is not None and -1 <= fake.spearman <= 1
    assert len(fake.human.values) == 3 and fake.human.std is not None


# -- stopping while requests are in flight or the judges still load ---------------------------

async def test_requests_failing_after_a_cancel_are_dropped_not_stored(store: RunStore) -> None:
    """A quit cancels the run while requests are in flight; what they raise then is no judge failure."""
    async def fail_once_cancelled(request: JudgeRequest) -> None:
        if len(backend.requests) == 4:
            eng.cancel()
            raise BackendError("connection closed while the app quit")

    backend = FakeBackend("a", max_concurrency=1, delay=fail_once_cancelled)
    eng = engine(config(judge("a")), make_dataset(4, 3), {"a": backend}, store)
    summary = await eng.run()
    assert summary.status == "cancelled" and summary.failures == 0
    record = store.runs.get_run(summary.run_id)
    assert (record.status, record.judgments, record.failures) == ("cancelled", 3, 0)


class ThreadedJudge(FakeBackend):
    """Computes on a thread of its own, as the llama backend does: cancelling the run's task does
    not stop a computation in flight, and closing waits for it. Request ``long_on`` computes until
    interrupted (the stand-in for a long llama.cpp decode); ``interrupt`` stops it midway."""

    def __init__(self, name: str, *, long_on: int) -> None:
        super().__init__(name, max_concurrency=1)
        self.long_on = long_on
        self.interrupted = threading.Event()
        self.computing = threading.Event()
        self.interrupts = 0
        self._pool: ThreadPoolExecutor | None = None

    async def open(self) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1)
        await super().open()

    def interrupt(self) -> None:
        self.interrupts += 1
        self.interrupted.set()

    def clear_interrupt(self) -> None:
        self.interrupted.clear()

    async def complete(self, request: JudgeRequest) -> BackendResult:
        nth = len(self.requests) + 1
        assert self._pool is not None, "opened first"
        await asyncio.get_running_loop().run_in_executor(self._pool, self._compute, nth)
        return await super().complete(request)

    def _compute(self, nth: int) -> None:
        if self.interrupted.is_set():
            raise RequestInterrupted("interrupted")
        if nth == self.long_on:
            self.computing.set()
            if not self.interrupted.wait(30):  # bounded: a test that fails, not one that hangs
                raise AssertionError("the long computation was never interrupted")
            raise RequestInterrupted("interrupted")

    async def close(self) -> None:
        if self._pool is not None:
            await asyncio.to_thread(self._pool.shutdown, True)  # waits for the computation in flight
            self._pool = None
        await super().close()


async def test_a_cancel_interrupts_the_computation_in_flight_which_is_dropped_not_failed(store: RunStore) -> None:
    """The app's quit: the run is cancelled from the UI thread while a local model computes; the
    engine interrupts it, so closing the judge need not wait for it, and nothing is stored as failed."""
    backend = ThreadedJudge("a", long_on=3)
    eng = engine(config(judge("a")), make_dataset(4, 3), {"a": backend}, store, close_backends=True)
    task = asyncio.ensure_future(eng.run())
    assert await asyncio.to_thread(backend.computing.wait, 10)
    await asyncio.to_thread(eng.cancel)  # as a UI thread would
    summary = await asyncio.wait_for(task, 10)  # closed the judge: the computation has stopped
    assert backend.interrupts >= 1 and backend.closed == 1 and backend._pool is None
    assert summary.status == "cancelled" and summary.failures == 0 and summary.done == 2
    record = store.runs.get_run(summary.run_id)
    assert (record.status, record.judgments, record.failures) == ("cancelled", 2, 0)
    assert store.judgments.failure_reasons(summary.run_id) == []
    # The next run on the same judge serves requests again, and resumes with the dropped item.
    again = engine(config(judge("a")), make_dataset(4, 3), {"a": backend}, store)
    backend.long_on = 0
    resumed = await again.run()
    assert resumed.status == "finished" and resumed.run_id == summary.run_id and resumed.resumed
    assert resumed.done == 12 and resumed.failures == 0 and not backend.interrupted.is_set()


async def test_cancelling_the_task_interrupts_the_computation_in_flight(store: RunStore) -> None:
    """The CLI's Ctrl+C: asyncio.run cancels the run's task (not engine.cancel); closing the judge
    still does not wait for the computation in flight, and nothing is stored as failed."""
    backend = ThreadedJudge("a", long_on=3)
    eng = engine(config(judge("a")), make_dataset(4, 3), {"a": backend}, store, close_backends=True)
    task = asyncio.ensure_future(eng.run())
    assert await asyncio.to_thread(backend.computing.wait, 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert backend.interrupts >= 1 and backend.closed == 1
    (record,) = store.runs.list_runs()
    assert (record.status, record.judgments, record.failures) == ("cancelled", 2, 0)


async def test_an_interrupted_request_stops_the_run_and_is_not_stored_as_failed(store: RunStore) -> None:
    """A backend interrupted from elsewhere (no cancel of this run): its request was dropped, not failed."""
    backend = ThreadedJudge("a", long_on=3)
    eng = engine(config(judge("a")), make_dataset(4, 3), {"a": backend}, store)
    task = asyncio.ensure_future(eng.run())
    assert await asyncio.to_thread(backend.computing.wait, 10)
    backend.interrupt()
    summary = await asyncio.wait_for(task, 10)
    assert summary.status == "cancelled" and summary.failures == 0 and summary.done == 2
    assert store.runs.get_run(summary.run_id).status == "cancelled"  # resumable
    await backend.close()


async def test_an_interpreter_shutdown_error_stops_the_run_and_is_not_stored(store: RunStore) -> None:
    """What a thread pool raises once Python is exiting: the process ends, the judge did not fail."""
    async def exiting(request: JudgeRequest) -> None:
        if len(backend.requests) >= 3:
            raise RuntimeError("cannot schedule new futures after interpreter shutdown")

    backend = FakeBackend("a", max_concurrency=2, delay=exiting)
    summary = await engine(config(judge("a")), make_dataset(4, 3), {"a": backend}, store).run()
    assert summary.status == "cancelled" and summary.failures == 0 and summary.done == 2
    assert store.judgments.failure_reasons(summary.run_id) == []
    assert store.runs.get_run(summary.run_id).status == "cancelled"


async def test_a_cancel_while_the_judge_loads_ends_the_run_without_waiting_for_the_load(store: RunStore) -> None:
    loading = asyncio.Event()

    class SlowToLoad(FakeBackend):
        async def open(self) -> None:
            loading.set()
            await asyncio.Event().wait()  # a model that would load for a long time

    backend = SlowToLoad("a")
    eng = engine(config(judge("a")), make_dataset(2, 2), {"a": backend}, store)
    task = asyncio.ensure_future(eng.run())
    await asyncio.wait_for(loading.wait(), 10)
    await asyncio.to_thread(eng.cancel)  # from the UI thread, as the app's quit does
    summary = await asyncio.wait_for(task, 10)
    assert summary.status == "cancelled" and summary.done == 0 and backend.requests == []
    assert store.runs.list_runs() == []  # nothing was asked, so nothing was recorded
    # The run's lock is released: the same configuration can run at once.
    again = await engine(config(judge("a")), make_dataset(2, 2), {"a": FakeBackend("a")}, store).run()
    assert again.status == "finished" and again.done == 4


async def test_a_cancelled_run_records_its_wall_time(store: RunStore) -> None:
    clock = iter(float(t) for t in range(1000))
    backend = FakeBackend("a", max_concurrency=1)
    eng = engine(config(judge("a")), make_dataset(4, 3), {"a": backend}, store, clock=lambda: next(clock))
    eng.subscribe(lambda e: eng.cancel() if isinstance(e, JudgmentScored) and e.done == 2 else None)
    summary = await eng.run()
    assert summary.status == "cancelled"
    assert store.runs.get_run(summary.run_id).wall_s > 0
