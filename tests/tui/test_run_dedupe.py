"""Starting a run identical to a finished one shows that run again (as `dialjudge judge` does) unless
"New run" is ticked; nothing identical is stored twice."""

from __future__ import annotations

from test_run_screen import choose_judges, open_run_screen
from textual.widgets import Checkbox, Input
from tui_helpers import SIZE, settle, toast_texts

from dialjudge.core.judges.run.events import RunStatus
from dialjudge.tui.app import make_app


async def start_five(pilot) -> None:
    screen = await open_run_screen(pilot)
    choose_judges(screen, "fake")
    screen.query_one("#run-limit", Input).value = "5"
    await pilot.press("ctrl+r")
    await settle(pilot)


async def test_an_identical_finished_run_is_shown_again_not_stored_twice(services):
    first = make_app(services=services)
    async with first.run_test(size=SIZE) as pilot:
        await start_five(pilot)
        run_id = first.runs.state.run_id
        assert first.runs.state.status is RunStatus.FINISHED and not first.runs.state.summary.shown_again

    # Another session, the same settings: run `run_id` is shown (its judges join the Scores), nothing is asked.
    asked: list[str] = []
    make_backend = services.session.make_backend

    def counting(config):
        backend = make_backend(config)
        original = backend.complete

        async def complete(request):
            asked.append(request.item_id)
            return await original(request)

        backend.complete = complete
        return backend

    again = make_app(services=services.with_backend_factory(counting))
    async with again.run_test(size=SIZE, notifications=True) as pilot:
        await start_five(pilot)
        state = again.runs.state
        assert state.run_id == run_id and state.status is RunStatus.FINISHED and state.summary.shown_again
        assert state.done == state.total == 5 and asked == []
        toasts = " ".join(toast_texts(again))
        assert f"Run {run_id} had finished with exactly these settings: shown again, nothing asked" in toasts
        assert "tick “New run”" in toasts
        assert f"fake#{run_id}" in again.workspace.evaluators
        with services.session.store() as store:
            assert [r.id for r in store.runs.list_runs()] == [run_id]
            assert store.runs.get_run(run_id).status == "finished"

        # Ticked, "New run" judges anew into a new run (answers come from the response cache).
        again.screen.query_one("#run-fresh", Checkbox).value = True
        await pilot.press("ctrl+r")
        await settle(pilot)
        fresh = again.runs.state
        assert fresh.run_id != run_id and fresh.status is RunStatus.FINISHED and not fresh.summary.shown_again
        with services.session.store() as store:
            assert sorted(r.id for r in store.runs.list_runs()) == [run_id, fresh.run_id]
