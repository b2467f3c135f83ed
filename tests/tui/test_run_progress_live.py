"""The Run screen's live progress: the judge's loading with the seconds it takes, and an ETA that moves
between judgments. A slow fake judge is held at each step by the test; time is the test's own clock."""

from __future__ import annotations

import asyncio
import threading
import time

from test_run_screen import choose_judges, open_run_screen
from textual.widgets import Input, Static
from tui_helpers import SIZE, WAIT_LIMIT_S, settle, static_text, wait_until

from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.run.events import RunStatus
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.scores import ScoresScreen


class ManualClock:
    """The app's and the engine's clock: time moves only when the test says."""

    def __init__(self) -> None:
        self.now = 1000.0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds


async def _until(event: threading.Event) -> None:
    """Wait on the engine's loop until the test sets ``event`` (bounded, so a broken test cannot hang)."""
    deadline = time.monotonic() + WAIT_LIMIT_S
    while not event.is_set():
        if time.monotonic() > deadline:
            raise TimeoutError("the test never released the fake judge")
        await asyncio.sleep(0.005)


class HeldJudge:
    """A fake judge whose loading, and each answer, waits until the test lets it go."""

    def __init__(self) -> None:
        self.loaded = threading.Event()
        self.answers = threading.Semaphore(0)
        self.all_answers = threading.Event()

    def release(self, answers: int = 1) -> None:
        for _ in range(answers):
            self.answers.release()

    def make(self, config):
        async def load() -> None:
            await _until(self.loaded)

        async def answer(request) -> None:
            deadline = time.monotonic() + WAIT_LIMIT_S
            while not (self.all_answers.is_set() or self.answers.acquire(blocking=False)):
                if time.monotonic() > deadline:
                    raise TimeoutError("the test never let the fake judge answer")
                await asyncio.sleep(0.005)

        return FakeBackend(name=config.name, open_delay=load, delay=answer, max_concurrency=1)


def progress_line(screen) -> str:
    return static_text(screen.query_one("#run-progress-text", Static))


async def test_the_loading_judge_and_a_moving_eta_show_on_the_run_screen(services_factory):
    clock, judge = ManualClock(), HeldJudge()
    services = services_factory(make_backend=judge.make, clock=clock, show_timings=True)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run_screen(pilot)
        choose_judges(screen, "fake")
        screen.query_one("#run-limit", Input).value = "5"
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: app.runs.state is not None and app.runs.state.phase == "loading judge fake",
                         "the run says the judge is loading")
        await wait_until(pilot, lambda: "Run starting · loading judge fake… 0:00" in progress_line(screen),
                         "the loading line shows")
        # No event arrives while a model loads: the line's timer alone moves the seconds on.
        clock.advance(12)
        await wait_until(pilot, lambda: "loading judge fake… 0:12" in progress_line(screen),
                         "the loading line shows 12 s")
        clock.advance(1)
        await wait_until(pilot, lambda: "loading judge fake… 0:13" in progress_line(screen),
                         "the loading line ticks to 13 s")

        judge.loaded.set()
        await wait_until(pilot, lambda: app.runs.state.status is RunStatus.RUNNING
                         and app.runs.state.phase == "waiting for the first answer of judge fake",
                         "the run started and waits for the first answer")
        await wait_until(pilot, lambda: "0/5 judged" in progress_line(screen)
                         and "waiting for the first answer of judge fake…" in progress_line(screen),
                         "the screen shows the wait for the first answer")
        assert "ETA ?" not in progress_line(screen)  # no estimate before anything was judged

        clock.advance(2)  # the first judgment takes 2 s
        judge.release()
        await wait_until(pilot, lambda: app.runs.state.done == 1, "the first judgment arrived")
        await wait_until(pilot, lambda: "1/5 judged" in progress_line(screen) and "ETA 0:08" in progress_line(screen),
                         "4 left at 2 s each")
        assert "waiting for the first answer" not in progress_line(screen)

        # Between judgments the estimate moves without any event: down a second per second...
        clock.advance(1)
        await wait_until(pilot, lambda: "ETA 0:07" in progress_line(screen), "the ETA counts down")
        # ...and up once this judgment takes longer than the first did: 3 left at (2 + 4) / 2 s each.
        clock.advance(3)
        await wait_until(pilot, lambda: "ETA 0:09" in progress_line(screen), "the ETA grows for a slow judgment")
        assert app.runs.state.done == 1  # nothing finished meanwhile

        judge.all_answers.set()
        await settle(pilot)
        assert app.runs.state.status is RunStatus.FINISHED
        line = progress_line(screen)
        assert "5/5 judged" in line and "ETA" not in line and "loading" not in line


async def test_the_progress_line_stays_still_without_timings(services_factory):
    # Snapshot tests turn timings off: the phase shows, but no seconds (nothing that varies run to run).
    clock, judge = ManualClock(), HeldJudge()
    services = services_factory(make_backend=judge.make, clock=clock)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run_screen(pilot)
        choose_judges(screen, "fake")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: progress_line(screen).strip() == "Run starting · loading judge fake…",
                         "the loading line shows without seconds")
        clock.advance(30)
        judge.loaded.set()
        judge.all_answers.set()
        await settle(pilot)
        assert app.runs.state.status is RunStatus.FINISHED


async def test_the_scores_status_line_follows_the_loading_too(services_factory):
    clock, judge = ManualClock(), HeldJudge()
    services = services_factory(make_backend=judge.make, clock=clock, show_timings=True)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run_screen(pilot)
        choose_judges(screen, "fake")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: app.runs.state is not None and app.runs.state.phase == "loading judge fake",
                         "the run says the judge is loading")
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, ScoresScreen), "the Scores screen is up")
        scores = app.screen
        clock.advance(21)
        await wait_until(pilot, lambda: "loading judge fake… 0:21" in static_text(scores.query_one("#scores-status")),
                         "the Scores status line shows the loading seconds")
        judge.loaded.set()
        judge.all_answers.set()
        await settle(pilot)
        assert app.runs.state.status is RunStatus.FINISHED
