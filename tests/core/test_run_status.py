"""RunStatus, RunState folding a run's events, and the status line the app and the CLI share."""

from __future__ import annotations

from pathlib import Path

from dialjudge.core.api.runs import execute_run
from dialjudge.core.config import JudgeConfig
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.run.events import (
    JudgmentScored,
    RunFailed,
    RunFinished,
    RunPhase,
    RunProgress,
    RunStarted,
    RunSummary,
)
from dialjudge.core.judges.store.run_store import RUN_STATUSES, RunStore
from dialjudge.core.judges.store.status import Part, RunState, RunStatus, problem_lines, status_line, status_text
from dialjudge.core.judges.types import Judgment, ScoringMode


def test_status_values_are_the_stores_and_read_as_their_value():
    assert RUN_STATUSES == ("running", "finished", "cancelled", "failed", "awaiting", "interrupted")
    assert RunStatus("cancelled") is RunStatus.CANCELLED and RunStatus.CANCELLED == "cancelled"
    assert f"{RunStatus.FINISHED}" == str(RunStatus.FINISHED) == "finished"
    assert [s.stopped for s in RunStatus] == [False, True, True, True, True, True]


def test_a_run_folded_from_its_events_matches_the_store(tmp_path: Path):
    dataset = open_dataset("sample", remember=False)
    config = RunConfig.build(dataset, get_template("likert-1to5"), [JudgeConfig(name="fake", backend="fake")],
                             aspect="overall", quality="overall", mode=ScoringMode.GENERATE, limit=12)
    state = RunState()
    events: list[object] = []

    class Follow:
        """A RunDisplay that folds the events as the app and the command line do."""

        def on_event(self, event) -> None:
            events.append(event)
            state.apply(event)

    with RunStore(tmp_path / "runs.sqlite3") as store:
        backends = {"fake": FakeBackend(name="fake", fail_every=4)}
        summary = execute_run(config, dataset, store, backends, display=Follow())
        record = store.runs.get_run(summary.run_id)
    assert any(isinstance(e, RunProgress) for e in events)
    assert state.status is RunStatus.FINISHED is record.status and not state.active
    assert (state.run_id, state.done, state.total) == (record.id, record.judgments, record.total) == (
        summary.run_id, 12, 12)
    assert state.failures == record.failures == 3  # every fourth request fails
    assert state.summary == summary
    assert status_text(state, show_timings=False) == f"Run {record.id} finished · 12/12 judged · 3 failed"


def judgment(item_id: str, *, failed: bool) -> Judgment:
    return Judgment(item_id=item_id, judge="j", mode=ScoringMode.GENERATE, prompt_hash="h", raw_output="",
                    score=None if failed else 3.0, normalized=None if failed else 0.5,
                    error="no score found" if failed else None)


class ManualClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_status_line_by_hand():
    clock = ManualClock()
    state = RunState(clock=clock)
    assert status_line(state) == [("Run starting", Part.STATUS), (" · loading the judges…", Part.NOTE)]
    state.apply(RunPhase("loading judge smollm2", judge="smollm2"))
    clock.now += 12
    assert status_text(state) == "Run starting · loading judge smollm2… 0:12"
    clock.now += 1  # the elapsed time is read when the line is made: a timer redraws it
    assert status_text(state) == "Run starting · loading judge smollm2… 0:13"
    assert status_text(state, show_timings=False) == "Run starting · loading judge smollm2…"
    state.apply(RunStarted(run_id=4, total=10, done=2, resumed=True))
    assert state.phase is None
    clock.now += 5
    state.apply(JudgmentScored(judgment("a", failed=True), 3, 10))
    assert (status_line(state)[2][1], status_line(state)[2][0]) == (Part.FAILURES, " · 1 failed")
    # One judgment in 5 s, 7 left: 35 s, counting down as the next one is awaited.
    assert status_text(state) == "Run 4 running · 3/10 judged · 1 failed · ETA 0:35"
    clock.now += 2
    assert status_text(state) == "Run 4 running · 3/10 judged · 1 failed · ETA 0:33"
    assert status_text(state, show_timings=False) == "Run 4 running · 3/10 judged · 1 failed"
    clock.now -= 2
    state.apply(RunProgress(done=4, total=10, failures=1, cached=2, tokens_per_s=10.0, items_per_s=2.5, eta_s=125))
    # The engine's rate; the ETA is the moving one (the engine's only until a judgment was asked).
    assert status_text(state) == "Run 4 running · 4/10 judged · 1 failed · 2 from cache · 2.5 items/s · ETA 0:35"
    # A slow judge's rate as seconds per item, where "0.0 items/s" would say nothing.
    state.apply(RunProgress(done=4, total=10, failures=1, cached=2, tokens_per_s=1.0, items_per_s=0.02, eta_s=300))
    assert "· 50 s/item · ETA" in status_text(state)
    assert status_text(state, show_timings=False) == "Run 4 running · 4/10 judged · 1 failed · 2 from cache"
    summary = RunSummary(run_id=4, status=RunStatus.CANCELLED, total=10, done=4, failures=1, cached=2, backend_calls=2,
                         resumed=True, elapsed_s=1.0)
    state.apply(RunFinished(4, RunStatus.CANCELLED, summary))
    assert state.status is RunStatus.CANCELLED and not state.active
    assert status_text(state) == "Run 4 cancelled · 4/10 judged · 1 failed · 2 from cache"  # no rate once stopped
    state.apply(RunFailed("backend exploded", 4))
    assert state.status is RunStatus.FAILED
    assert status_line(state)[-1] == ("\nbackend exploded", Part.ERROR)


def test_problem_lines_by_hand():
    summary = RunSummary(run_id=3, status=RunStatus.FAILED, total=10, done=4, failures=4, cached=0, backend_calls=4,
                         resumed=False, elapsed_s=1.0,
                         failure_reasons=[("timeout", 1), ("the server refused the key (401)", 3)],
                         paused={"gpt": "judge gpt paused: the server refused the key (401)"},
                         truncated={"local": {"a": 2, "b": 5}})
    assert problem_lines(summary) == [
        ("judge gpt paused: the server refused the key (401)", Part.ERROR),
        ("judge local: the oldest turns of 2 dialogue(s) were left out to fit its context window "
         "(2–5 turn(s) each; the response and the instructions are never cut)", Part.NOTE),
        ("3 × the server refused the key (401)", Part.FAILURES),
        ("1 × timeout", Part.FAILURES),
    ]
    assert problem_lines(RunSummary(run_id=1, status=RunStatus.FINISHED, total=1, done=1, failures=0, cached=0,
                                    backend_calls=1, resumed=False, elapsed_s=0.1)) == []
