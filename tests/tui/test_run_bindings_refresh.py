"""A run's progress events do not rebuild the footer: bindings refresh only when "Cancel run"
appears or goes (each refresh recomposes the footer's widgets, a UI stall in a long run)."""

from __future__ import annotations

from tui_helpers import SIZE, settle, wait_until

from dialjudge.core.judges.run.events import RunFailed, RunProgress, RunStarted
from dialjudge.tui.app import make_app
from dialjudge.tui.controllers.runs import RunEventReceived


async def test_progress_events_refresh_bindings_only_when_cancel_toggles(services, monkeypatch):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        refreshed: list[bool] = []
        original = app.refresh_bindings
        monkeypatch.setattr(app, "refresh_bindings", lambda: (refreshed.append(app.runs.active), original())[1])

        app.post_message(RunEventReceived(RunStarted(run_id=5, total=50)))
        await pilot.pause()
        assert refreshed == [True] and app.runs.active
        assert app.screen.active_bindings["escape"].enabled  # "Cancel run" is on offer
        for done in range(1, 30):
            app.post_message(RunEventReceived(RunProgress(done, 50, 0, 0, 100.0, 2.0, 1.0)))
            await pilot.pause()
        assert app.runs.state.done == 29
        assert refreshed == [True]  # no refresh for progress


async def test_events_queued_while_the_app_looks_again_soon_do_not_wake_it(services, monkeypatch):
    """After the app took every queued event it looks again in LOOK_AGAIN_S; events queued meanwhile wait for
    that look instead of each first one waking it (10,000 wakes in a 100,000-item run), and none is lost."""
    from dialjudge.tui.controllers.runs import RunEventsQueued

    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        wakes: list[int] = []
        original = app.post_message
        monkeypatch.setattr(app, "post_message",
                            lambda m: (wakes.append(1) if isinstance(m, RunEventsQueued) else None, original(m))[1])
        runs = app.runs
        runs.on_event(RunStarted(run_id=5, total=50))
        await wait_until(pilot, lambda: runs.active, "the run starts")
        assert len(wakes) == 1
        for done in (1, 2, 3):
            runs.on_event(RunProgress(done, 50, 0, 0, 100.0, 2.0, 1.0))
        assert len(wakes) == 1, "events queued before the app's next look woke it"
        await wait_until(pilot, lambda: runs.state.done == 3, "the next look applies them all")
        # The look after that finds none: the next event wakes the app again at once.
        await wait_until(pilot, lambda: not runs._look_due, "a look that finds nothing")
        runs.on_event(RunProgress(4, 50, 0, 0, 100.0, 2.0, 1.0))
        assert len(wakes) == 3
        await wait_until(pilot, lambda: runs.state.done == 4, "the woken app applies it")
        # The run's end does not wait for a look: the app applies it before the run's worker says it returned.
        runs.on_event(RunProgress(5, 50, 0, 0, 100.0, 2.0, 1.0))
        woken = len(wakes)
        runs.on_event(RunFailed("the judge broke", run_id=5))
        assert len(wakes) == woken + 1
        await wait_until(pilot, lambda: not runs.active, "the run's end is applied")
        assert runs.state.done == 5
