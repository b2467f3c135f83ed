"""Quitting during a run: `q` asks, Ctrl+C and signals do not; the run is cancelled, never failed; the next launch
offers to resume it."""

from __future__ import annotations

import asyncio
import signal

from textual.widgets import SelectionList
from tui_helpers import SIZE, settle, wait_until

from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.quit_dialog import InterruptedRunDialog, QuitDialog
from dialjudge.tui.screens.run import RunScreen


def slow_backends(passing: int):
    """Fake judges answering ``passing`` requests at once, then each next one only when the gate opens
    (a slow judge: its requests are in flight when the app quits)."""
    gate = {"open": False, "answered": 0, "in_flight": 0}

    async def delay(request) -> None:
        if not gate["open"] and gate["answered"] >= passing:
            gate["in_flight"] += 1
            await asyncio.Event().wait()  # ends only by cancellation
        gate["answered"] += 1

    def make(config):
        return FakeBackend(name=config.name, delay=delay, max_concurrency=2)

    return gate, make


async def start_slow_run(pilot, passing: int = 5) -> None:
    app = pilot.app
    await settle(pilot)
    await pilot.press("j")
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, RunScreen)
    judges = screen.query_one("#run-judges", SelectionList)
    judges.deselect_all()
    judges.select("fake")
    await pilot.press("ctrl+r")
    await wait_until(pilot, lambda: app.runs.state is not None and app.runs.state.done >= passing
                     and app.runs.state.status == "running", f"{passing} judgments are stored")


def only_run(services):
    with services.session.store() as store:
        (record,) = store.runs.list_runs()
        return record, store.judgments.failure_reasons(record.id)


async def test_q_asks_and_enter_cancels_the_run_and_exits(services_factory):
    gate, make_backend = slow_backends(passing=5)
    services = services_factory(make_backend=make_backend)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await start_slow_run(pilot)
        await pilot.press("q")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, QuitDialog)
        assert "(5 of 60 judged) is in progress" in str(dialog.query_one("#quit-text").render())
        assert app.is_running and app.runs.active  # nothing happens before the answer
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.is_running, "the app has exited")
    record, failures = only_run(services)
    assert (record.status, record.judgments, record.failures) == ("cancelled", 5, 0)
    assert failures == [] and record.wall_s > 0
    assert gate["in_flight"] >= 1  # a request was in flight when the app quit, and it was dropped


async def test_y_confirms_and_escape_or_n_stays(services_factory):
    gate, make_backend = slow_backends(passing=3)
    services = services_factory(make_backend=make_backend)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await start_slow_run(pilot, passing=3)
        for stay in ("escape", "n"):
            await pilot.press("q")
            await pilot.pause()
            assert isinstance(app.screen, QuitDialog)
            await pilot.press(stay)
            await pilot.pause()
            assert isinstance(app.screen, RunScreen) and app.runs.active and app.is_running
        await pilot.press("q")
        await pilot.pause()
        await pilot.press("y")
        await wait_until(pilot, lambda: not app.is_running, "the app has exited")
    record, failures = only_run(services)
    assert record.status == "cancelled" and failures == []


async def test_q_without_a_run_exits_at_once(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("q")
        await wait_until(pilot, lambda: not app.is_running, "the app has exited")


async def test_ctrl_c_cancels_without_asking(services_factory):
    _, make_backend = slow_backends(passing=4)
    services = services_factory(make_backend=make_backend)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await start_slow_run(pilot, passing=4)
        app.set_focus(None)  # in a text field Ctrl+C copies
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: not app.is_running, "the app has exited")
    record, failures = only_run(services)
    assert (record.status, record.judgments, failures) == ("cancelled", 4, [])


async def test_sigterm_and_sighup_cancel_the_run_and_exit(services_factory, tmp_path):
    for signum in (signal.SIGTERM, signal.SIGHUP):
        _, make_backend = slow_backends(passing=2)
        services = services_factory(make_backend=make_backend).with_store_at(tmp_path / f"{signum}.sqlite3")
        app = make_app(services=services)
        async with app.run_test(size=SIZE) as pilot:
            await start_slow_run(pilot, passing=2)
            app.shutdown.signal_received(signum)  # what the handler installed on the real app's loop calls
            await wait_until(pilot, lambda app=app: not app.is_running, f"the app has exited on signal {signum}")
        with services.session.store() as store:
            newest = store.runs.list_runs()[0]
            assert newest.status == "cancelled" and store.judgments.failure_reasons(newest.id) == []


async def test_the_next_launch_offers_to_resume_and_finishes_the_run(services_factory):
    gate, make_backend = slow_backends(passing=5)
    services = services_factory(make_backend=make_backend)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await start_slow_run(pilot)
        await pilot.press("q", "enter")
        await wait_until(pilot, lambda: not app.is_running, "the app has exited")
    record, _ = only_run(services)

    gate["open"] = True
    again = make_app(services=services)
    async with again.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(again.screen, InterruptedRunDialog)
                         and bool(again.screen.query("#interrupted-text")), "the resume offer shows")
        dialog = again.screen
        assert isinstance(dialog, InterruptedRunDialog) and dialog.record.id == record.id
        text = str(dialog.query_one("#interrupted-text").render())
        assert "at 5 of 60 judgments" in text, text
        await pilot.press("enter")
        await settle(pilot)
        state = again.runs.state
        assert state is not None and state.run_id == record.id and state.status == "finished"
        assert isinstance(again.screen, RunScreen)
    with services.session.store() as store:
        finished = store.runs.get_run(record.id)
        assert (finished.status, finished.judgments, finished.failures) == ("finished", 60, 0)

    # Finished: the launch after that asks nothing.
    third = make_app(services=services)
    async with third.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not isinstance(third.screen, InterruptedRunDialog)


async def test_quitting_while_the_judge_loads_exits_without_waiting_for_the_load(services_factory):
    loading = {"started": False}

    class SlowToLoad(FakeBackend):
        async def open(self) -> None:
            loading["started"] = True
            await asyncio.Event().wait()  # a model loading for a long time

    services = services_factory(make_backend=lambda config: SlowToLoad(name=config.name))
    app = make_app(services=services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("j")
        await settle(pilot)
        judges = app.screen.query_one("#run-judges", SelectionList)
        judges.deselect_all()
        judges.select("fake")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: loading["started"], "the judge starts loading")
        await pilot.press("q", "enter")
        await wait_until(pilot, lambda: not app.is_running, "the app has exited")
    with services.session.store() as store:
        assert store.runs.list_runs() == []  # nothing was asked, so nothing is recorded as failed or running
