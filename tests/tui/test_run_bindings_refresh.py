"""A run's progress events do not rebuild the footer: bindings refresh only when "Cancel run"
appears or goes (each refresh recomposes the footer's widgets, a UI stall in a long run)."""

from __future__ import annotations

from tui_helpers import SIZE, settle

from dialjudge.core.judges.run.events import RunProgress, RunStarted
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
